#pragma once
// The subcommands of the monet CLI. Each returns the process exit code; user errors are thrown as
// monet::UserError and turned into exit code 2 by main().
#include <string>
#include <vector>

namespace monet::cli {

struct RunOptions {
  std::string experiment;
  std::string out;  // "" = [output] dir
  std::vector<std::string> sets;
  int threads = 0;  // 0 = all cores
};
int run_command(const RunOptions& options);

int validate_command(const std::string& file);

struct PluginsOptions {
  std::string describe;  // plugin name, "" = list all
  std::string kind;      // restrict to one kind
};
int plugins_command(const PluginsOptions& options);

}  // namespace monet::cli
