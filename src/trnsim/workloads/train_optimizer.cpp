#include "trnsim/workloads/train_optimizer.h"

#include <algorithm>

#include "trnsim/workloads/train_memory.h"

namespace trnsim::workloads {

double hbm_gbps_per_core(const hw::ChipSpec& chip, int cores_per_chip) {
  return chip.hbm.bandwidth.value() / cores_per_chip;
}

double optimizer_hbm_bytes_per_param(const TrainConfig& c) {
  const double g = grad_bytes_per_param(c);
  const bool master = c.precision == Precision::MasterFp32;
  // Read the gradient twice (norm for clipping, then the update); read and write both fp32
  // moments; read and write the master copy and write the bf16 weights (master), or read and
  // write the bf16 weights (stochastic rounding). Lamb: the update, written and read back.
  return 2 * g + 16 + (master ? 8 + 2 : 4) + (c.optimizer == OptimizerKind::Lamb ? 8 : 0);
}

OptimizerCost optimizer_cost(const TrainConfig& c, const hw::ChipSpec& chip, int cores_per_chip, double params) {
  OptimizerCost o;
  o.hbm_bytes_per_param = optimizer_hbm_bytes_per_param(c);
  // AdamW: clip scale, m and v updates (5), sqrt, eps, divide, weight decay (2), learning rate,
  // add, cast/round: 13 elementwise ops. Lamb adds the two norms and the trust ratio (4).
  o.vector_ops_per_param = 13 + (c.optimizer == OptimizerKind::Lamb ? 4 : 0);
  const auto& v = chip.core.vector;
  // fp32 tensor_tensor costs 2N cycles per partition [HARDWARE.md], on 128 lanes.
  const double elems_per_ns = v.clock.value() * v.elems_per_cycle_other / 2.0;
  const double hbm_ns = params * o.hbm_bytes_per_param / hbm_gbps_per_core(chip, cores_per_chip);
  const double chip_cores = double(chip.neuron_cores) / cores_per_chip;  // physical cores of a logical one
  const double vector_ns = params * o.vector_ops_per_param / (elems_per_ns * chip_cores);
  o.time_ns = std::max(hbm_ns, vector_ns);
  return o;
}

}  // namespace trnsim::workloads
