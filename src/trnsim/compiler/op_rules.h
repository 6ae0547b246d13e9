// What an op unit (compiler/ops/) tells the compiler about its op: one field per pass that
// treats ops differently. An empty field means the pass's default, written beside the field.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trnsim::compiler {

struct Graph;
struct Node;
class GraphEditor;
struct LowerCtx;
struct TpCtx;

struct OpRules {
  // Shape inference: sets the shape and element type of n's outputs from its inputs (all
  // known). None: the op cannot appear before shape inference (an UnsupportedError).
  void (*infer)(Graph& g, const Node& n) = nullptr;
  // Inlining during shape inference (control flow, ops/control_flow.cpp): the nodes that
  // replace n, once its condition or trip count is constant; shape inference runs them in turn.
  // None: the node is inferred by `infer`.
  std::vector<Node> (*expand)(Graph& g, const Node& n) = nullptr;
  // Reference evaluation for constant folding (host_eval.h): fills `out` (sized for output 0)
  // in double precision; other outputs it sets itself. None: the node is not folded.
  void (*eval)(Graph& g, const Node& n, std::vector<double>& out) = nullptr;
  bool eval_rounds = false;       // eval already rounded `out` to the output's element type
  bool eval_from_shapes = false;  // eval reads only its inputs' shapes: folds when they are computed
  // The scalar function of an element-wise op (host evaluation; shared by the family's eval).
  double (*unary)(double x, const Node& n) = nullptr;
  double (*binary)(double a, double b, bool integral) = nullptr;
  // Decomposition: appends the nodes that replace n and returns true, or false to keep n.
  // None: kept.
  bool (*decompose)(GraphEditor& e, const Node& n) = nullptr;
  // Lowering to a kernel (the lower_*.h helpers). None: an UnsupportedError, or for Shape-class
  // ops a ConstantRequiredError (their inputs must be constant).
  void (*lower)(LowerCtx& ctx) = nullptr;
  bool lower_alias = false;  // no kernel: the output is an alias of input 0 (Reshape)
  // Names of the nodes a fused node stands for (the per-op report). None: none.
  std::vector<std::string> (*fused_members)(const Node& n) = nullptr;
  // Core split (core_split.h): independent pieces of work. None: 1 (one core).
  int64_t (*parallel_units)(const Graph& g, const Node& n) = nullptr;
  // Tensor parallelism (tp_rules.h): the output axis that stays split when an input is split,
  // or -1 with ctx.why set (ctx.partial for a row-parallel MatMul). None: no per-shard rule.
  int64_t (*tp_axis)(TpCtx& ctx) = nullptr;
};

}  // namespace trnsim::compiler
