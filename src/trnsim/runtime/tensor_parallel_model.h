// A model run tensor-parallel on `tp` logical NeuronCores of a system (one rank per logical
// core of `lnc` physical cores, as Neuron places them: TP 32 on a trn1.32xlarge is 32 cores of
// 16 chips, TP 64 on a trn2.48xlarge its 64 logical cores): the IR (front passes only, never
// lowered whole) split by compiler::shard_tensor_parallel, each rank's shard lowered and run
// with the single-chip runtime (LoadedModel, one per compute step), and each all-reduce of
// partial sums (and the vocabulary-parallel LM head's all-gather) done on the simulated fabric
// (collectives::CollectiveRunner, the chip's logical cores as ranks, auto algorithm), in the element size the
// activation is held in (compiler::activation_bytes).
//
// Time: two resources, the compute stream (the shard's kernels, in the plan's order) and the
// collective stream (the collectives, in issue order). A kernel starts when the stream is free
// and every all-reduce whose result it reads is done; a collective starts when its input is
// written and the previous collective is done. So an all-reduce overlaps the kernels that do
// not depend on it (the compiler pass moves those ahead). Ranks have identical shapes and
// programs, so rank 0's kernel times stand for every rank.
// Functional mode computes every rank's real numbers; the all-reduce sums the ranks' partials
// with the collective's own (deterministic) schedule (fp16/bf16 activations: the partials and
// the sum rounded to that type).
#pragma once
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/tensor_parallel.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/runtime/loaded_model.h"

namespace trnsim::collectives {
class CollectiveRunner;
}

namespace trnsim::runtime {

struct TpOp {
  std::string node, op;
  std::vector<std::string> fused;
  double start_s = 0, time_s = 0;
};

// One collective on the collective stream: an all-reduce (the summed tensor, after its
// row-parallel MatMul) or an all-gather (a vocabulary-parallel output, after its MatMul).
struct TpAllReduceTime {
  std::string tensor, node;
  std::string op = "all-reduce";  // "all-reduce" | "all-gather"
  std::string dtype = "fp32";     // as the activation is held in HBM (compiler::activation_bytes)
  int64_t bytes = 0;              // all-reduce: one rank's buffer; all-gather: the gathered tensor
  double start_s = 0, time_s = 0;
  std::string algorithm;
};

struct TpReport {
  std::string system, chip, mode, dtype;
  int tp = 1;
  int lnc = 1;                              // physical NeuronCores per rank (logical core)
  int chips = 1;                            // chips the tp ranks occupy
  double time_s = 0;                        // end of the last kernel or all-reduce
  double compute_time_s = 0;                // sum of rank 0's kernel times
  double communication_time_s = 0;          // sum of the all-reduce and all-gather times
  double exposed_communication_time_s = 0;  // time the compute stream waited for all-reduces
  double communication_share = 0;           // communication_time_s / time_s
  double exposed_communication_share = 0;   // exposed_communication_time_s / time_s
  double compile_time_s = 0, sim_wall_s = 0;
  std::vector<TpOp> ops;                    // rank 0's kernels, execution order
  std::vector<TpAllReduceTime> all_reduces;
  std::vector<TpAllReduceTime> all_gathers;  // vocabulary-parallel outputs
  std::vector<std::string> column_parallel, row_parallel, vocab_parallel, notes;
  std::vector<TimelineEvent> timeline;       // rank 0's instructions (when asked), plan time
  // Energy of all tp chips: rank 0's kernels' dynamic energy x tp (the ranks run the same
  // shapes), the collectives' link and HBM energy, and tp chips' static power over time_s.
  // Empty when the chip has no energy model.
  std::map<std::string, double> energy_by_unit_j;
  double energy_j = 0;
  double peak_power_w = 0;  // tp x rank 0's highest kernel power (collectives' power not binned)
};

struct TpRunOutput {
  std::map<std::string, std::vector<float>> outputs;  // functional: rank 0's graph outputs
  TpReport report;
};

struct TpOptions {
  int tp = 2;
  int lnc = 0;             // logical NeuronCore size, one rank per logical core (0: the chip's default)
  compiler::CompileOptions compile;  // compile.cores: 0 (a rank's kernels use its logical core)
  bool all_ranks = true;   // false: build rank 0 only (enough for timing mode)
  std::string algorithm;   // "" / "auto": the collective's fastest applicable
};

class TensorParallelModel {
 public:
  // Compiles `g` for the system's chip and splits it; ConfigError when tp exceeds the
  // system's logical cores.
  TensorParallelModel(compiler::Graph g, const hw::SystemSpec& system, const TpOptions& options);
  ~TensorParallelModel();
  TensorParallelModel(const TensorParallelModel&) = delete;
  TensorParallelModel& operator=(const TensorParallelModel&) = delete;

  // `timeline`: keep rank 0's instructions (TpReport::timeline) for write_tp_trace.
  TpRunOutput run(const std::map<std::string, std::vector<float>>& inputs, core::Mode mode, bool timeline = false);
  const compiler::TensorParallelPlan& plan() const { return plan_; }
  // The model's inputs, outputs and their shapes (and the graph's tensors for them); the whole
  // model is never lowered, so this holds no segments.
  const compiler::CompiledModel& single_chip() const { return full_; }

 private:
  struct Stage;  // one compute step of one rank, as a model of its own
  hw::SystemSpec system_;
  TpOptions opt_;
  int lnc_ = 1, ranks_per_chip_ = 1, chips_ = 1;
  compiler::CompiledModel full_;
  compiler::TensorParallelPlan plan_;
  std::vector<std::vector<std::unique_ptr<Stage>>> stages_;  // [rank][compute step]
  collectives::CollectiveRunner& runner(const compiler::TpCollective& c);
  std::map<std::pair<int, int>, std::unique_ptr<collectives::CollectiveRunner>> runners_;  // (kind, elem bytes)
  struct CollMemo {
    double time_s = 0;
    std::string algorithm;
    std::map<std::string, double> energy_j;  // CollectiveResult::energy_by_unit_j without "static"
  };
  std::map<std::tuple<int, int, int64_t>, CollMemo> coll_time_;  // (kind, elem bytes, bytes) -> cost
  double compile_time_s_ = 0;
};

nlohmann::json tp_report_json(const TpReport& r);
std::string tp_report_table(const TpReport& r, size_t top_ops = 20);
// Perfetto / Chrome trace: rank 0's engines and DMA queues (one process per NeuronCore, as
// write_timeline_trace for one chip), a "rank 0 kernels" track (one slice per kernel) and a
// "collectives" track (one slice per all-reduce / all-gather), so the overlap is visible.
void write_tp_trace(std::ostream& out, const TpReport& r);

}  // namespace trnsim::runtime
