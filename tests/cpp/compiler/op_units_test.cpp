// The op units (compiler/ops/) and the pass runner: every op of the enum has one unit with the
// rules its class needs, the families share their rules, and every pipeline runs through the
// runner by name (the names --dump-ir prints).
#include <gtest/gtest.h>

#include <set>

#include "onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/pass_runner.h"
#include "trnsim/compiler/shape_inference.h"
#include "trnsim/compiler/tensor_parallel.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::compiler {
namespace {

using testing::OnnxModel;

TEST(OpUnits, EveryImportableOpHasAShapeRuleAndAWayToRun) {
  for (const auto& r : op_table()) {
    SCOPED_TRACE(std::string(r.name));
    if (r.kind == OpKind::Constant) continue;  // the importer turns it into a constant
    if (r.rules.expand) continue;  // control flow: replaced by its nodes before shape inference
    EXPECT_NE(r.rules.infer, nullptr);
    // A kernel, a rewrite, or host evaluation (Shape-class ops need constant inputs).
    EXPECT_TRUE(r.rules.lower || r.rules.lower_alias || r.rules.decompose || r.rules.eval);
    if (r.cls == OpClass::Shape) {
      EXPECT_EQ(r.rules.lower, nullptr);
      EXPECT_NE(r.rules.eval, nullptr);
    }
  }
}

TEST(OpUnits, ElementwiseFamiliesShareTheirTensorParallelAndKernelRules) {
  for (const auto& r : op_table()) {
    if (r.cls != OpClass::Unary && r.cls != OpClass::Binary) continue;
    SCOPED_TRACE(std::string(r.name));
    EXPECT_EQ(r.rules.tp_axis, &tp_elementwise);
    EXPECT_NE(r.rules.lower, nullptr);
  }
  // Casts and roundings stay on one core; the other element-wise ops split.
  Node n;
  for (OpKind k : {OpKind::Cast, OpKind::CastLike, OpKind::Floor, OpKind::Ceil, OpKind::Round}) {
    n.op = k;
    EXPECT_FALSE(splittable_elementwise(n)) << op_name(k);
  }
  for (OpKind k : {OpKind::Add, OpKind::Exp, OpKind::Where, OpKind::Clip, OpKind::Equal}) {
    n.op = k;
    EXPECT_TRUE(splittable_elementwise(n)) << op_name(k);
  }
}

TEST(OpUnits, HostEvaluationUsesTheUnitsScalarFunctions) {
  Graph g;
  auto add_const = [&](const std::string& name, Shape s, std::vector<double> v, ElemType t = ElemType::Float) {
    TensorInfo ti{.name = name, .type = t, .shape = std::move(s), .shape_known = true};
    ti.data = std::move(v);
    g.tensors[name] = ti;
  };
  add_const("a", {2, 1}, {1.5, -2.0});
  add_const("b", {3}, {1.0, 2.0, 4.0});
  Node n{.op = OpKind::Div, .name = "div", .inputs = {"a", "b"}, .outputs = {"y"}};
  g.tensors["y"].name = "y";
  infer_node(g, n);
  ASSERT_EQ(g.tensor("y").shape, (Shape{2, 3}));
  host_eval(g, n);
  const std::vector<double> want = {1.5, 0.75, 0.375, -2.0, -1.0, -0.5};  // numpy broadcasting
  EXPECT_EQ(*g.tensor("y").data, want);
  // Integer division truncates (ONNX Div on integers).
  add_const("i", {2}, {7, -7}, ElemType::Int64);
  add_const("j", {}, {2}, ElemType::Int64);
  Node d{.op = OpKind::Div, .name = "idiv", .inputs = {"i", "j"}, .outputs = {"q"}};
  g.tensors["q"].name = "q";
  infer_node(g, d);
  host_eval(g, d);
  EXPECT_EQ(*g.tensor("q").data, (std::vector<double>{3, -3}));
}

TEST(PassRunner, CompileRecordsEveryPassByNameAndRejectsAnUnknownOne) {
  OnnxModel m;
  m.input("x", {1, 8});
  m.floats("w", {8, 4}, std::vector<float>(32, 0.5f));
  m.node("MatMul", {"x", "w"}, {"h"});
  m.node("Relu", {"h"}, {"y"});
  m.output("y");
  const hw::ChipSpec chip = hw::load_chip("trn2");
  CompileOptions o;
  o.keep_ir = true;
  const CompiledModel cm = compile(import_onnx_bytes(m.bytes()), chip, o);
  std::vector<std::string> names;
  for (const auto& p : cm.passes) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bind-inputs", "shape-inference", "constant-folding", "batchnorm-folding", "decomposition", "constant-folding",
                                             "attention-fusion", "gelu-fusion", "fusion", "qkv-fusion", "elementwise-fusion", "dead-code", "norm-prologue", "core-split", "operand-storage", "sbuf-placement", "sbuf-residency", "memory-planning", "lowering"}));
  EXPECT_NE(cm.dump_ir().find("=== after pass 'core-split'"), std::string::npos);
  std::set<std::string_view> known;
  for (const auto& p : compiler_passes()) known.insert(p.name);
  for (const auto& n : names) EXPECT_TRUE(known.count(n)) << n;
  Graph g = import_onnx_bytes(m.bytes());
  PassState st{g, o};
  EXPECT_THROW(run_passes(st, {"no-such-pass"}), Error);
}

TEST(PassRunner, TensorParallelPreparationRunsTheFrontPasses) {
  OnnxModel m;
  m.input("x", {2, 8});
  m.floats("w1", {8, 16}, std::vector<float>(128, 0.25f));
  m.floats("w2", {16, 8}, std::vector<float>(128, 0.5f));
  m.node("MatMul", {"x", "w1"}, {"h"});
  m.node("Gelu", {"h"}, {"a"});
  m.node("MatMul", {"a", "w2"}, {"y"});
  m.output("y");
  Graph g = prepare_for_tensor_parallel(import_onnx_bytes(m.bytes()), CompileOptions{});
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.tensor("y").shape, (Shape{2, 8}));  // shapes inferred by the runner's passes
  const TensorParallelPlan plan = shard_tensor_parallel(std::move(g), 2);
  EXPECT_EQ(plan.column_parallel, std::vector<std::string>{plan.column_parallel.front()});
  EXPECT_EQ(plan.row_parallel.size(), 1u);
}

}  // namespace
}  // namespace trnsim::compiler
