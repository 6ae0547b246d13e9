#include "trnsim/compiler/fold_batchnorm.h"

#include <cmath>
#include <set>

namespace trnsim::compiler {
namespace {

bool loaded_const(const Graph& g, const std::string& n, size_t count) {
  return !n.empty() && g.is_const(n) && g.tensor(n).data->loaded() && g.tensor(n).data->size() == count;
}

// Folds node bn into the Conv producing its input; false (graph untouched) when the pattern
// does not hold.
bool fold(Graph& g, size_t bi, const std::map<std::string, std::vector<size_t>>& cons, const std::set<std::string>& outputs) {
  const Node& bn = g.nodes[bi];
  if (bn.op != OpKind::BatchNormalization || bn.i("training_mode", 0) != 0 || bn.inputs.size() < 5) return false;
  for (size_t o = 1; o < bn.outputs.size(); ++o)
    if (!bn.outputs[o].empty()) return false;
  const std::string& x = bn.inputs[0];
  auto use = cons.find(x);
  if (use == cons.end() || use->second.size() != 1 || outputs.count(x)) return false;
  size_t ci = g.nodes.size();
  for (size_t i = 0; i < bi; ++i)
    if (g.nodes[i].op == OpKind::Conv && g.nodes[i].outputs[0] == x) ci = i;
  if (ci == g.nodes.size()) return false;
  Node& conv = g.nodes[ci];
  const std::string wn = conv.inputs[1];
  const std::string bname = conv.inputs.size() > 2 ? conv.inputs[2] : "";
  if (!g.is_const(wn) || g.tensor(wn).shape.empty()) return false;
  const TensorInfo& w = g.tensor(wn);
  const int64_t m = w.shape[0];
  const size_t M = static_cast<size_t>(m);
  for (size_t i = 1; i < 5; ++i)
    if (!loaded_const(g, bn.inputs[i], M)) return false;
  if (!bname.empty() && !loaded_const(g, bname, M)) return false;
  const double eps = bn.f("epsilon", 1e-5);
  const auto sc = g.tensor(bn.inputs[1]).data->values(), bb = g.tensor(bn.inputs[2]).data->values();
  const auto mean = g.tensor(bn.inputs[3]).data->values(), var = g.tensor(bn.inputs[4]).data->values();
  const std::vector<double> b0 = bname.empty() ? std::vector<double>(M, 0.0) : g.tensor(bname).data->values();
  std::vector<double> s(M), bias(M);
  // fp32 values round to fp32, as the folded model's initialisers would be.
  auto round = [&](double v) { return w.type == ElemType::Float ? static_cast<double>(static_cast<float>(v)) : v; };
  for (size_t c = 0; c < M; ++c) {
    s[c] = sc[c] / std::sqrt(var[c] + eps);
    bias[c] = static_cast<double>(static_cast<float>(b0[c] * s[c] + bb[c] - mean[c] * s[c]));
  }
  TensorInfo w2{g.fresh(wn + ".bn"), w.type, w.shape, true, {}, ConstData::shape_only(w.type, numel(w.shape))};
  if (w.data->loaded()) {
    std::vector<double> v = w.data->values();
    const size_t per = v.size() / M;  // elements of one output channel's filter
    for (size_t i = 0; i < v.size(); ++i) v[i] = round(v[i] * s[i / per]);
    w2.data = ConstData::packed(w.type, std::move(v));
  }
  TensorInfo b2{g.fresh(conv.name + ".bn_bias"), ElemType::Float, {m}, true, {}, ConstData(std::move(bias))};
  conv.inputs.resize(3);
  conv.inputs[1] = w2.name;
  conv.inputs[2] = b2.name;
  g.tensors[w2.name] = std::move(w2);
  g.tensors[b2.name] = std::move(b2);
  g.tensors.erase(x);
  conv.outputs[0] = bn.outputs[0];
  g.nodes.erase(g.nodes.begin() + static_cast<long>(bi));
  return true;
}

}  // namespace

void fold_batchnorm(Graph& g) {
  bool changed = true;
  while (changed) {
    changed = false;
    const auto cons = g.consumers();
    const std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
    for (size_t i = 0; i < g.nodes.size() && !changed; ++i) changed = fold(g, i, cons, outputs);
  }
}

}  // namespace trnsim::compiler
