#include "trnsim/cli/python_handoff.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "trnsim/common/error.h"

namespace trnsim::cli {
namespace fs = std::filesystem;

namespace {
std::string& program_path() {
  static std::string p;
  return p;
}

bool executable(const fs::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

// The directory this command was started from, as typed: argv[0]'s own directory, or the PATH
// entry that holds it. Not canonicalised: .venv/bin/trnsim is a link into build/.
fs::path invoked_dir() {
  const std::string& a0 = program_path();
  if (a0.empty()) return {};
  if (a0.find('/') != std::string::npos) return fs::path(a0).parent_path();
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  for (std::string entry; std::getline(ss, entry, ':');) {
    const fs::path dir(entry.empty() ? "." : entry);  // an empty PATH entry is the current directory
    if (executable(dir / a0)) return dir;
  }
  return {};
}
}  // namespace

void set_program_path(const std::string& argv0) { program_path() = argv0; }

std::string find_python() {
  if (const char* env = std::getenv("TRNSIM_PYTHON"); env && *env) return env;
  const fs::path dir = invoked_dir();
  for (const char* name : {"python3", "python"})
    if (!dir.empty() && executable(dir / name)) return (dir / name).string();
#ifdef TRNSIM_CONFIGURED_PYTHON
  if (executable(TRNSIM_CONFIGURED_PYTHON)) return TRNSIM_CONFIGURED_PYTHON;
#endif
  return "python3";
}

void exec_python_module(const std::vector<std::string>& args) {
  const std::string python = find_python();
  std::vector<std::string> all{python, "-m", "trnsim"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : all) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::fflush(nullptr);
  ::execvp(python.c_str(), argv.data());
  throw Error(fmt::format("cannot start Python '{}' for `python -m trnsim`: {}; set TRNSIM_PYTHON to an interpreter "
                          "that imports trnsim (and onnxruntime for --check)", python, std::strerror(errno)));
}

}  // namespace trnsim::cli
