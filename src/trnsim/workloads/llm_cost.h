// The Trainium analytical step cost (i_step_cost.h): one engine iteration of a deployment as
// the nodes of each layer's graph on one TP rank (QKV / MLA projections, RoPE, attention with
// the KV cache, O projection, TP all-reduce, RMSNorms, SwiGLU FFN or MoE routing with expert
// matmuls and EP all-to-all, LM head and its all-gather), each node's time from NodeCosts
// (timing-mode measurements, interpolated) and CollectiveCosts (the fabric), summed over the
// layers of every pipeline stage with the stage-to-stage sends.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/llm_collective_cost.h"
#include "trnsim/workloads/llm_layout.h"
#include "trnsim/workloads/llm_node_cost.h"

namespace trnsim::workloads {

enum class CostCategory : uint8_t { Matmul, Attention, Collective, Other };

// One node of a layer's graph on one rank, with its time (for the breakdown and the trace).
struct CostNode {
  std::string name;
  CostCategory category;
  double seconds = 0;
  int64_t repeat = 1;  // layers of this kind in the step
  // Added by energy: dynamic energy of one repetition on every rank that runs it (a compute
  // node's measured energy x the TP ranks; a collective's fabric energy for all its groups).
  UnitEnergy energy;
};

struct StepCostOptions {
  bool use_disk_cache = true;
  bool interpolate = true;  // false: the timing mode itself, every node at its exact shape
};

class TrainiumStepCost : public IStepCost {
 public:
  TrainiumStepCost(const ModelDesc& model, const Deployment& deployment, StepCostOptions options = {});
  ~TrainiumStepCost() override;

  StepCost step(const StepBatch& batch) const override;
  Bytes weight_bytes_per_core() const override;
  Bytes kv_bytes_per_token_per_core() const override;
  Bytes hbm_bytes_per_core() const override;
  int cores() const override;
  int chips() const override;
  Watts idle_power() const override;  // chips x static power at the operating point
  Watts host_power() const override;

  // The nodes of one step (every layer kind once, with its repeat count), for trace and tests.
  std::vector<CostNode> nodes(const StepBatch& batch) const;
  // Activation bytes per core of the largest step of `batch` (the prefill's hidden states).
  Bytes activation_bytes_per_core(const StepBatch& batch) const;
  const Layout& layout() const { return layout_; }
  const hw::SystemSpec& system() const { return system_; }
  const ModelDesc& model() const { return model_; }
  NodeCosts& node_costs() const { return *nodes_; }

 private:
  void layer_nodes(const StepBatch& b, int64_t layer, int64_t repeat, std::vector<CostNode>& out) const;
  void attention_nodes(const StepBatch& b, int64_t layer, int64_t m, std::vector<CostNode>& out) const;
  void ffn_nodes(int64_t layer, int64_t m, std::vector<CostNode>& out) const;
  void tp_reduction(int64_t m, const char* after, std::vector<CostNode>& out) const;
  // A node of measured cost `c` on one rank, run by every TP rank / a collective of `groups` groups.
  CostNode compute_node(std::string name, CostCategory category, const NodeCost& c) const;
  CostNode fabric_node(std::string name, const NodeCost& c, double groups = 1) const;

  ModelDesc model_;
  Deployment deployment_;
  hw::SystemSpec system_;
  Layout layout_;
  std::unique_ptr<NodeCosts> nodes_;
  // Weight matmuls when weights are stored in 1 byte (int8/fp8) under bf16 compute: timed with
  // 1-byte operands, so the weight stream moves the bytes it moves on chip (null: use nodes_).
  std::unique_ptr<NodeCosts> weight_nodes_;
  NodeCosts& weight_matmuls() const { return weight_nodes_ ? *weight_nodes_ : *nodes_; }
  std::unique_ptr<CollectiveCosts> collectives_;
};

// For a system whose chip is not a Trainium / Inferentia chip: UnsupportedError (the GPU
// baseline is make_gpu_step_cost, wired in by the lead).
bool is_trainium_system(const hw::SystemSpec& system);

}  // namespace trnsim::workloads
