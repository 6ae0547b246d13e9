#include "trnsim/compiler/pass_runner.h"

#include <fmt/format.h>

#include <chrono>

#include "trnsim/common/error.h"
#include "trnsim/common/progress.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/decompose.h"
#include "trnsim/compiler/fold_batchnorm.h"
#include "trnsim/compiler/fuse_attention.h"
#include "trnsim/compiler/fuse_elementwise.h"
#include "trnsim/compiler/fuse_gelu.h"
#include "trnsim/compiler/fuse_norm_prologue.h"
#include "trnsim/compiler/fusion.h"
#include "trnsim/compiler/memory_plan.h"
#include "trnsim/compiler/operand_storage.h"
#include "trnsim/compiler/quantize.h"
#include "trnsim/compiler/fuse_qkv.h"
#include "trnsim/compiler/sbuf_placement.h"
#include "trnsim/compiler/sbuf_residency.h"
#include "trnsim/compiler/shape_inference.h"

namespace trnsim::compiler {

const std::vector<Pass>& compiler_passes() {
  static const std::vector<Pass> p = {
      {"bind-inputs", false, [](PassState& s) { s.defaulted = bind_inputs(s.g, s.opt.input_shapes, s.opt.dims, s.opt.batch); }},
      {"shape-inference", true, [](PassState& s) { infer_shapes(s.g); }},
      {"constant-folding", true, [](PassState& s) { fold_constants(s.g, !s.opt.timing_only); eliminate_dead_code(s.g); }},
      {"batchnorm-folding", true, [](PassState& s) { if (s.opt.fuse) fold_batchnorm(s.g); }},
      {"decomposition", true, [](PassState& s) { decompose(s.g); }},
      {"sparsify", true, [](PassState& s) { sparsify_graph(s.g); }},
      {"quantize", true, [](PassState& s) { quantize_graph(s.g, s.opt.quant, mx_on_chip(s.opt.quant, *s.chip)); }},
      {"attention-fusion", true, [](PassState& s) { fuse_attention(s.g); }},
      {"gelu-fusion", true, [](PassState& s) { fuse_gelu(s.g); }},
      {"fusion", true, [](PassState& s) { fuse_epilogues(s.g); }},
      {"qkv-fusion", true, [](PassState& s) { fuse_qkv(s.g); }},
      {"elementwise-fusion", true, [](PassState& s) { fuse_elementwise(s.g); }},
      {"dead-code", true, [](PassState& s) { eliminate_dead_code(s.g); }},
      {"norm-prologue", true, [](PassState& s) { fuse_norm_prologues(s.g); }},
      {"core-split", true, [](PassState& s) { split_across_cores(s.g, s.cores); }},
      {"operand-storage", true, [](PassState& s) {
         if (s.opt.policy == DTypePolicy::BF16) store_operands_narrow(s.g, ElemType::BFloat16);
       }},
      {"sbuf-placement", true, [](PassState& s) { place_sbuf_halves(s.g); }},
      {"sbuf-residency", true, [](PassState& s) {
         if (s.opt.resident_activations) plan_sbuf_residency(s.g, *s.chip, s.opt.policy, &s.lowered);
       }},
      {"memory-planning", true, [](PassState& s) { s.model->hbm = plan_hbm(s.g, *s.chip); }},
      {"lowering", true, [](PassState& s) {
         const auto total = static_cast<int64_t>(s.g.nodes.size());
         int64_t held = 0;  // instructions of the programs built so far: one budget for the model
         for (size_t i = 0; i < s.g.nodes.size(); ++i) {
           auto ahead = s.lowered.find(i);
           s.model->segments.push_back(ahead != s.lowered.end() ? std::move(ahead->second) : lower_node(s.g, s.g.nodes[i], *s.chip, s.opt.policy, held));
           held += static_cast<int64_t>(s.model->segments.back().program.instruction_count());
           progress::report("lower nodes", static_cast<int64_t>(s.model->segments.size()), total);
         }
       }},
  };
  return p;
}

const std::vector<std::string_view>& front_passes() {
  static const std::vector<std::string_view> f = {"bind-inputs", "shape-inference", "constant-folding", "batchnorm-folding", "decomposition", "constant-folding"};
  return f;
}

void run_passes(PassState& s, const std::vector<std::string_view>& names, std::vector<PassRecord>* records) {
  using clock = std::chrono::steady_clock;
  for (auto name : names) {
    const Pass* pass = nullptr;
    for (const auto& p : compiler_passes())
      if (p.name == name) pass = &p;
    if (!pass) throw Error(fmt::format("compiler: no pass named '{}'", name));
    const auto t0 = clock::now();
    pass->run(s);
    check(s.g, std::string(name), pass->shapes_required);
    if (!records) continue;
    PassRecord r{std::string(name), std::chrono::duration<double>(clock::now() - t0).count(), ""};
    if (s.opt.keep_ir) r.ir = dump(s.g);
    records->push_back(std::move(r));
  }
}

}  // namespace trnsim::compiler
