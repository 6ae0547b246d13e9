#include "trnsim/compiler/lower_attention.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/kernels/attention.h"

namespace trnsim::compiler {

namespace {

kernels::AttentionOperand operand(LowerCtx& ctx, const std::string& tensor, const Shape& batch,
                                  const std::vector<int64_t>& strides, int64_t offset = 0) {
  if (strides.size() != batch.size() + 2)
    throw ShapeError(fmt::format("node '{}': FusedAttention strides {} do not match batch rank {}", ctx.n.name,
                                 strides.size(), batch.size()));
  kernels::AttentionOperand o;
  o.tensor = ctx.hbm(tensor);
  o.offset = offset;  // elements: a column range of fused projections (fuse_qkv.h)
  o.head_shape = batch;
  o.head_strides.assign(strides.begin(), strides.end() - 2);
  o.row_stride = strides[strides.size() - 2];
  o.col_stride = strides.back();
  return o;
}

}  // namespace

void lower_attention(LowerCtx& ctx) {
  const Node& n = ctx.n;
  const Shape batch = n.ints("batch");
  const auto dims = n.ints("dims");
  if (dims.size() != 3) throw ShapeError(fmt::format("node '{}': FusedAttention needs dims (seq_q, seq_k, head_dim)", n.name));
  kernels::AttentionSpec s;
  s.heads = numel(batch);
  s.seq_q = dims[0];
  s.seq_k = dims[1];
  s.head_dim = dims[2];
  s.scale = static_cast<float>(n.f("scale", 0.0));
  // TensorE operands in the policy's dtype; fp8 policy keeps attention in bf16 (P in fp8 would
  // cost far more accuracy than the unfused fp8 matmuls, whose softmax stays fp32).
  s.dtype = ctx.matmul_dtype == DType::F32 ? DType::F32 : DType::BF16;
  s.q = operand(ctx, n.inputs[0], batch, n.ints("q_strides"), n.i("q_offset", 0));
  s.k = operand(ctx, n.inputs[1], batch, n.ints("k_strides"), n.i("k_offset", 0));
  s.v = operand(ctx, n.inputs[2], batch, n.ints("v_strides"), n.i("v_offset", 0));
  if (n.inputs.size() > 3 && !n.inputs[3].empty()) s.mask = operand(ctx, n.inputs[3], batch, n.ints("mask_strides"));
  s.out = operand(ctx, n.outputs[0], batch, n.ints("out_strides"));
  // Heads are independent: each core computes a contiguous share of them.
  for_each_core_share(ctx, s.heads, [&](int64_t begin, int64_t end) {
    s.head_begin = begin;
    s.head_end = end;
    kernels::attention(ctx.kb, s);
  });
}

}  // namespace trnsim::compiler
