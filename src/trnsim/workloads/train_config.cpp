#include "trnsim/workloads/train_config.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/logical_cores.h"

namespace trnsim::workloads {
namespace {

[[noreturn]] void bad(const std::string& option, const std::string& got, const char* expected) {
  throw ConfigError(fmt::format("train: {}: expected {}, got '{}'", option, expected, got));
}

void positive(const char* option, int64_t v) {
  if (v < 1) throw ConfigError(fmt::format("train: {}: expected a positive integer, got {}", option, v));
}

}  // namespace

Recompute parse_recompute(const std::string& s) {
  if (s == "none") return Recompute::None;
  if (s == "selective") return Recompute::Selective;
  if (s == "full") return Recompute::Full;
  bad("--recompute", s, "none, selective or full");
}

PipelineSchedule parse_schedule(const std::string& s) {
  if (s == "gpipe") return PipelineSchedule::GPipe;
  if (s == "1f1b") return PipelineSchedule::OneFOneB;
  if (s == "interleaved" || s == "interleaved-1f1b") return PipelineSchedule::Interleaved;
  bad("--schedule", s, "gpipe, 1f1b or interleaved");
}

Precision parse_precision(const std::string& s) {
  if (s == "fp32-master" || s == "master") return Precision::MasterFp32;
  if (s == "bf16-sr" || s == "sr") return Precision::StochasticRounding;
  bad("--precision", s, "fp32-master or bf16-sr");
}

OptimizerKind parse_optimizer(const std::string& s) {
  if (s == "adamw") return OptimizerKind::AdamW;
  if (s == "lamb") return OptimizerKind::Lamb;
  bad("--optimizer", s, "adamw or lamb");
}

const char* name(Recompute r) {
  return r == Recompute::None ? "none" : r == Recompute::Selective ? "selective" : "full";
}
const char* name(PipelineSchedule s) {
  return s == PipelineSchedule::GPipe ? "gpipe" : s == PipelineSchedule::OneFOneB ? "1f1b" : "interleaved";
}
const char* name(Precision p) { return p == Precision::MasterFp32 ? "fp32-master" : "bf16-sr"; }
const char* name(OptimizerKind o) { return o == OptimizerKind::AdamW ? "adamw" : "lamb"; }

int logical_cores_per_chip(const hw::ChipSpec& chip, int lnc) {
  if (lnc == 0) lnc = hw::default_lnc(chip);  // Trn2/Trn3 default LNC=2 [HARDWARE.md]
  if (lnc < 1 || chip.neuron_cores % lnc != 0)
    throw ConfigError(fmt::format("train: --lnc: {} does not divide the {} NeuronCores of {}", lnc,
                                  chip.neuron_cores, chip.name));
  return chip.neuron_cores / lnc;
}

TrainLayout make_layout(const TrainConfig& c, const hw::SystemSpec& system) {
  return make_layout(c, logical_cores_per_chip(system.chip, c.lnc), system.chips, system.name, "NeuronCores");
}

TrainLayout make_layout(const TrainConfig& c, int cores_per_chip, int chips_per_node, const std::string& system,
                        const char* unit) {
  positive("--nodes", c.nodes);
  positive("--tp", c.tp);
  positive("--pp", c.pp);
  positive("--ep", c.ep);
  positive("--cp", c.cp);
  positive("--micro-batch", c.micro_batch);
  positive("--global-batch", c.global_batch);
  positive("--seq", c.seq);
  positive("--virtual-stages", c.virtual_stages);
  if (c.zero < 0 || c.zero > 3) bad("--zero", std::to_string(c.zero), "0, 1, 2 or 3");
  if (c.dtype != "bf16" && c.dtype != "fp8") bad("--dtype", c.dtype, "bf16 or fp8");
  if (c.compute_cost != "kernel" && c.compute_cost != "step-cost") bad("--compute-cost", c.compute_cost, "kernel or step-cost");
  TrainLayout l;
  l.cores_per_chip = cores_per_chip;
  l.cores_per_node = l.cores_per_chip * chips_per_node;
  l.chips = chips_per_node * c.nodes;
  l.ranks = l.cores_per_node * c.nodes;
  l.tp = c.tp, l.pp = c.pp, l.ep = c.ep, l.cp = c.cp;
  const int64_t model_ranks = int64_t(c.tp) * c.pp * c.cp;
  if (l.ranks % model_ranks != 0)
    throw ConfigError(fmt::format("train: --tp {} x --pp {} x --cp {} = {} does not divide the {} {} of "
                                  "{} x {}", c.tp, c.pp, c.cp, model_ranks, l.ranks, unit, c.nodes, system));
  l.dp = c.dp > 0 ? c.dp : int(l.ranks / model_ranks);
  if (model_ranks * l.dp != l.ranks)
    throw ConfigError(fmt::format("train: --tp {} x --pp {} x --cp {} x --dp {} = {}, but {} x {} has {} {} "
                                  "({} per chip)", c.tp, c.pp, c.cp, l.dp, model_ranks * l.dp, c.nodes, system,
                                  l.ranks, unit, l.cores_per_chip));
  if (l.dp % c.ep != 0)
    throw ConfigError(fmt::format("train: --ep {} must divide the data-parallel degree {}", c.ep, l.dp));
  if (c.global_batch % (int64_t(l.dp) * c.micro_batch) != 0)
    throw ConfigError(fmt::format("train: --global-batch {} is not a multiple of dp {} x --micro-batch {}",
                                  c.global_batch, l.dp, c.micro_batch));
  l.micro_batches = c.global_batch / (int64_t(l.dp) * c.micro_batch);
  if (c.seq % c.cp != 0)
    throw ConfigError(fmt::format("train: --seq {} is not a multiple of --cp {}", c.seq, c.cp));
  if (c.schedule == PipelineSchedule::Interleaved && c.pp > 1 && l.micro_batches % c.pp != 0)
    throw ConfigError(fmt::format("train: the interleaved schedule needs micro-batches per step ({}) to be a "
                                  "multiple of --pp {}", l.micro_batches, c.pp));
  return l;
}

}  // namespace trnsim::workloads
