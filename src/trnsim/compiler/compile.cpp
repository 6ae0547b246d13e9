#include "trnsim/compiler/compile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "trnsim/common/error.h"
#include "trnsim/compiler/lower_context.h"
#include "trnsim/compiler/pass_runner.h"

namespace trnsim::compiler {

DTypePolicy parse_policy(const std::string& s) {
  if (s == "fp32") return DTypePolicy::FP32;
  if (s == "bf16") return DTypePolicy::BF16;
  if (s == "fp8") return DTypePolicy::FP8;
  throw UnsupportedError(fmt::format("unsupported: dtype policy '{}' (expected fp32, bf16 or fp8)", s));
}

std::string_view policy_name(DTypePolicy p) {
  switch (p) {
    case DTypePolicy::FP32: return "fp32";
    case DTypePolicy::BF16: return "bf16";
    case DTypePolicy::FP8: return "fp8";
  }
  return "?";
}

std::string CompiledModel::dump_ir() const {
  std::string s;
  for (const auto& p : passes) s += fmt::format("=== after pass '{}' ({:.3f} ms)\n{}", p.name, p.seconds * 1e3, p.ir);
  return s;
}

namespace {

DType matmul_dtype(DTypePolicy p, const hw::ChipSpec& chip) {
  DType t = p == DTypePolicy::FP32 ? DType::F32 : p == DTypePolicy::BF16 ? DType::BF16 : DType::F8E4M3;
  if (!chip.supports(t))
    throw UnsupportedError(fmt::format("unsupported: dtype policy {} on {} (its TensorE has no {})", policy_name(p), chip.name, numerics::name(t)));
  return t;
}

}  // namespace

Segment lower_node(const Graph& g, const Node& n, const hw::ChipSpec& chip, DTypePolicy policy, int64_t instructions_before) {
  const OpRules& rules = op_rules(n.op);
  Segment s;
  s.node = n.name;
  s.op = std::string(op_name(n.op));
  if (rules.fused_members) s.fused = rules.fused_members(n);
  for (const auto& e : n.epilogue)  // a LayerNorm fuses as three steps of one node
    if (std::find(s.fused.begin(), s.fused.end(), e.fused_node) == s.fused.end()) s.fused.push_back(e.fused_node);
  if (rules.lower_alias) {
    s.kind = Segment::Kind::Alias;
    s.reads = {n.inputs[0]};
    s.writes = {n.outputs[0]};
    s.alias_of = n.inputs[0];
    return s;
  }
  if (!rules.lower) {
    if (op_info(n.op).cls == OpClass::Shape)
      throw ConstantRequiredError(fmt::format("unsupported: op {} (its inputs must be constant) at node '{}'", s.op, n.name), n.inputs);
    throw UnsupportedError(fmt::format("unsupported: op {} (no lowering) at node '{}'", s.op, n.name));
  }
  const int cores = static_cast<int>(std::clamp<int64_t>(n.i("cores", 1), 1, chip.neuron_cores));
  KernelBuilder kb(chip, kernels::BuilderOptions{.cores = cores, .dma_queues = 16, .instructions_before = instructions_before});
  kb.set_name(n.name);
  LowerCtx ctx(kb, g, n, matmul_dtype(policy, chip));
  ctx.cores = cores;
  try {
    ctx.hold_resident();
    rules.lower(ctx);
  } catch (const UnsupportedError&) {
    throw;
  } catch (const Error& e) {
    // A kernel-builder limit hit while lowering: name the node and op it came from.
    throw ShapeError(fmt::format("node '{}' ({}): {}", n.name, s.op, e.what()));
  }
  // Every output must be declared even if the kernel wrote nothing (empty tensors).
  for (const auto& o : n.outputs)
    if (!o.empty()) ctx.hbm(o);
  s.reads = ctx.reads;
  s.writes = ctx.writes;
  s.sbuf_peak_bytes = kb.sbuf_peak_bytes_per_partition();
  s.program = kb.build();
  return s;
}

CompiledModel compile(Graph g, const hw::ChipSpec& chip, const CompileOptions& opt) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  CompiledModel cm;
  cm.chip = chip.name;
  cm.policy = opt.policy;
  matmul_dtype(opt.policy, chip);  // reject an impossible policy before any work
  check_quantize_options(opt.quant, chip, opt.policy);
  for (const auto& w : quantize_warnings(opt.quant, chip)) fmt::print(stderr, "trnsim: warning: {}\n", w);
  PassState st{g, opt, &chip, &cm};
  run_passes(st, {"bind-inputs"}, &cm.passes);
  std::vector<std::string_view> rest(front_passes().begin() + 1, front_passes().end());
  try {
    run_passes(st, rest, &cm.passes);
    // After the last constant folding, which would fold the weights back.
    if (opt.quant.sparse_4_16) run_passes(st, {"sparsify"}, &cm.passes);
    if (opt.quant.format != QuantFormat::None) run_passes(st, {"quantize"}, &cm.passes);
    if (opt.cores < 0 || opt.cores > chip.neuron_cores)
      throw ConfigError(fmt::format("--cores {}: {} has {} NeuronCores", opt.cores, chip.name, chip.neuron_cores));
    st.cores = opt.cores == 0 ? chip.neuron_cores : opt.cores;
    std::vector<std::string_view> back;
    if (opt.fuse) back = {"attention-fusion", "gelu-fusion", "fusion"};
    if (opt.fuse && opt.fuse_qkv) back.push_back("qkv-fusion");
    if (opt.fuse) back.push_back("elementwise-fusion");
    back.push_back("dead-code");
    if (opt.fuse && opt.norm_prologue) back.push_back("norm-prologue");
    for (auto p : {"core-split", "operand-storage", "sbuf-placement", "sbuf-residency", "memory-planning", "lowering"}) back.push_back(p);
    run_passes(st, back, &cm.passes);
  } catch (const ShapeError& e) {
    // A model whose free axes cannot be 1 (a pooling window over a 1 x 1 image) fails with
    // a shape error far from its cause: say which axes were guessed and how to give them.
    if (st.defaulted.empty()) throw;
    throw ShapeError(fmt::format("{} (symbolic input axes were set to 1: {}; give their sizes with --dim NAME=SIZE "
                                 "or --dim INPUT[AXIS]=SIZE, or real inputs with --inputs file.npz)", e.what(), fmt::join(st.defaulted, ", ")));
  }
  // A graph output that is a constant or an input is copied by the runtime (no kernel).
  cm.inputs = g.inputs;
  cm.outputs = g.outputs;
  for (const auto& n : cm.inputs) cm.shapes[n] = g.tensor(n).shape;
  for (const auto& n : cm.outputs) cm.shapes[n] = g.tensor(n).shape;
  cm.graph = std::move(g);
  cm.compile_time_s = std::chrono::duration<double>(clock::now() - t0).count();
  return cm;
}

}  // namespace trnsim::compiler
