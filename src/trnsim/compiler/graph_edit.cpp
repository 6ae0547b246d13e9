#include "trnsim/compiler/graph_edit.h"

#include <fmt/format.h>

#include "trnsim/compiler/shape_inference.h"

namespace trnsim::compiler {

std::string GraphEditor::constant(const std::string& base, Shape shape, std::vector<double> values, ElemType t) {
  TensorInfo ti;
  ti.name = g_.fresh(base);
  ti.type = t;
  ti.shape = std::move(shape);
  ti.shape_known = true;
  ti.data = std::move(values);
  std::string n = ti.name;
  g_.tensors[n] = std::move(ti);
  return n;
}

std::string GraphEditor::ints(const std::string& base, const std::vector<int64_t>& v) {
  return constant(base, {static_cast<int64_t>(v.size())}, std::vector<double>(v.begin(), v.end()), ElemType::Int64);
}

std::string GraphEditor::add(OpKind op, const std::string& name, std::vector<std::string> inputs,
                             std::map<std::string, AttrValue> attrs, std::string out) {
  Node n;
  n.op = op;
  const int k = repeats_[name]++;
  n.name = k == 0 ? name : fmt::format("{}#{}", name, k);
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  if (out.empty()) {
    out = g_.fresh(name);
    TensorInfo t;
    t.name = out;
    g_.tensors[out] = t;
  }
  n.outputs = {out};
  infer_node(g_, n);
  out_.push_back(std::move(n));
  return out;
}

}  // namespace trnsim::compiler
