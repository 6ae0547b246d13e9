// The on-disk cache of measured node costs: one text file per (chip spec, fingerprint of the
// compiler and simulator, logical-core size, dtype policy, cost-model version) under $XDG_CACHE_HOME/trnsim or ~/.cache/trnsim, one
// "key v1 v2 ..." line per measured shape, appended (one write(2) with O_APPEND) as soon as it is
// measured. Processes sharing the file share their measurements while they run: a miss reads the
// lines others appended since, and a shape is measured under a lock on its key in "<file>.lock",
// so that concurrent runs (a sweep's points) measure each shape once per machine. A file that
// cannot be written is a warning once (the costs are then measured again next time), never an error.
#pragma once
#include <cstdint>
#include <functional>
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
  ~CostCache();
  CostCache(const CostCache&) = delete;
  CostCache& operator=(const CostCache&) = delete;

  // The `arity` values stored under `key` (a line with another count, e.g. an older time-only
  // line, counts as a miss), else measure()'s, stored before they are returned. A miss first
  // reads what other processes appended to the file, then measures holding the key's lock
  // (re-reading once it has it: whoever held it has usually just written the values). While a
  // CostPlan records (cost_plan.h), a miss is noted there and gets placeholder values instead:
  // `measure` must own what it uses (capture by value).
  std::vector<double> get_or_measure(const std::string& key, size_t arity,
                                     const std::function<std::vector<double>()>& measure);
  // The same, but false without measuring when another measurer holds the key's lock.
  bool measure_unless_busy(const std::string& key, size_t arity, const std::function<std::vector<double>()>& measure);
  // The values last read or stored under `key` (no file access).
  std::optional<std::vector<double>> get_values(const std::string& key) const;
  void put_values(const std::string& key, const std::vector<double>& values);
  const std::string& path() const { return path_; }
  int lock_waits() const { return lock_waits_; }  // misses that found their key locked by another measurer

 private:
  std::optional<std::vector<double>> find(const std::string& key, size_t arity) const;
  std::optional<std::vector<double>> lookup(const std::string& key, size_t arity);  // memory, then the file
  // Measures under the key's lock; nullopt when it is held by another and !wait.
  std::optional<std::vector<double>> measure_once(const std::string& key, size_t arity,
                                                  const std::function<std::vector<double>()>& measure, bool wait);
  void refresh();  // reads the complete lines appended to the file since the last read
  int lock_fd();   // the lock file, opened once; -1 without one
  void make_dir();  // the cache folder, created once

  std::map<std::string, std::vector<double>> values_;
  std::string path_;  // empty: memory only
  uint64_t read_bytes_ = 0, read_inode_ = 0;
  int lock_fd_ = -2;  // -2: not opened yet
  int lock_waits_ = 0;
  bool warned_ = false, dir_made_ = false;
};

// The cache directory ($XDG_CACHE_HOME/trnsim, else $HOME/.cache/trnsim); "" if neither is set.
std::string cost_cache_dir();

}  // namespace trnsim::workloads
