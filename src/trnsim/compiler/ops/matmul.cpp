// MatMul (numpy semantics: batched, broadcast batch axes, 1-D operands promoted): TensorE
// matmul kernel (lower_matmul); split across cores by 128-row output tiles, then column ranges;
// tensor-parallel as a column-parallel (weight columns split) or row-parallel (contraction
// split, partial sums all-reduced) MatMul, or along a shared batch (head) axis.
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/fuse_attention.h"
#include "trnsim/compiler/lower_matmul.h"
#include "trnsim/compiler/lower_sparse_matmul.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/tp_rules.h"
#include "trnsim/common/checked.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  Shape a = input(g, n, 0).shape, b = input(g, n, 1).shape;
  if (a.empty() || b.empty()) throw ShapeError(fmt::format("node '{}': MatMul of a scalar", n.name));
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    throw ShapeError(fmt::format("node '{}': MatMul {} x {}: inner sizes differ", n.name, shape_str(input(g, n, 0).shape), shape_str(input(g, n, 1).shape)));
  Shape s = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), n.name);
  if (!a1) s.push_back(a[a.size() - 2]);
  if (!b1) s.push_back(b.back());
  set_output(g, n, 0, s, input(g, n, 0).type);
}

int64_t work_units(const Graph& g, const Node& n) {
  Shape as = g.tensor(n.inputs[0]).shape, bs = g.tensor(n.inputs[1]).shape;
  if (as.size() < 2 || bs.size() < 2) return 1;
  const Shape& os = g.tensor(n.outputs[0]).shape;
  const int64_t m = os[os.size() - 2], cols = os.back();
  const int64_t rows = numel(os) / std::max<int64_t>(1, m * cols) * ceil_div(m, 128);
  return rows * ceil_div(cols, kMinColsPerCore);
}

// A weight pruned 4:16 by the sparsify pass runs weight-stationary on the sparse path.
void lower(LowerCtx& ctx) {
  if (ctx.n.i("sparse_4_16", 0)) lower_sparse_matmul(ctx);
  else lower_matmul(ctx);
}

int64_t tp_axis(TpCtx& c) {
  const Node& n = c.n;
  const std::string& A = n.inputs[0];
  const std::string& B = n.inputs[1];
  const auto R = static_cast<int64_t>(c.out_shape().size());
  const int64_t ra = c.rank(A), rb = c.rank(B), sa = c.sp(A), sb = c.sp(B);
  if (ra < 2 || rb < 2) return c.no_rule();
  if (sa == ra - 1 && sb < 0) {  // the contracted axis is split: row-parallel
    if (!c.g.is_const(B) || rb != 2) return c.refuse("a split contraction needs a constant 2-D weight");
    c.slices.push_back({c.ni, 1, 0});
    c.partial = true;
    return -1;
  }
  if (sb == rb - 2) return c.no_rule();  // B's contracted axis split against a whole A: not modelled
  if (sa >= 0 && sb >= 0) {
    const int64_t oa = sa + R - ra, ob = sb + R - rb;
    if (oa != ob || oa >= R - 2) return c.no_rule();  // only a shared batch (head) axis
    return oa;
  }
  const bool a_split = sa >= 0;
  const int64_t o = a_split ? sa + R - ra : sb + R - rb;
  if (o < R - 2) {  // a batch axis: the other operand's batch dims broadcast or get sliced
    const size_t other = a_split ? 1 : 0;
    const int64_t ro = a_split ? rb : ra;
    const int64_t p = o - (R - ro);
    if (p >= 0 && p < ro - 2 && !c.replicated_operand_ok(other, o, R)) return -1;
  }
  return o;
}

}  // namespace

void register_matmul(OpRegistry& r) {
  r.push_back({.kind = OpKind::MatMul, .name = "MatMul", .cls = OpClass::Compute, .min_inputs = 2, .max_inputs = 2, .attributes = {},
               .rules = {.infer = infer, .lower = lower, .fused_members = fused_attention_members,  // fused Q/K/V projections (fuse_qkv.h)
                         .parallel_units = work_units, .tp_axis = tp_axis}});
}

}  // namespace trnsim::compiler
