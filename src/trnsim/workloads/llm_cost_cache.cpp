#include "trnsim/workloads/llm_cost_cache.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trnsim/compiler/lower_matmul.h"

namespace trnsim::workloads {

std::string cost_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/trnsim";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/trnsim";
  return "";
}

CostCache::CostCache(const std::string& scope, bool use_disk) {
  if (!use_disk) return;
  const std::string dir = cost_cache_dir();
  if (dir.empty()) return;
  path_ = fmt::format("{}/llm-costs-v{}-lower{}-{}.txt", dir, kCostModelVersion, compiler::kLoweringVersion, scope);
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    std::vector<double> vs;
    double v = 0;
    if (!(ls >> key)) continue;
    while (ls >> v) vs.push_back(v);
    if (!vs.empty() && ls.eof()) values_[key] = std::move(vs);  // a torn last line (a killed run) is skipped
  }
}

std::optional<double> CostCache::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second.front();
}

std::optional<std::vector<double>> CostCache::get_values(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

void CostCache::put(const std::string& key, double seconds) { put_values(key, {seconds}); }

void CostCache::put_values(const std::string& key, const std::vector<double>& values) {
  values_[key] = values;
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  std::ofstream out(path_, std::ios::app);
  std::string line = key;
  for (double v : values) line += fmt::format(" {:.17g}", v);  // round-trips: warm == cold, bit for bit
  out << line << "\n";
  if (!out && !warned_) {
    fmt::print(stderr, "trnsim: warning: cannot write the cost cache {}; costs are measured again next time\n", path_);
    warned_ = true;
  }
}

}  // namespace trnsim::workloads
