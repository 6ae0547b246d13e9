#include "trnsim/compiler/compile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/decompose.h"
#include "trnsim/compiler/fuse_attention.h"
#include "trnsim/compiler/fuse_gelu.h"
#include "trnsim/compiler/fusion.h"
#include "trnsim/compiler/lower_attention.h"
#include "trnsim/compiler/lower_context.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/lower_matmul.h"
#include "trnsim/compiler/lower_norm.h"
#include "trnsim/compiler/memory_plan.h"
#include "trnsim/compiler/sbuf_placement.h"
#include "trnsim/compiler/shape_inference.h"

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

Segment lower_node(const Graph& g, const Node& n, const hw::ChipSpec& chip, DTypePolicy policy) {
  Segment s;
  s.node = n.name;
  s.op = std::string(op_name(n.op));
  if (n.op == OpKind::FusedAttention) s.fused = fused_attention_members(n);
  for (const auto& e : n.epilogue) s.fused.push_back(e.fused_node);
  if (n.op == OpKind::Reshape) {
    s.kind = Segment::Kind::Alias;
    s.reads = {n.inputs[0]};
    s.writes = {n.outputs[0]};
    s.alias_of = n.inputs[0];
    return s;
  }
  const int cores = static_cast<int>(std::clamp<int64_t>(n.i("cores", 1), 1, chip.neuron_cores));
  KernelBuilder kb(chip, kernels::BuilderOptions{.cores = cores, .dma_queues = 16});
  kb.set_name(n.name);
  LowerCtx ctx(kb, g, n, matmul_dtype(policy, chip));
  ctx.cores = cores;
  try {
    switch (op_info(n.op).cls) {
      case OpClass::Binary:
      case OpClass::Unary: lower_elementwise(ctx); break;
      case OpClass::Movement:
        if (n.op == OpKind::Gather) lower_gather(ctx);
        else lower_movement(ctx);
        break;
      case OpClass::Compute:
        if (n.op == OpKind::MatMul) lower_matmul(ctx);
        else if (n.op == OpKind::Softmax) lower_softmax(ctx);
        else if (n.op == OpKind::LayerNormalization) lower_layernorm(ctx);
        else if (n.op == OpKind::FusedAttention) lower_attention(ctx);
        else if (n.op == OpKind::ReduceSum || n.op == OpKind::ReduceMean || n.op == OpKind::ReduceMax || n.op == OpKind::ReduceMin) lower_reduce(ctx);
        else throw UnsupportedError(fmt::format("unsupported: op {} (no lowering) at node '{}'", s.op, n.name));
        break;
      case OpClass::Shape:
        throw ConstantRequiredError(fmt::format("unsupported: op {} (its inputs must be constant) at node '{}'", s.op, n.name),
                                    n.inputs);
    }
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
  auto run = [&](const std::string& name, bool shapes, auto&& fn) {
    const auto s = clock::now();
    fn();
    check(g, name, shapes);
    PassRecord r{name, std::chrono::duration<double>(clock::now() - s).count(), ""};
    if (opt.keep_ir) r.ir = dump(g);
    cm.passes.push_back(std::move(r));
  };
  std::vector<std::string> defaulted;
  run("bind-inputs", false, [&] { defaulted = bind_inputs(g, opt.input_shapes, opt.dims, opt.batch); });
  auto passes = [&] {
    run("shape-inference", true, [&] { infer_shapes(g); });
    run("constant-folding", true, [&] { fold_constants(g); eliminate_dead_code(g); });
    run("decomposition", true, [&] { decompose(g); });
    run("constant-folding", true, [&] { fold_constants(g); eliminate_dead_code(g); });
    if (opt.cores < 0 || opt.cores > chip.neuron_cores)
      throw ConfigError(fmt::format("--cores {}: {} has {} NeuronCores", opt.cores, chip.name, chip.neuron_cores));
    const int cores = opt.cores == 0 ? chip.neuron_cores : opt.cores;
    if (opt.fuse) run("attention-fusion", true, [&] { fuse_attention(g); });
    if (opt.fuse) run("gelu-fusion", true, [&] { fuse_gelu(g); });
    if (opt.fuse) run("fusion", true, [&] { fuse_epilogues(g); });
    run("dead-code", true, [&] { eliminate_dead_code(g); });
    run("core-split", true, [&] { split_across_cores(g, cores); });
    run("sbuf-placement", true, [&] { place_sbuf_halves(g); });
    run("memory-planning", true, [&] { cm.hbm = plan_hbm(g, chip); });
    run("lowering", true, [&] {
      for (const auto& n : g.nodes) cm.segments.push_back(lower_node(g, n, chip, opt.policy));
    });
  };
  try {
    passes();
  } catch (const ShapeError& e) {
    // A model whose free axes cannot be 1 (a pooling window over a 1 x 1 image) fails with
    // a shape error far from its cause: say which axes were guessed and how to give them.
    if (defaulted.empty()) throw;
    throw ShapeError(fmt::format("{} (symbolic input axes were set to 1: {}; give their sizes with --dim NAME=SIZE "
                                 "or --dim INPUT[AXIS]=SIZE, or real inputs with --inputs file.npz)", e.what(), fmt::join(defaulted, ", ")));
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
