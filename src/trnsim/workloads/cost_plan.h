// Measuring a cold cost cache's shapes in one go, so that concurrent runs on one cache split them.
// Measured one at a time as a run asks for them, two runs that need the same shapes (a sweep's
// points) queue on each one's lock in turn and take as long as one run. A CostPlan is a pass that
// notes the misses instead (the cache returns placeholder costs for them); measure() then times
// each noted shape that no other run is timing now, and waits for the rest at the end.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace trnsim::workloads {

class CostCache;

class CostPlan {
 public:
  CostPlan();  // records this thread's cache misses until measure() or its end
  ~CostPlan();
  CostPlan(const CostPlan&) = delete;
  CostPlan& operator=(const CostPlan&) = delete;

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  void measure();  // stops recording; measures (or reads) every noted shape

  static CostPlan* recording();  // this thread's recording plan, if any
  // A miss of `cache` (which must outlive the plan); `measure` owns what it uses (no references).
  void note(CostCache& cache, const std::string& key, size_t arity, std::function<std::vector<double>()> measure);

 private:
  struct Entry {
    CostCache* cache;
    std::string key;
    size_t arity;
    std::function<std::vector<double>()> measure;
  };
  void stop();
  std::vector<Entry> entries_;
  std::set<std::pair<const CostCache*, std::string>> noted_;
  CostPlan* previous_ = nullptr;
  bool recording_ = true;
};

// The placeholder a recording pass gets for every value of a miss: positive, so no check on a
// time trips over it; the pass's result is thrown away.
inline constexpr double kPlaceholderCost = 1e-6;

}  // namespace trnsim::workloads
