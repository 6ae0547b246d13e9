#include "trnsim/compiler/ir.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "trnsim/common/error.h"
#include "trnsim/common/checked.h"

namespace trnsim::compiler {

int64_t numel(const Shape& s) {
  // checked: a crafted shape is a "shape too large" error, not a wrapped count; the message is
  // built only on overflow (built per dim, it made numel quadratic in the rank: fuzz round 7)
  int64_t n = 1;
  for (auto d : s)
    if (__builtin_mul_overflow(n, d, &n)) throw_too_large("shape " + shape_str(s));
  return n;
}

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

int64_t Node::i(const std::string& a, int64_t def) const {
  auto it = attrs.find(a);
  if (it == attrs.end()) return def;
  if (auto p = std::get_if<int64_t>(&it->second)) return *p;
  if (auto p = std::get_if<double>(&it->second)) {
    // a float attribute read as an integer: NaN, inf or past int64 has no value (UB; fuzz)
    if (!(*p >= -9.2e18 && *p <= 9.2e18)) throw ShapeError(fmt::format("node '{}': attribute {} = {} is not an integer", name, a, *p));
    return static_cast<int64_t>(*p);
  }
  throw Error(fmt::format("node '{}': attribute {} is not an integer", name, a));
}

double Node::f(const std::string& a, double def) const {
  auto it = attrs.find(a);
  if (it == attrs.end()) return def;
  if (auto p = std::get_if<double>(&it->second)) return *p;
  if (auto p = std::get_if<int64_t>(&it->second)) return static_cast<double>(*p);
  throw Error(fmt::format("node '{}': attribute {} is not a number", name, a));
}

std::string Node::s(const std::string& a, const std::string& def) const {
  auto it = attrs.find(a);
  if (it == attrs.end()) return def;
  if (auto p = std::get_if<std::string>(&it->second)) return *p;
  throw Error(fmt::format("node '{}': attribute {} is not a string", name, a));
}

std::vector<int64_t> Node::ints(const std::string& a, std::vector<int64_t> def) const {
  auto it = attrs.find(a);
  if (it == attrs.end()) return def;
  if (auto p = std::get_if<std::vector<int64_t>>(&it->second)) return *p;
  if (auto p = std::get_if<int64_t>(&it->second)) return {*p};
  throw Error(fmt::format("node '{}': attribute {} is not a list of integers", name, a));
}

TensorInfo& Graph::tensor(const std::string& n) {
  auto it = tensors.find(n);
  if (it == tensors.end()) throw Error(fmt::format("graph '{}': no tensor named '{}'", name, n));
  return it->second;
}

const TensorInfo& Graph::tensor(const std::string& n) const {
  auto it = tensors.find(n);
  if (it == tensors.end()) throw Error(fmt::format("graph '{}': no tensor named '{}'", name, n));
  return it->second;
}

bool Graph::is_const(const std::string& n) const {
  auto it = tensors.find(n);
  return it != tensors.end() && it->second.is_const();
}

std::string Graph::fresh(const std::string& base) {
  std::string n;
  do n = fmt::format("{}__{}", base, counter++);
  while (tensors.count(n));
  return n;
}

void Graph::erase_nodes(const std::vector<bool>& gone) {
  size_t k = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i < gone.size() && gone[i]) continue;
    if (k != i) nodes[k] = std::move(nodes[i]);  // not onto itself: a self-moved vector empties
    ++k;
  }
  nodes.resize(k);
}

std::map<std::string, size_t> Graph::producers() const {
  std::map<std::string, size_t> p;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs) p[o] = i;
  return p;
}

std::map<std::string, std::vector<size_t>> Graph::consumers() const {
  std::map<std::string, std::vector<size_t>> c;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& in : nodes[i].inputs)
      if (!in.empty()) c[in].push_back(i);
    for (const auto& e : nodes[i].epilogue)
      if (!e.operand.empty()) c[e.operand].push_back(i);
  }
  return c;
}

