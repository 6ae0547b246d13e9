// GatherND(data, indices [..., k], batch_dims b): each index row picks a slice of data. On
// the chip the rows become flat positions into data viewed as [prod(shape[:b+k]), rest...]
// (negative indices wrapped, times constant strides, summed; the batch offset added), then one
// Gather on axis 0 (the indirect-DMA lookup). Positions are exact in fp32 below 2^24.
#include "trnsim/compiler/lower_matmul.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

struct Dims {
  int64_t b, k;
  Shape data, idx;
};

Dims dims(const Graph& g, const Node& n) {
  Dims d{n.i("batch_dims", 0), 0, input(g, n, 0).shape, input(g, n, 1).shape};
  if (d.idx.empty()) throw ShapeError(fmt::format("node '{}': GatherND indices must have rank >= 1", n.name));
  d.k = d.idx.back();
  const auto r = static_cast<int64_t>(d.data.size()), q = static_cast<int64_t>(d.idx.size());
  if (d.b < 0 || d.b >= std::min(r, q) || d.k < 1 || d.b + d.k > r)
    throw ShapeError(fmt::format("node '{}': GatherND indices {} with batch_dims {} do not fit data {}", n.name, shape_str(d.idx), d.b, shape_str(d.data)));
  for (int64_t i = 0; i < d.b; ++i)
    if (d.data[static_cast<size_t>(i)] != d.idx[static_cast<size_t>(i)])
      throw ShapeError(fmt::format("node '{}': GatherND batch axis {} is {} in data, {} in indices", n.name, i, d.data[static_cast<size_t>(i)], d.idx[static_cast<size_t>(i)]));
  return d;
}

void infer(Graph& g, const Node& n) {
  const Dims d = dims(g, n);
  Shape s(d.idx.begin(), d.idx.end() - 1);
  s.insert(s.end(), d.data.begin() + d.b + d.k, d.data.end());
  set_output(g, n, 0, s, input(g, n, 0).type);
}

// Per index row: the flat row of data viewed as [prod(data[:b+k]), rest].
std::vector<int64_t> rows(const Node& n, const Dims& d, const ConstData& idx) {
  const int64_t nrows = numel(d.idx) / d.k, per_batch = nrows / std::max<int64_t>(1, numel(Shape(d.idx.begin(), d.idx.begin() + d.b)));
  std::vector<int64_t> out;
  for (int64_t r = 0; r < nrows; ++r) {
    int64_t flat = r / std::max<int64_t>(per_batch, 1);
    for (int64_t j = 0; j < d.k; ++j) {
      const int64_t dim = d.data[static_cast<size_t>(d.b + j)];
      auto v = static_cast<int64_t>(idx[static_cast<size_t>(r * d.k + j)]);
      if (v < 0) v += dim;
      if (v < 0 || v >= dim) throw ShapeError(fmt::format("node '{}': GatherND index {} out of range {}", n.name, idx[static_cast<size_t>(r * d.k + j)], dim));
      flat = flat * dim + v;
    }
    out.push_back(flat);
  }
  return out;
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Dims d = dims(g, n);
  const int64_t inner = numel(Shape(d.data.begin() + d.b + d.k, d.data.end()));
  const auto& x = data(g, n.inputs[0]);
  size_t at = 0;
  for (int64_t row : rows(n, d, data(g, n.inputs[1])))
    for (int64_t i = 0; i < inner; ++i) r[at++] = x[static_cast<size_t>(row * inner + i)];
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Dims d = dims(g, n);
  if (numel(shape_of(g, n.outputs[0])) == 0) {
    g.tensor(n.outputs[0]).data = std::vector<double>{};
    return true;
  }
  const ElemType it = g.tensor(n.inputs[1]).type;
  const auto q = static_cast<int64_t>(d.idx.size());
  const Shape indexed(d.data.begin() + d.b, d.data.begin() + d.b + d.k);
  const int64_t st = numel(indexed);
  std::string flat = flat_positions(e, n.name + ".flat", n.inputs[1], indexed);
  if (d.b > 0) {  // the batch offset: flat batch position times the rows per batch element
    Shape bs(d.idx.begin(), d.idx.begin() + d.b);
    const int64_t nb = numel(bs);
    bs.resize(static_cast<size_t>(q - 1), 1);
    std::vector<double> off(static_cast<size_t>(nb));
    for (int64_t i = 0; i < nb; ++i) off[static_cast<size_t>(i)] = static_cast<double>(i * st);
    flat = e.add(OpKind::Add, n.name + ".batch", {flat, e.constant(n.name + ".batch_offset", bs, off, it)});
  }
  Shape view = {numel(Shape(d.data.begin(), d.data.begin() + d.b + d.k))};
  view.insert(view.end(), d.data.begin() + d.b + d.k, d.data.end());
  std::string table = reshape(e, n.name + ".table", n.inputs[0], view);
  finish(e, n, e.add(OpKind::Gather, n.name, {table, flat}, {{"axis", int64_t{0}}}));
  return true;
}

}  // namespace

void register_gather_nd(OpRegistry& r) {
  r.push_back({.kind = OpKind::GatherND, .name = "GatherND", .cls = OpClass::Movement, .min_inputs = 2, .max_inputs = 2,
               .attributes = {"batch_dims"}, .rules = {.infer = infer, .eval = eval, .decompose = decompose}});
}

}  // namespace trnsim::compiler
