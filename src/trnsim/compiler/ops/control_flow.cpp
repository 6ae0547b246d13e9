// If and Loop in the forms exporters emit, inlined during shape inference (OpRules::expand):
// an If whose condition is known at compile time becomes its taken branch; a Loop whose trip
// count (and condition) are known is unrolled, one iteration at a time, so that a condition
// the body computes is folded before the next iteration is decided. The branch or body's
// nodes then compile like any others (on the chip). A condition computed at run time is a
// one-line ConstantRequiredError naming the node (value specialisation binds it when it is a
// graph input).
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

constexpr int64_t kMaxIterations = 4096;  // unrolled: a bound on the compiled graph's size

// The boolean/number of constant input i, with a message that says why it must be constant.
double known(const Graph& g, const Node& n, size_t i, const char* what) {
  const auto& t = g.tensor(n.inputs[i]);
  if (!t.is_const())
    throw ConstantRequiredError(fmt::format("unsupported: op {} ({} '{}' is computed at run time; trnsim inlines control flow only when it "
                                            "is known at compile time: export with fixed shapes/values) at node '{}'",
                                            op_name(n.op), what, n.inputs[i], n.name),
                                {n.inputs[i]});
  if (t.data->size() != 1) throw ShapeError(fmt::format("node '{}': {} '{}' has {} values, want one", n.name, what, n.inputs[i], t.data->size()));
  return t.data->front();
}

Node identity(const std::string& name, const std::string& from, const std::string& to) {
  Node n;
  n.op = OpKind::Identity;
  n.name = name;
  n.inputs = {from};
  n.outputs = {to};
  return n;
}

std::vector<Node> expand_if(Graph& g, const Node& n) {
  const bool taken = known(g, n, 0, "condition") != 0;
  const std::string branch = taken ? "then_branch" : "else_branch";
  if (!n.has(branch)) throw ShapeError(fmt::format("node '{}': If without {}", n.name, branch));
  Subgraph s = inline_subgraph(g, n.s(branch, ""), n.name + "/" + branch + "/", {});
  if (s.outputs.size() != n.outputs.size())
    throw ShapeError(fmt::format("node '{}': {} has {} outputs, the If {}", n.name, branch, s.outputs.size(), n.outputs.size()));
  for (size_t i = 0; i < s.outputs.size(); ++i)
    if (!n.outputs[i].empty()) s.nodes.push_back(identity(n.name + ".out", s.outputs[i], n.outputs[i]));
  return s.nodes;
}

// Loop state between iterations: inputs [M, cond, carried values (N), scan outputs of the
// iterations so far (K each)]; attributes trnsim_iteration, trnsim_carried.
std::vector<Node> finish_loop(Graph& g, const Node& n, int64_t iteration, int64_t carried) {
  GraphEditor e(g);
  for (int64_t j = 0; j < carried; ++j)
    if (has_output(n, static_cast<size_t>(j))) e.nodes().push_back(identity(n.name + ".out", n.inputs[static_cast<size_t>(2 + j)], n.outputs[static_cast<size_t>(j)]));
  const int64_t scans = static_cast<int64_t>(n.outputs.size()) - carried;
  for (int64_t k = 0; k < scans; ++k) {
    const auto o = static_cast<size_t>(carried + k);
    if (!has_output(n, o)) continue;
    if (iteration == 0) unsupported(n, "a scan output of a loop that runs no iteration (its shape is unknown)");
    std::vector<std::string> parts;
    for (int64_t it = 0; it < iteration; ++it) {
      const std::string& t = n.inputs[static_cast<size_t>(2 + carried + it * scans + k)];
      Shape s = decomp::shape_of(g, t);
      s.insert(s.begin(), 1);
      parts.push_back(decomp::reshape(e, n.name + ".scan", t, s));
    }
    e.add(OpKind::Concat, n.name + ".scan", parts, {{"axis", int64_t{0}}}, n.outputs[o]);
  }
  return std::move(e.nodes());
}

std::vector<Node> expand_loop(Graph& g, const Node& n) {
  const int64_t iteration = n.i("trnsim_iteration", 0);
  const int64_t carried = n.i("trnsim_carried", static_cast<int64_t>(n.inputs.size()) - 2);
  if (carried < 0) throw ShapeError(fmt::format("node '{}': Loop needs inputs M and cond (either may be empty)", n.name));
  const bool has_trip = has_input(n, 0), has_cond = has_input(n, 1);
  const double trip = has_trip ? known(g, n, 0, "trip count") : 0;
  const bool go = has_cond ? known(g, n, 1, "loop condition") != 0 : true;
  if (!has_trip && !has_cond) unsupported(n, "a loop with neither trip count nor condition (it never ends)");
  if (!go || (has_trip && static_cast<double>(iteration) >= trip)) return finish_loop(g, n, iteration, carried);
  if (iteration >= kMaxIterations) unsupported(n, fmt::format("more than {} iterations to unroll", kMaxIterations));
  // The body's inputs: the iteration number, the condition, the carried values.
  std::vector<std::string> bind = {g.fresh(n.name + ".iteration")};
  TensorInfo it;
  it.name = bind[0];
  it.type = ElemType::Int64;
  it.shape_known = true;
  it.data = std::vector<double>{static_cast<double>(iteration)};
  g.tensors[it.name] = it;
  if (has_cond) {
    bind.push_back(n.inputs[1]);
  } else {
    TensorInfo c = it;
    c.name = g.fresh(n.name + ".cond");
    c.type = ElemType::Bool;
    c.data = std::vector<double>{1.0};
    g.tensors[c.name] = c;
    bind.push_back(c.name);
  }
  for (int64_t j = 0; j < carried; ++j) bind.push_back(n.inputs[static_cast<size_t>(2 + j)]);
  Subgraph s = inline_subgraph(g, n.s("body", ""), fmt::format("{}/{}/", n.name, iteration), bind);
  const int64_t scans = static_cast<int64_t>(n.outputs.size()) - carried;
  if (static_cast<int64_t>(s.outputs.size()) != 1 + carried + scans)
    throw ShapeError(fmt::format("node '{}': the body has {} outputs, want 1 + {} carried + {} scanned", n.name, s.outputs.size(), carried, scans));
  // The rest of the loop, decided once this iteration's condition is folded. Without a cond
  // input the body's condition is ignored (a for loop, as the ONNX spec says).
  Node next = n;
  next.inputs = {has_trip ? n.inputs[0] : std::string(), has_cond ? s.outputs[0] : std::string()};
  next.inputs.insert(next.inputs.end(), s.outputs.begin() + 1, s.outputs.begin() + 1 + carried);
  next.inputs.insert(next.inputs.end(), n.inputs.begin() + 2 + carried, n.inputs.end());
  next.inputs.insert(next.inputs.end(), s.outputs.begin() + 1 + carried, s.outputs.end());
  next.attrs["trnsim_iteration"] = iteration + 1;
  next.attrs["trnsim_carried"] = carried;
  s.nodes.push_back(std::move(next));
  return s.nodes;
}

}  // namespace

void register_control_flow(OpRegistry& r) {
  r.push_back({.kind = OpKind::If, .name = "If", .cls = OpClass::Shape, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"then_branch", "else_branch"}, .rules = {.expand = expand_if}});
  r.push_back({.kind = OpKind::Loop, .name = "Loop", .cls = OpClass::Shape, .min_inputs = 2, .max_inputs = 4096,
               .attributes = {"body"}, .rules = {.expand = expand_loop}});
}

}  // namespace trnsim::compiler
