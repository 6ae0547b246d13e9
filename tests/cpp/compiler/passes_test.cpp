// Shape inference closed forms, folding of shape sub-graphs, decomposition, fusion, the IR
// check and the op table.
#include <gtest/gtest.h>

#include "onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::compiler {
namespace {

using testing::OnnxModel;

CompiledModel compiled(const OnnxModel& m, int64_t batch = 1) {
  static const hw::ChipSpec chip = hw::load_chip("trn2");
  CompileOptions o;
  o.batch = batch;
  o.keep_ir = true;
  return compile(import_onnx_bytes(m.bytes()), chip, o);
}

TEST(OpTable, CoversEveryOpInOrder) {
  for (int i = 0; i < static_cast<int>(OpKind::kCount); ++i) {
    const auto& info = op_info(static_cast<OpKind>(i));
    EXPECT_EQ(static_cast<int>(info.kind), i);
    EXPECT_EQ(op_from_name(info.name), info.kind);
  }
  EXPECT_FALSE(op_from_name("NotAnOp").has_value());
}

TEST(ShapeInference, MatMulBroadcastConvAndPoolClosedForms) {
  OnnxModel m;
  m.input("a", {-1, 1, 5, 7}).input("b", {3, 7, 2}).input("x", {2, 3, 17, 11});
  m.floats("w", {8, 3, 3, 5}, testing::values(360, 2));
  m.node("MatMul", {"a", "b"}, {"ab"});
  auto& c = m.node("Conv", {"x", "w"}, {"c"});
  OnnxModel::attr(c, "strides", std::vector<int64_t>{2, 3});
  OnnxModel::attr(c, "pads", std::vector<int64_t>{1, 2, 0, 1});
  OnnxModel::attr(c, "dilations", std::vector<int64_t>{1, 2});
  m.output("ab").output("c");
  auto cm = compiled(m, 4);
  EXPECT_EQ(cm.shapes.at("ab"), (Shape{4, 3, 5, 2}));
  // H: (17 + 1 + 0 - 3) / 2 + 1 = 8; W: (11 + 2 + 1 - (2*4+1)) / 3 + 1 = 2
  EXPECT_EQ(cm.shapes.at("c"), (Shape{2, 8, 8, 2}));
}

TEST(ShapeInference, ShapeSubgraphIsFoldedIntoAReshape) {
  OnnxModel m;
  m.input("x", {-1, 6});
  m.ints("i0", {}, {0}).ints("m1", {1}, {-1}).ints("ax", {1}, {0});
  m.node("Shape", {"x"}, {"s"});
  m.node("Gather", {"s", "i0"}, {"n"});
  m.node("Unsqueeze", {"n", "ax"}, {"nu"});
  m.node("Concat", {"nu", "m1"}, {"shape"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  m.node("Reshape", {"x", "shape"}, {"y"});
  m.output("y");
  auto cm = compiled(m, 3);
  EXPECT_EQ(cm.shapes.at("y"), (Shape{3, 6}));
  // Only the reshape is left, and it costs nothing (an alias).
  ASSERT_EQ(cm.segments.size(), 1u);
  EXPECT_EQ(cm.segments[0].kind, Segment::Kind::Alias);
}

TEST(Passes, BiasAndActivationFuseIntoTheMatmul) {
  OnnxModel m;
  m.input("x", {4, 8}).floats("w", {8, 16}, testing::values(128, 3)).floats("b", {16}, testing::values(16, 4));
  m.node("MatMul", {"x", "w"}, {"h"}, "mm");
  m.node("Add", {"h", "b"}, {"hb"}, "bias");
  m.node("Relu", {"hb"}, {"y"}, "act");
  m.output("y");
  auto cm = compiled(m);
  ASSERT_EQ(cm.segments.size(), 1u);
  EXPECT_EQ(cm.segments[0].op, "MatMul");
  EXPECT_EQ(cm.segments[0].fused, (std::vector<std::string>{"bias", "act"}));
  const std::string ir = cm.dump_ir();
  for (const char* p : {"shape-inference", "constant-folding", "decomposition", "fusion", "dead-code", "memory-planning", "lowering"})
    EXPECT_NE(ir.find(std::string("after pass '") + p + "'"), std::string::npos) << p;
}

TEST(Passes, ConvDecomposesIntoPrimitives) {
  OnnxModel m;
  m.input("x", {1, 2, 5, 5}).floats("w", {3, 2, 3, 3}, testing::values(54, 5));
  OnnxModel::attr(m.node("Conv", {"x", "w"}, {"y"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.output("y");
  auto cm = compiled(m);
  // Two channels: the taps are stacked on the partitions, read from an input padded in HBM.
  bool pad = false, mm = false;
  for (const auto& n : cm.graph.nodes) {
    pad |= n.op == OpKind::Pad;
    mm |= n.op == OpKind::ConvGemm;
    EXPECT_NE(n.op, OpKind::Conv);
  }
  EXPECT_TRUE(pad && mm);
  EXPECT_EQ(cm.shapes.at("y"), (Shape{1, 3, 5, 5}));
}

TEST(Passes, IrCheckNamesThePass) {
  Graph g;
  g.name = "g";
  Node n;
  n.op = OpKind::Relu;
  n.name = "r";
  n.inputs = {"missing"};
  n.outputs = {"y"};
  g.tensors["y"] = TensorInfo{"y"};
  g.nodes.push_back(n);
  try {
    check(g, "my-pass", false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("after pass 'my-pass'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("reads 'missing'"), std::string::npos);
  }
}

TEST(Passes, ShapeMismatchIsAShapeError) {
  OnnxModel m;
  m.input("a", {2, 3}).input("b", {4, 5});
  m.node("MatMul", {"a", "b"}, {"y"}, "mm");
  m.output("y");
  EXPECT_THROW(compiled(m), ShapeError);
}

TEST(Passes, Fp8PolicyNeedsAChipWithFp8) {
  OnnxModel m;
  m.input("a", {2, 3});
  m.node("Relu", {"a"}, {"y"});
  m.output("y");
  const hw::ChipSpec trn1 = hw::load_chip("trn1");
  CompileOptions o;
  o.policy = DTypePolicy::FP8;
  if (!trn1.supports(numerics::DType::F8E4M3)) EXPECT_THROW(compile(import_onnx_bytes(m.bytes()), trn1, o), UnsupportedError);
  EXPECT_THROW(parse_policy("fp64"), UnsupportedError);
}

}  // namespace
}  // namespace trnsim::compiler
