#include "trnsim/workloads/cost_plan.h"

#include "trnsim/workloads/llm_cost_cache.h"

namespace trnsim::workloads {

namespace {
thread_local CostPlan* t_recording = nullptr;
}

CostPlan::CostPlan() : previous_(t_recording) { t_recording = this; }

CostPlan::~CostPlan() { stop(); }

void CostPlan::stop() {
  if (!recording_) return;
  recording_ = false;
  t_recording = previous_;
}

CostPlan* CostPlan::recording() { return t_recording; }

void CostPlan::note(CostCache& cache, const std::string& key, size_t arity, std::function<std::vector<double>()> measure) {
  if (noted_.emplace(&cache, key).second) entries_.push_back({&cache, key, arity, std::move(measure)});
}

void CostPlan::measure() {
  stop();
  // First the shapes nobody else is timing (another run takes the ones this one skips), then
  // the skipped ones, by now mostly written by the other runs.
  std::vector<const Entry*> busy;
  for (const auto& e : entries_)
    if (!e.cache->measure_unless_busy(e.key, e.arity, e.measure)) busy.push_back(&e);
  for (const Entry* e : busy) e->cache->get_or_measure(e->key, e->arity, e->measure);
}

}  // namespace trnsim::workloads
