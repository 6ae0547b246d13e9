// DepthToSpace and SpaceToDepth (DCR and CRD modes) on [N, C, H, W]: each a Reshape to rank 6,
// a Transpose and a Reshape back, as the ONNX definitions state them.
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using K = OpKind;

struct Plan {
  Shape inner, out;             // the rank-6 view and the result
  std::vector<int64_t> perm;    // the Transpose between them
};

Plan plan(const Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const int64_t bs = n.i("blocksize", 0);
  if (x.size() != 4) throw ShapeError(fmt::format("node '{}': {} needs a rank-4 [N, C, H, W] input", n.name, op_info(n.op).name));
  if (bs <= 0) throw ShapeError(fmt::format("node '{}': blocksize must be positive, got {}", n.name, bs));
  const int64_t b = x[0], c = x[1], h = x[2], w = x[3];
  const std::string mode = n.s("mode", "DCR");  // SpaceToDepth has it from opset 28
  if (mode != "DCR" && mode != "CRD")
    throw UnsupportedError(fmt::format("unsupported: op {} (attribute mode = {}) at node '{}'", op_info(n.op).name, mode, n.name));
  if (n.op == K::DepthToSpace) {
    if (c % (bs * bs)) throw ShapeError(fmt::format("node '{}': channels {} not divisible by blocksize^2 = {}", n.name, c, bs * bs));
    const Shape out{b, c / (bs * bs), h * bs, w * bs};
    if (mode == "DCR") return {{b, bs, bs, c / (bs * bs), h, w}, out, {0, 3, 4, 1, 5, 2}};
    return {{b, c / (bs * bs), bs, bs, h, w}, out, {0, 1, 4, 2, 5, 3}};
  }
  if (h % bs || w % bs) throw ShapeError(fmt::format("node '{}': H {} and W {} must be divisible by blocksize {}", n.name, h, w, bs));
  const Shape out{b, c * bs * bs, h / bs, w / bs};
  if (mode == "DCR") return {{b, c, h / bs, bs, w / bs, bs}, out, {0, 3, 5, 1, 2, 4}};
  return {{b, c, h / bs, bs, w / bs, bs}, out, {0, 1, 3, 5, 2, 4}};
}

void infer(Graph& g, const Node& n) { set_output(g, n, 0, plan(g, n).out, input(g, n, 0).type); }

bool decompose(GraphEditor& e, const Node& n) {
  const Plan p = plan(e.graph(), n);
  std::string y = e.add(K::Reshape, n.name, {n.inputs[0], e.ints("shape", p.inner)});
  y = e.add(K::Transpose, n.name, {y}, {{"perm", p.perm}});
  y = e.add(K::Reshape, n.name, {y, e.ints("shape", p.out)});
  decomp::finish(e, n, y);
  return true;
}

OpInfo row(OpKind k, std::string_view name, std::vector<std::string_view> attrs) {
  return {.kind = k, .name = name, .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 1, .attributes = std::move(attrs),
          .rules = {.infer = infer, .decompose = decompose}};
}

}  // namespace

void register_depth_space(OpRegistry& r) {
  r.push_back(row(K::DepthToSpace, "DepthToSpace", {"blocksize", "mode"}));
  r.push_back(row(K::SpaceToDepth, "SpaceToDepth", {"blocksize", "mode"}));
}

}  // namespace trnsim::compiler
