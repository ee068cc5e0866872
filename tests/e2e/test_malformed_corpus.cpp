// The malformed-input corpus (tests/malformed/*.case, format in tests/malformed/README.md): every case is bad
// input that must end in exactly one located error line and exit code 2 — no crash, no hang, no internal error,
// no exception text, no message wrapped in another — and no output left behind. One test runs them all, two at
// a time, through the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>

#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;

struct Case {
  fs::path source;
  std::string command;            // after "monet ", run in the case's folder
  std::vector<std::string> expect;  // fragments of the error line, in order
  std::vector<std::pair<std::string, std::string>> files;  // name, content
};

std::string substitute(std::string text) {
  const std::string key = "{src}";
  for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos)) {
    text.replace(pos, key.size(), MONET_SOURCE_DIR);
  }
  return text;
}

/// "--- name" starts a file; "--- name < path [bytes N]" copies a repository file (its first N bytes).
Case parse_case(const fs::path& file) {
  Case c;
  c.source = file;
  std::istringstream in(test::read_file(file));
  std::string line;
  std::string* current = nullptr;
  while (std::getline(in, line)) {
    if (line.rfind("--- ", 0) == 0) {
      std::string spec = line.substr(4);
      const auto lt = spec.find(" < ");
      if (lt == std::string::npos) {
        c.files.emplace_back(spec, "");
        current = &c.files.back().second;
        continue;
      }
      std::string from = spec.substr(lt + 3);
      std::size_t limit = std::string::npos;
      if (const auto b = from.find(" bytes "); b != std::string::npos) {
        limit = std::stoul(from.substr(b + 7));
        from = from.substr(0, b);
      }
      c.files.emplace_back(spec.substr(0, lt), test::read_file(fs::path(MONET_SOURCE_DIR) / from).substr(0, limit));
      current = nullptr;
    } else if (current) {
      *current += substitute(line) + "\n";
    } else if (line.rfind("command: ", 0) == 0) {
      c.command = substitute(line.substr(9));
    } else if (line.rfind("expect: ", 0) == 0) {
      c.expect.push_back(substitute(line.substr(8)));
    }
  }
  return c;
}

/// "" when the case behaves, else what went wrong.
std::string run_case(const Case& c) {
  if (c.command.empty() || c.expect.empty()) return "no 'command:' or 'expect:' line";
  test::ScratchDir dir;
  for (const auto& [name, content] : c.files) (void)dir.write(name, content);
  const auto r = test::run_command("cd " + test::q(dir.path()) + " && '" + MONET_CLI + "' " + c.command);
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  std::string problem;
  if (r.exit_code != 2) problem = "exit code " + std::to_string(r.exit_code) + " (expected 2)";
  else if (out.find('\n') != std::string::npos) problem = "more than one line";
  else if (out.find("internal error") != std::string::npos) problem = "an internal error";
  else if (out.find("error: ") != out.rfind("error: ")) problem = "'error: ' twice (a message wrapped in another)";
  std::size_t at = 0;
  for (const std::string& e : c.expect) {
    const auto pos = out.find(e, at);
    if (pos == std::string::npos) {
      problem += (problem.empty() ? "" : "; ") + std::string("missing '") + e + "'";
      break;
    }
    at = pos + e.size();
  }
  // Nothing half-written: the only files are the case's own (an output folder would be new).
  std::size_t entries = 0;
  for (const auto& f : fs::recursive_directory_iterator(dir.path())) entries += f.is_regular_file() ? 1 : 0;
  if (entries != c.files.size()) problem += (problem.empty() ? "" : "; ") + std::string("left files behind");
  return problem.empty() ? "" : problem + "\n    monet " + c.command + "\n    got: " + r.out;
}

TEST(MalformedInput, EveryCorpusCaseIsOneLocatedErrorWithExitCode2) {
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(fs::path(MONET_SOURCE_DIR) / "tests" / "malformed")) {
    if (f.path().extension() == ".case") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 60u);
  std::vector<std::string> problems(files.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) problems[i] = run_case(parse_case(files[i]));
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_TRUE(problems[i].empty()) << files[i].filename().string() << ": " << problems[i];
  }
}

}  // namespace
}  // namespace monet
