#include "trnsim/compiler/shape_inference.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include <algorithm>
#include <deque>
#include <iterator>

#include "trnsim/common/error.h"
#include "trnsim/compiler/host_eval.h"

namespace trnsim::compiler {
namespace {

constexpr int64_t kFoldLimit = 1 << 16;  // elements: shape sub-graphs, not weights

// A --dim that no symbolic input axis takes (a typo) would be silently ignored: refuse it,
// naming the axes the model has. Checked against the model, not against what `shapes` overrides.
void check_dim_names(const Graph& g, const std::map<std::string, int64_t>& dims) {
  std::set<std::string> known;
  for (const auto& name : g.inputs) {
    const auto& t = g.tensor(name);
    for (size_t i = 0; i < t.dim_params.size() && i < t.shape.size(); ++i)
      if (!t.dim_params[i].empty()) known.insert({t.dim_params[i], fmt::format("{}[{}]", name, i)});
  }
  for (const auto& [d, size] : dims)
    if (!known.count(d))
      throw ConfigError(fmt::format("--dim {}={}: the model has no symbolic input axis '{}'; its symbolic axes: {}", d,
                                    size, d, known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
}

}  // namespace

std::vector<std::string> bind_inputs(Graph& g, const std::map<std::string, Shape>& shapes,
                                     const std::map<std::string, int64_t>& dims, int64_t batch) {
  check_dim_names(g, dims);
  std::vector<std::string> defaulted;
  bool batch_bound = false;  // some input's symbolic first axis took `batch`
  for (const auto& name : g.inputs) {
    auto& t = g.tensor(name);
    if (t.dim_params.size() != t.shape.size()) t.dim_params.assign(t.shape.size(), "");
    if (auto it = shapes.find(name); it != shapes.end()) {
      const Shape& s = it->second;
      if (s.size() != t.shape.size())
        throw ShapeError(fmt::format("input '{}': given rank {} ({}), the model declares rank {}", name, s.size(), shape_str(s), t.shape.size()));
      for (size_t i = 0; i < s.size(); ++i)
        if (t.dim_params[i].empty() && t.shape[i] != s[i])
          throw ShapeError(fmt::format("input '{}': axis {} is {} in the model, {} given", name, i, t.shape[i], s[i]));
      t.shape = s;
    } else {
      for (size_t i = 0; i < t.shape.size(); ++i) {
        if (t.dim_params[i].empty()) continue;
        auto d = dims.find(fmt::format("{}[{}]", name, i));  // by position: unnamed axes ('?') too
        if (d == dims.end()) d = dims.find(t.dim_params[i]);
        t.shape[i] = d != dims.end() ? d->second : (i == 0 ? batch : 1);
        batch_bound |= d == dims.end() && i == 0;
        if (d == dims.end() && i != 0) defaulted.push_back(fmt::format("{}[{}] '{}'", name, i, t.dim_params[i]));
      }
    }
    t.shape_known = true;
  }
  // A batch that no input takes would be silently ignored: name the input that fixes it.
  if (batch != 1 && !batch_bound && shapes.empty())
    for (const auto& name : g.inputs)
      if (const auto& t = g.tensor(name); !t.shape.empty())
        throw ConfigError(fmt::format("--batch {}: input '{}' has a fixed first axis ({} in shape {}); the model was exported with a fixed batch "
                                      "(export it with a dynamic first axis, or leave out --batch)", batch, name, t.shape[0], shape_str(t.shape)));
  return defaulted;
}

void infer_node(Graph& g, const Node& n) {
  for (const auto& i : n.inputs)
    if (!i.empty() && !g.tensor(i).shape_known)
      throw ShapeError(fmt::format("node '{}': input '{}' has no shape", n.name, i));
  const auto infer = op_rules(n.op).infer;
  if (!infer) throw UnsupportedError(fmt::format("unsupported: op {} (no shape inference) at node '{}'", op_name(n.op), n.name));
  infer(g, n);
}

void infer_shapes(Graph& g) {
  std::vector<Node> kept;
  std::deque<Node> todo(std::make_move_iterator(g.nodes.begin()), std::make_move_iterator(g.nodes.end()));
  g.nodes.clear();
  while (!todo.empty()) {
    Node n = std::move(todo.front());
    todo.pop_front();
    if (const auto expand = op_rules(n.op).expand) {  // inlined control flow: its nodes come next
      std::vector<Node> with = expand(g, n);
      todo.insert(todo.begin(), std::make_move_iterator(with.begin()), std::make_move_iterator(with.end()));
      continue;
    }
    infer_node(g, n);
    bool all_const = true;
    for (const auto& i : n.inputs) all_const &= i.empty() || g.is_const(i);
    int64_t out_elems = 0;
    // Saturated past the fold limit: three outputs of INT64_MAX elements overflowed the sum (fuzz).
    for (const auto& o : n.outputs)
      if (!o.empty()) out_elems = std::min(out_elems + std::min(numel(g.tensor(o).shape), kFoldLimit + 1), kFoldLimit + 1);
    if ((all_const || op_rules(n.op).eval_from_shapes) && out_elems <= kFoldLimit && host_eval_supported(n.op)) {
      host_eval(g, n);
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

}  // namespace trnsim::compiler