void check(const Graph& g, const std::string& pass, bool shapes_required) {
  auto fail = [&](const std::string& what) {
    throw Error(fmt::format("IR check after pass '{}': {}", pass, what));
  };
  std::set<std::string> defined;
  for (const auto& in : g.inputs) {
    if (!g.tensors.count(in)) fail("graph input '" + in + "' has no tensor");
    defined.insert(in);
  }
  for (const auto& [n, t] : g.tensors)
    if (t.is_const()) {
      if (t.shape_known && static_cast<int64_t>(t.data->size()) != numel(t.shape))
        fail(fmt::format("constant '{}' has {} values for shape {}", n, t.data->size(), shape_str(t.shape)));
      defined.insert(n);
    }
  auto need = [&](const Node& nd, const std::string& in) {
    if (in.empty()) return;
    if (!defined.count(in)) fail(fmt::format("node '{}' ({}) reads '{}' before it is produced", nd.name, op_name(nd.op), in));
  };
  for (const auto& nd : g.nodes) {
    const auto& info = op_info(nd.op);
    int n = static_cast<int>(nd.inputs.size());
    if (n < info.min_inputs || n > info.max_inputs)
      fail(fmt::format("node '{}' ({}) has {} inputs, expected {}..{}", nd.name, info.name, n, info.min_inputs, info.max_inputs));
    for (const auto& in : nd.inputs) need(nd, in);
    for (const auto& e : nd.epilogue) need(nd, e.operand);
    for (const auto& out : nd.outputs) {
      if (out.empty()) continue;
      if (defined.count(out)) fail(fmt::format("tensor '{}' is produced twice (node '{}')", out, nd.name));
      if (!g.tensors.count(out)) fail(fmt::format("node '{}' output '{}' has no tensor", nd.name, out));
      if (shapes_required && !g.tensor(out).shape_known) fail(fmt::format("tensor '{}' has no shape", out));
      defined.insert(out);
    }
  }
  for (const auto& o : g.outputs)
    if (!defined.count(o)) fail("graph output '" + o + "' is never produced");
}

namespace {
std::string attr_str(const AttrValue& v) {
  struct V {
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const { return fmt::format("{:g}", x); }
    std::string operator()(const std::string& x) const { return "\"" + x + "\""; }
    std::string operator()(const std::vector<int64_t>& x) const { return fmt::format("[{}]", fmt::join(x, ",")); }
    std::string operator()(const std::vector<double>& x) const { return fmt::format("[{}]", fmt::join(x, ",")); }
    std::string operator()(const TensorInfo& t) const { return fmt::format("tensor{}", shape_str(t.shape)); }
  };
  return std::visit(V{}, v);
}

std::string tensor_str(const Graph& g, const std::string& n) {
  auto it = g.tensors.find(n);
  if (it == g.tensors.end()) return "%" + n;
  const auto& t = it->second;
  return fmt::format("%{}:{}{}{}", n, elem_name(t.type), t.shape_known ? shape_str(t.shape) : "[?]",
                     t.is_const() ? "=const" : "");
}
}  // namespace

std::string dump(const Graph& g) {
  std::string s = fmt::format("graph {} (opset {})\n", g.name, g.opset);
  for (const auto& in : g.inputs) s += "  input " + tensor_str(g, in) + "\n";
  for (const auto& nd : g.nodes) {
    std::vector<std::string> outs, ins, attrs;
    for (const auto& o : nd.outputs) outs.push_back(tensor_str(g, o));
    for (const auto& i : nd.inputs) ins.push_back(i.empty() ? "_" : "%" + i);
    for (const auto& [k, v] : nd.attrs) attrs.push_back(k + "=" + attr_str(v));
    s += fmt::format("  {} = {}({})", fmt::join(outs, ", "), op_name(nd.op), fmt::join(ins, ", "));
    if (!attrs.empty()) s += fmt::format(" {{{}}}", fmt::join(attrs, ", "));
    for (const auto& e : nd.epilogue)
      s += fmt::format(" +{}({})", op_name(e.op), e.operand.empty() ? "" : "%" + e.operand);
    s += "   # " + nd.name + "\n";
  }
  for (const auto& o : g.outputs) s += "  output " + tensor_str(g, o) + "\n";
  return s;
}

}  // namespace trnsim::compiler
