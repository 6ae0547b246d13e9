// Einsum of one or two operands (the forms exporters and attention code emit: batched
// matmuls, transposes, sums, outer and inner products; '...' for leading axes). Letters only
// in one operand and not in the output are summed first; two operands become one batched
// MatMul: A as [batch, A's free, contracted], B as [batch, contracted, B's free], the result
// transposed to the output's order. A letter repeated within one operand (a diagonal) is
// taken first: Where(identity mask, x, 0) summed over the second axis. More than two operands
// are refused.
#include <algorithm>
#include <map>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

struct Equation {
  std::vector<std::string> in;  // one letter per axis ('...' expanded to upper-case letters)
  std::string out;
};

Equation parse(const Graph& g, const Node& n) {
  std::string eq;
  for (char c : n.s("equation", "")) if (c != ' ') eq += c;
  const auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  Equation e;
  size_t at = 0;
  int64_t ell = -1;  // axes the ellipsis stands for
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const size_t comma = lhs.find(',', at);
    std::string term = lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    at = comma == std::string::npos ? lhs.size() : comma + 1;
    const auto rank = static_cast<int64_t>(input(g, n, i).shape.size());
    if (auto d = term.find("..."); d != std::string::npos) {
      const int64_t k = rank - static_cast<int64_t>(term.size() - 3);
      if (k < 0 || (ell >= 0 && ell != k)) unsupported(n, fmt::format("equation '{}' for these ranks", eq));
      ell = k;
      std::string fill;
      for (int64_t j = 0; j < k; ++j) fill += static_cast<char>('Z' - j);
      term.replace(d, 3, std::string(fill.rbegin(), fill.rend()));
    }
    if (static_cast<int64_t>(term.size()) != rank)
      throw ShapeError(fmt::format("node '{}': Einsum term '{}' for input '{}' of rank {}", n.name, term, n.inputs[i], rank));
    e.in.push_back(term);
  }
  if (arrow != std::string::npos) {
    e.out = eq.substr(arrow + 2);
    if (auto d = e.out.find("..."); d != std::string::npos) {
      std::string fill;
      for (int64_t j = 0; j < std::max<int64_t>(ell, 0); ++j) fill += static_cast<char>('Z' - j);
      e.out.replace(d, 3, std::string(fill.rbegin(), fill.rend()));
    }
  } else {  // implicit: the letters that appear once, ellipsis axes first, then alphabetical
    std::string all;
    for (const auto& t : e.in) all += t;
    std::string once;
    for (char c : all) if (std::count(all.begin(), all.end(), c) == 1) once += c;
    std::sort(once.begin(), once.end(), [](char a, char b) { return (a <= 'Z') != (b <= 'Z') ? a <= 'Z' : a < b; });
    e.out = once;
  }
  return e;
}

// The size of each letter (equal wherever it appears).
std::map<char, int64_t> sizes(const Graph& g, const Node& n, const Equation& e) {
  std::map<char, int64_t> s;
  for (size_t i = 0; i < e.in.size(); ++i)
    for (size_t a = 0; a < e.in[i].size(); ++a) {
      const int64_t d = input(g, n, i).shape[a];
      auto [it, fresh] = s.emplace(e.in[i][a], d);
      if (!fresh && it->second != d) throw ShapeError(fmt::format("node '{}': Einsum index '{}' is {} and {}", n.name, e.in[i][a], it->second, d));
    }
  return s;
}

void infer(Graph& g, const Node& n) {
  if (n.inputs.size() > 2) unsupported(n, fmt::format("{} operands (at most 2)", n.inputs.size()));
  const Equation e = parse(g, n);
  const auto s = sizes(g, n, e);
  Shape out;
  for (char c : e.out) {
    if (!s.count(c)) throw ShapeError(fmt::format("node '{}': Einsum output index '{}' is in no input", n.name, c));
    out.push_back(s.at(c));
  }
  set_output(g, n, 0, out, input(g, n, 0).type);
}

