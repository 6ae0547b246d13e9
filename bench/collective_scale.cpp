// Simulator speed at scale (issue 5, item 5): a collective on a 144-chip Trn3 UltraServer must
// simulate in seconds; a flow-level hierarchical all-reduce across 16,384 chips (256 Trn2
// UltraServers joined by EFA) within a minute. Each benchmark reports the simulated time of
// its collective as a counter, so a speed-up that changed the answer would show.
//
// Why it is fast and still exact: schedules are generated a step at a time; a step's duration
// depends only on its (src, dst, bytes, reduce) list because the network is idle between steps,
// so each distinct step is simulated once (schedule_timer.h); symmetric flows drain at the same
// integer picosecond and are handled as one event (flow_network.h).
#include <benchmark/benchmark.h>

#include "trnsim/collectives/collective.h"
#include "trnsim/hw/spec_loader.h"

using namespace trnsim;
using namespace trnsim::collectives;

namespace {

void run(benchmark::State& state, const char* system, int systems, Op op, const char* algorithm,
         std::vector<int64_t> sizes) {
  const hw::SystemSpec sys = hw::load_system(system);
  CollectiveOptions o;
  o.op = op;
  o.ranks_per_chip = 1;
  o.systems = systems;
  o.algorithm = algorithm;
  double simulated = 0;
  int ranks = 0;
  for (auto _ : state) {
    CollectiveRunner runner(sys, o);  // fresh: no step results carried between iterations
    ranks = runner.fabric().ranks();
    simulated = 0;
    for (int64_t s : sizes) simulated += runner.time(s).time_s;
  }
  state.counters["ranks"] = ranks;
  state.counters["sizes"] = static_cast<double>(sizes.size());
  state.counters["simulated_s"] = simulated;
}

std::vector<int64_t> sweep(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t s = lo; s <= hi; s *= 2) v.push_back(s);
  return v;
}

// 144 chips, NeuronSwitch: the full nccom-style sweep 1 KiB .. 1 GiB, every candidate algorithm
// timed at every size for the automatic choice.
void BM_AllReduce144ChipsAutoSweep(benchmark::State& s) {
  run(s, "trn3-ultraserver-gen2", 1, Op::AllReduce, "auto", sweep(1024, int64_t(1) << 30));
}
void BM_AllToAll144Chips1GiB(benchmark::State& s) {
  run(s, "trn3-ultraserver-gen2", 1, Op::AllToAll, "direct", {int64_t(144) << 23});
}
void BM_RingAllReduce144Chips1GiB(benchmark::State& s) {
  run(s, "trn3-ultraserver-gen2", 1, Op::AllReduce, "ring", {int64_t(1) << 30});
}
// 16,384 chips: 256 Trn2 UltraServers (4x4x4 torus each) joined by EFA.
void BM_Hierarchical16384Chips1GiB(benchmark::State& s) {
  run(s, "trn2-ultraserver", 256, Op::AllReduce, "hierarchical", {int64_t(1) << 30});
}
void BM_Auto16384Chips1MiBand1GiB(benchmark::State& s) {
  run(s, "trn2-ultraserver", 256, Op::AllReduce, "auto", {int64_t(1) << 20, int64_t(1) << 30});
}
// The worst case: a flat ring over all 16,384 chips, 32,766 steps of 16,384 flows (5.4e8
// transfers generated and keyed, 2 distinct steps simulated).
void BM_FlatRing16384Chips1GiB(benchmark::State& s) {
  run(s, "trn2-ultraserver", 256, Op::AllReduce, "ring", {int64_t(1) << 30});
}

}  // namespace

BENCHMARK(BM_AllReduce144ChipsAutoSweep)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AllToAll144Chips1GiB)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_RingAllReduce144Chips1GiB)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Hierarchical16384Chips1GiB)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Auto16384Chips1MiBand1GiB)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_FlatRing16384Chips1GiB)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
