#pragma once
// What the fuzz targets share: the input as a file in a scratch folder (monet's readers take paths; relative
// references of the seeds resolve through links to the repository's folders), and the rule under test: bad input
// is a monet::UserError, nothing else. Any other exception (an internal error) aborts, as a crash does.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "monet/util/error.hpp"

namespace monet::fuzz {

namespace fs = std::filesystem;

/// A scratch folder for this process, with `links` (name, repository path) inside it.
inline fs::path scratch(std::initializer_list<std::pair<const char*, const char*>> links) {
  static fs::path dir = [&] {
    std::string tmpl = (fs::temp_directory_path() / "monet-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    const fs::path d = tmpl;
    for (const auto& [name, target] : links) {
      fs::create_directories((d / name).parent_path());
      fs::create_directory_symlink(fs::path(MONET_SOURCE_DIR) / target, d / name);
    }
    spdlog::set_level(spdlog::level::off);  // warnings about the input are not findings
    return d;
  }();
  return dir;
}

inline fs::path write(const fs::path& file, const std::uint8_t* data, std::size_t size) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

/// Runs one reader on the input: a UserError is the expected answer to bad input; anything else is a finding.
template <class F>
void expect_user_error_only(const char* what, F&& read) {
  try {
    read();
  } catch (const UserError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: not a UserError: %s\n", what, e.what());
    std::abort();
  }
}

}  // namespace monet::fuzz