bool contains(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// x (letters `have`) with the axes not in `keep` summed away; returns the new letters.
std::string sum_away(GraphEditor& e, const Node& n, std::string& x, const std::string& have, const std::string& keep) {
  std::vector<int64_t> axes;
  std::string left;
  for (size_t a = 0; a < have.size(); ++a) {
    if (contains(keep, have[a])) left += have[a];
    else axes.push_back(static_cast<int64_t>(a));
  }
  if (!axes.empty()) x = reduce_over(e, OpKind::ReduceSum, n.name + ".sum", x, axes, false);
  return left;
}

// x (letters `have`) transposed to the letters `want` (the same set).
std::string permute(GraphEditor& e, const Node& n, const std::string& x, const std::string& have, const std::string& want) {
  std::vector<int64_t> perm;
  bool identity = true;
  for (size_t a = 0; a < want.size(); ++a) {
    perm.push_back(static_cast<int64_t>(have.find(want[a])));
    identity &= perm.back() == static_cast<int64_t>(a);
  }
  return identity ? x : transpose(e, n.name + ".order", x, perm);
}

// A letter repeated within x's term (axes p < q of equal size): the diagonal, as x where the
// two indices agree (else 0) summed over q; until every letter appears once.
void take_diagonals(GraphEditor& e, const Node& n, std::string& x, std::string& term) {
  for (size_t q = 0; q < term.size(); ++q) {
    const size_t p = term.find(term[q]);
    if (p == q) continue;
    const Shape s = shape_of(e.graph(), x);
    const int64_t d = s[q];
    Shape ms(s.size(), 1);
    ms[p] = ms[q] = d;
    std::vector<double> eye(static_cast<size_t>(d * d), 0.0);
    for (int64_t i = 0; i < d; ++i) eye[static_cast<size_t>(i * d + i)] = 1;
    std::string masked = e.add(OpKind::Where, n.name + ".diagonal", {e.constant(n.name + ".eye", ms, eye, ElemType::Bool), x,
                                                                     e.constant(n.name + ".zero", {}, {0.0}, e.graph().tensor(x).type)});
    x = reduce_over(e, OpKind::ReduceSum, n.name + ".diagonal", masked, {static_cast<int64_t>(q)}, false);
    term.erase(q, 1);
    --q;
  }
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  Equation q = parse(g, n);
  const auto s = sizes(g, n, q);
  auto prod = [&](const std::string& letters) {
    int64_t p = 1;
    for (char c : letters) p *= s.at(c);
    return p;
  };
  std::vector<std::string> xs(n.inputs.begin(), n.inputs.end());
  for (size_t i = 0; i < xs.size(); ++i) take_diagonals(e, n, xs[i], q.in[i]);
  if (q.in.size() == 1) {
    std::string x = xs[0];
    const std::string left = sum_away(e, n, x, q.in[0], q.out);
    finish(e, n, permute(e, n, x, left, q.out));
    return true;
  }
  std::string a = xs[0], b = xs[1];
  // Letters of one operand only, not in the output: summed first.
  const std::string la = sum_away(e, n, a, q.in[0], q.out + q.in[1]);
  const std::string lb = sum_away(e, n, b, q.in[1], q.out + q.in[0]);
  std::string batch, contracted, fa, fb;
  for (char c : la) (contains(lb, c) ? (contains(q.out, c) ? batch : contracted) : fa) += c;
  for (char c : lb) if (!contains(la, c)) fb += c;
  a = reshape(e, n.name + ".a", permute(e, n, a, la, batch + fa + contracted), {prod(batch), prod(fa), prod(contracted)});
  b = reshape(e, n.name + ".b", permute(e, n, b, lb, batch + contracted + fb), {prod(batch), prod(contracted), prod(fb)});
  std::string y = e.add(OpKind::MatMul, n.name, {a, b});
  const std::string got = batch + fa + fb;
  Shape gs;
  for (char c : got) gs.push_back(s.at(c));
  y = reshape(e, n.name + ".axes", y, gs);
  finish(e, n, permute(e, n, y, got, q.out));
  return true;
}

}  // namespace

void register_einsum(OpRegistry& r) {
  r.push_back({.kind = OpKind::Einsum, .name = "Einsum", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 2,
               .attributes = {"equation"}, .rules = {.infer = infer, .decompose = decompose}});
}

}  // namespace trnsim::compiler
