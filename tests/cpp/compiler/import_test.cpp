// The ONNX importer: what loads, and the errors for what does not.
#include <gtest/gtest.h>

#include "onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/onnx_import.h"

namespace trnsim::compiler {
namespace {

using testing::OnnxModel;

template <typename E>
std::string error_of(const std::string& bytes) {
  try {
    import_onnx_bytes(bytes, "model.onnx");
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(OnnxImport, ReadsInputsInitializersAndNodes) {
  OnnxModel m;
  m.input("x", {-1, 4}).floats("w", {4, 3}, testing::values(12, 1)).ints("shape", {2}, {-1, 3});
  m.node("MatMul", {"x", "w"}, {"y"}, "mm");
  m.output("y");
  Graph g = import_onnx_bytes(m.bytes());
  ASSERT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.tensor("x").dim_params[0], "N");
  EXPECT_EQ(g.tensor("x").shape[1], 4);
  ASSERT_TRUE(g.tensor("shape").is_const());
  EXPECT_EQ((*g.tensor("shape").data)[0], -1);  // raw int64 data decoded
  EXPECT_EQ(g.tensor("w").data->size(), 12u);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::MatMul);
  EXPECT_EQ(g.opset, 17);
}

TEST(OnnxImport, UnsupportedOpNamesOpAndNode) {
  OnnxModel m;
  m.input("x", {2, 2});
  m.node("Det", {"x"}, {"y"}, "det0");
  m.output("y");
  EXPECT_EQ(error_of<UnsupportedError>(m.bytes()), "unsupported: op Det at node 'det0'");
}

TEST(OnnxImport, UnsupportedAttributeNamesIt) {
  OnnxModel m;
  m.input("x", {2, 2});
  OnnxModel::attr(m.node("Softmax", {"x"}, {"y"}, "sm"), "bogus", int64_t{1});
  m.output("y");
  EXPECT_EQ(error_of<UnsupportedError>(m.bytes()), "unsupported: op Softmax (attribute bogus) at node 'sm'");
}

TEST(OnnxImport, OpsetOutsideTheSupportedRange) {
  OnnxModel m(5);
  m.input("x", {2});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  EXPECT_NE(error_of<UnsupportedError>(m.bytes()).find("opset 5"), std::string::npos);
}

TEST(OnnxImport, LaterOpsetLoadsOnlyUnrevisedOps) {
  OnnxModel ok(25);
  ok.input("x", {2});
  ok.node("Relu", {"x"}, {"y"});
  ok.output("y");
  EXPECT_EQ(import_onnx_bytes(ok.bytes()).opset, 25);
  OnnxModel before(27);
  before.input("x", {2}).input("m", {2});
  OnnxModel::attr(before.node("Mod", {"x", "m"}, {"y"}, "r"), "fmod", int64_t{1});
  before.output("y");
  EXPECT_EQ(import_onnx_bytes(before.bytes()).opset, 27);
  OnnxModel revised28(28);  // Mod-28 (floor mod on floats) is implemented: no longer refused
  revised28.input("x", {2}).input("m", {2});
  revised28.node("Mod", {"x", "m"}, {"y"}, "r");
  revised28.output("y");
  EXPECT_EQ(import_onnx_bytes(revised28.bytes()).opset, 28);
  OnnxModel future(29);
  future.input("x", {2});
  future.node("Relu", {"x"}, {"y"});
  future.output("y");
  EXPECT_NE(error_of<UnsupportedError>(future.bytes()).find("opset 29"), std::string::npos);
}

TEST(OnnxImport, MalformedBytesNameTheSource) {
  EXPECT_NE(error_of<Error>("\x08\x01garbage-not-a-model").find("'model.onnx' is not a valid ONNX model"), std::string::npos);
  EXPECT_THROW(import_onnx_file("/nonexistent/x.onnx"), Error);
}

TEST(OnnxImport, ConstantNodesBecomeConstants) {
  OnnxModel m;
  m.input("x", {3});
  OnnxModel::attr(m.node("Constant", {}, {"c"}), "value_float", 2.5f);
  m.node("Mul", {"x", "c"}, {"y"});
  m.output("y");
  Graph g = import_onnx_bytes(m.bytes());
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ((*g.tensor("c").data)[0], 2.5);
}

}  // namespace
}  // namespace trnsim::compiler
