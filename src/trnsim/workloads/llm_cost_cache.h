// The on-disk cache of measured node costs: one text file per (chip spec, fingerprint of the
// compiler and simulator, logical-core size, dtype policy, cost-model version) under $XDG_CACHE_HOME/trnsim or ~/.cache/trnsim, one
// "key seconds" line per measured shape, appended as measurements are made. A file that cannot
// be written is a warning once (the costs are then measured again next time), never an error.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trnsim::workloads {

inline constexpr int kCostModelVersion = 6;  // 3: attention reads K transposed; 4: in-program all-reduce size classes; 5: attention final division and Q^T copy on ScalarE; 6: cross-chip collective step floor

class CostCache {
 public:
  // `scope` names what the costs depend on besides the key (chip hash, cores, policy).
  CostCache(const std::string& scope, bool use_disk);
  std::optional<double> get(const std::string& key) const;
  void put(const std::string& key, double seconds);
  // Added by energy: a line of several values "key seconds v1 v2 ..." (a measured time and its
  // energy by unit); get() reads the first. Lines written with fewer values return fewer.
  std::optional<std::vector<double>> get_values(const std::string& key) const;
  void put_values(const std::string& key, const std::vector<double>& values);
  const std::string& path() const { return path_; }

 private:
  std::map<std::string, std::vector<double>> values_;
  std::string path_;  // empty: memory only
  bool warned_ = false;
};

// The cache directory ($XDG_CACHE_HOME/trnsim, else $HOME/.cache/trnsim); "" if neither is set.
std::string cost_cache_dir();

}  // namespace trnsim::workloads
