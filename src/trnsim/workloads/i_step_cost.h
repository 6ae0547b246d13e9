// The cost interface that serving and training call thousands of times: the time of one
// engine iteration of a deployment (a model on a system with a parallel layout) for exactly
// the batch it runs. Implementations: the Trainium analytical model (per-node costs measured
// by the timing mode once, cached on disk, interpolated over tokens and context; llm_cost.h)
// and the GPU roofline baseline. A deployment that does not fit is a ShapeError at creation.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trnsim/common/units.h"
#include "trnsim/workloads/model_desc.h"
#include "trnsim/workloads/unit_energy.h"

namespace trnsim::workloads {

struct Deployment {
  std::string system;            // system preset or YAML path ("trn2.48xlarge", "p5.48xlarge")
  int tp = 1, pp = 1, ep = 1;    // tensor, pipeline, expert parallel degrees (ranks)
  int lnc = 0;                   // logical NeuronCore size (0: the chip's default; Trn2/3: 2)
  std::string dtype = "bf16";    // compute dtype of matmuls: bf16 | fp8
  std::string weights = "bf16";  // weight storage: bf16 | fp8 | int8
  std::string kv_dtype = "bf16";
  // Added by the llm engineer (additive): Megatron sequence parallelism for the norms and
  // residuals (tokens split over the TP ranks; all-reduce -> reduce-scatter + all-gather).
  bool sequence_parallel = false;
  // Added by dvfs (additive): DVFS operating point of the chips' engine clocks
  // (hw::at_clock_scale; HBM and links keep their rates). 1 = the published clocks.
  double clock_scale = 1.0;
};

struct PrefillChunk {
  int64_t tokens = 0;   // new prompt tokens processed in this iteration
  int64_t context = 0;  // tokens of this sequence already in the KV cache before the chunk
};

// One iteration of a continuous-batching engine: some prefill chunks and some decodes.
struct StepBatch {
  std::vector<PrefillChunk> prefills;
  std::vector<int64_t> decode_contexts;  // per decoding sequence: its KV length before the step
};

struct StepCost {
  Nanoseconds time{0};       // wall time of the iteration through all pipeline stages
  Nanoseconds matmul{0}, attention{0}, collective{0}, other{0};  // breakdown (sums to time)
  Joules energy{0};          // of the whole replica for the iteration
  // Added by energy (additive): `energy` by unit (the work's dynamic energy from the timed
  // nodes, the fabric's, static power over `time`); sums to `energy`.
  UnitEnergy energy_by_unit;
};

class IStepCost {
 public:
  virtual ~IStepCost() = default;
  virtual StepCost step(const StepBatch& batch) const = 0;
  virtual Bytes weight_bytes_per_core() const = 0;
  virtual Bytes kv_bytes_per_token_per_core() const = 0;  // one token of one sequence
  virtual Bytes hbm_bytes_per_core() const = 0;          // capacity of one (logical) core
  virtual int cores() const = 0;                          // (logical) cores of one replica
  virtual int chips() const = 0;                          // chips of one replica
  // Added by energy (additive): the replica's chips' power with no iteration running (static
  // power at the operating point), and its share of its instances' host power (CPUs, NICs,
  // fans, PSU losses: host_power_per_instance x chips / chips per instance).
  virtual Watts idle_power() const { return Watts(0); }
  virtual Watts host_power() const { return Watts(0); }
};

// The analytical model for `deployment` (Trainium systems and GPU systems alike).
std::unique_ptr<IStepCost> make_step_cost(const ModelDesc& model, const Deployment& deployment);

}  // namespace trnsim::workloads
