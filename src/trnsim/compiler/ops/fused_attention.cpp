// FusedAttention: made by the attention-fusion pass (fuse_attention.h) after shape inference,
// never imported; one attention kernel (lower_attention) split across cores by heads.
#include "trnsim/compiler/fuse_attention.h"
#include "trnsim/compiler/lower_attention.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {

void register_fused_attention(OpRegistry& r) {
  r.push_back({.kind = OpKind::FusedAttention, .name = "FusedAttention", .cls = OpClass::Compute, .min_inputs = 3, .max_inputs = 4,
               .attributes = {"batch", "dims", "q_strides", "k_strides", "v_strides", "out_strides", "mask_strides", "scale", "fused",
                              "q_offset", "k_offset", "v_offset"},
               .internal = true,
               .rules = {.infer = [](Graph&, const Node& n) { unsupported(n, "internal to the compiler"); },
                         .lower = lower_attention,
                         .fused_members = fused_attention_members,
                         .parallel_units = [](const Graph&, const Node& n) { return std::max<int64_t>(1, numel(n.ints("batch"))); }}});
}

}  // namespace trnsim::compiler
