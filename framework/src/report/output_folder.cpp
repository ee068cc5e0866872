#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "monet/report/report.hpp"

namespace monet {

namespace fs = std::filesystem;

namespace {
/// Leftovers of runs that were killed while writing (their process is gone).
void remove_stale_temporaries(const fs::path& parent, const std::string& name) {
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) return;
  const std::string prefix = "." + name + ".tmp-";
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string n = entry.path().filename().string();
    if (n.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = n.substr(prefix.size(), n.find('-', prefix.size()) - prefix.size());
    const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0) fs::remove_all(entry.path(), ec);
  }
}
}  // namespace

void write_file_atomically(const fs::path& file_in, const std::string& content) {
  const fs::path file = fs::absolute(file_in).lexically_normal();
  std::error_code ec;
  if (fs::is_directory(file, ec)) throw UserError(SourceLocation{file.string()}, "is a folder, expected a file name");
  fs::create_directories(file.parent_path(), ec);
  const fs::path tmp = file.parent_path() / ("." + file.filename().string() + ".tmp-" + std::to_string(getpid()));
  {
    std::ofstream out(tmp, std::ios::binary);
    out << content;
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      throw UserError(SourceLocation{file.string()}, "cannot write the file");
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw UserError(SourceLocation{file.string()}, "cannot write the file: " + why);
  }
}

namespace {
fs::path folder_path(const fs::path& dir_in) {
  const fs::path dir = fs::absolute(dir_in).lexically_normal();
  return dir.has_filename() ? dir : dir.parent_path();
}
}  // namespace

void check_output_folder(const fs::path& dir, bool overwrite) {
  const fs::path target = folder_path(dir);
  std::error_code ec;
  if (fs::exists(target, ec) && !overwrite) {
    throw UserError(SourceLocation{target.string()}, "output folder exists and [output] overwrite = false");
  }
  if (fs::exists(target, ec) && !fs::is_directory(target, ec)) {
    throw UserError(SourceLocation{target.string()}, "output path exists and is not a folder");
  }
  // The folder is created next to it: the nearest existing ancestor must be a folder we may write in.
  fs::path ancestor = target.parent_path();
  while (!fs::exists(ancestor, ec) && ancestor.has_relative_path()) ancestor = ancestor.parent_path();
  if (!fs::is_directory(ancestor, ec)) {
    throw UserError(SourceLocation{ancestor.string()}, "is not a folder: cannot create the output folder " + target.string());
  }
  if (access(ancestor.c_str(), W_OK | X_OK) != 0) {
    throw UserError(SourceLocation{ancestor.string()}, "cannot create the output folder here: no write permission");
  }
}

void write_folder_atomically(const fs::path& dir_in, bool overwrite,
                             const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path target = folder_path(dir_in);
  const fs::path parent = target.parent_path();
  const std::string name = target.filename().string();
  std::error_code ec;
  check_output_folder(target, overwrite);
  fs::create_directories(parent, ec);
  if (ec) throw UserError(SourceLocation{parent.string()}, "cannot create the output folder: " + ec.message());
  remove_stale_temporaries(parent, name);

  std::random_device rd;
  const fs::path tmp = parent / ("." + name + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(rd() % 1000000));
  try {
    fs::create_directory(tmp);
    for (const auto& [file, content] : files) {
      fs::create_directories((tmp / file).parent_path());  // "best/results.json"
      std::ofstream out(tmp / file, std::ios::binary);
      out << content;
      out.close();
      if (!out) throw UserError(SourceLocation{(tmp / file).string()}, "cannot write (disk full?)");
    }
    if (fs::exists(target)) {
      const fs::path old = parent / ("." + name + ".old-" + std::to_string(getpid()));
      fs::rename(target, old);
      fs::rename(tmp, target);
      fs::remove_all(old, ec);
    } else {
      fs::rename(tmp, target);
    }
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw UserError(SourceLocation{target.string()}, std::string("cannot write the output folder: ") + e.what());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace monet
