// The ops added for models nobody tuned for (issue 4): Sum/Mean, Dropout (inference), LRN,
// AveragePool's count_include_pad and ceil_mode, auto_pad SAME, LayerNormalization's Mean and
// InvStdDev outputs, Round, run-time GatherElements, Pad modes, BatchNormalization and Gather
// (axis != 0) with run-time inputs, reductions over an empty set, depthwise Conv, Elu, Selu,
// Celu, ThresholdedRelu, Softsign, Shrink, PRelu, Tile. Each graph goes through the compiler's
// passes up to decomposition with its inputs still unknown, then the inputs are bound and the
// decomposed graph is evaluated by constant folding; the results are compared with values
// worked out by hand in the comments (|got - want| <= 1e-6 |want| + 1e-6).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/decompose.h"
#include "trnsim/compiler/fusion.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/compiler/shape_inference.h"

namespace trnsim::compiler {
namespace {

using testing::OnnxModel;
using Values = std::map<std::string, std::vector<double>>;

// Compiles to the decomposed IR, binds `inputs` as constants and folds the rest: every node
// left must be one the host evaluator runs, so the decomposition itself is what is checked.
Graph evaluate(const OnnxModel& m, const Values& inputs) {
  Graph g = import_onnx_bytes(m.bytes());
  bind_inputs(g, {}, {}, 1);
  infer_shapes(g);
  fold_constants(g);
  decompose(g);
  check(g, "decomposition", true);
  for (const auto& [name, v] : inputs) {
    auto& t = g.tensor(name);
    EXPECT_EQ(static_cast<int64_t>(v.size()), numel(t.shape)) << name;
    t.data = v;
  }
  g.inputs.clear();
  fold_constants(g);
  EXPECT_TRUE(g.nodes.empty()) << "not evaluated on the host: " << dump(g);
  return g;
}

void expect_values(const Graph& g, const std::string& name, const std::vector<double>& want) {
  const auto& t = g.tensor(name);
  ASSERT_TRUE(t.is_const()) << name;
  ASSERT_EQ(t.data->size(), want.size()) << name;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR((*t.data)[i], want[i], 1e-6 * std::fabs(want[i]) + 1e-6) << name << " element " << i;
}

void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

template <typename E>
std::string error_of(const OnnxModel& m) {
  try {
    evaluate(m, {});
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Ops, SumAndMeanBroadcastOverManyInputs) {
  OnnxModel m(9);
  m.input("a", {2, 3}).input("b", {3}).input("c", {1, 1});
  m.node("Sum", {"a", "b", "c"}, {"s"});
  m.node("Mean", {"a", "b", "c"}, {"avg"});
  m.node("Sum", {"b"}, {"one"});
  m.output("s").output("avg").output("one");
  Graph g = evaluate(m, {{"a", {1, 2, 3, 4, 5, 6}}, {"b", {10, 20, 30}}, {"c", {100}}});
  EXPECT_EQ(g.tensor("s").shape, (Shape{2, 3}));
  expect_values(g, "s", {111, 122, 133, 114, 125, 136});
  expect_values(g, "avg", {37, 122.0 / 3, 133.0 / 3, 38, 125.0 / 3, 136.0 / 3});
  expect_values(g, "one", {10, 20, 30});
}

TEST(Ops, DropoutIsTheIdentityWithAnAllTrueMask) {
  OnnxModel m(12);
  m.input("x", {2, 2});
  m.floats("ratio", {}, {0.5f});
  m.node("Dropout", {"x", "ratio"}, {"y", "mask"});
  m.output("y").output("mask");
  Graph g = evaluate(m, {{"x", {1.5, -2, 3, 0}}});
  expect_values(g, "y", {1.5, -2, 3, 0});
  EXPECT_EQ(g.tensor("mask").type, ElemType::Bool);
  expect_values(g, "mask", {1, 1, 1, 1});

  OnnxModel old(10);  // ratio as an attribute
  old.input("x", {3});
  OnnxModel::attr(old.node("Dropout", {"x"}, {"y"}), "ratio", 0.25f);
  old.output("y");
  expect_values(evaluate(old, {{"x", {4, 5, 6}}}), "y", {4, 5, 6});
}

TEST(Ops, DropoutInTrainingModeIsRefusedUnlessTheRatioIsZero) {
  auto model = [](float ratio) {
    OnnxModel m(13);
    m.input("x", {2});
    m.floats("r", {}, {ratio});
    // training_mode = true (OnnxModel has no bool initializer; a non-zero int64 reads the same).
    m.ints("train", {}, {1});
    m.node("Dropout", {"x", "r", "train"}, {"y"});
    m.output("y");
    return m;
  };
  std::string e = error_of<UnsupportedError>(model(0.5f));
  EXPECT_NE(e.find("unsupported: op Dropout (attribute training_mode = 1 with ratio = 0.5"), std::string::npos) << e;
  OnnxModel z = model(0.0f);
  expect_values(evaluate(z, {{"x", {7, -8}}}), "y", {7, -8});
}

TEST(Ops, LrnSumsSquaresOverTheChannelWindow) {
  // x[0, c, 0, w]: c0 = [1, 2], c1 = [3, 4], c2 = [5, 6]; alpha = size so alpha/size = 1,
  // beta = 1, bias = 1: y = x / (1 + sum of the window's squares).
  auto run = [](int64_t size) {
    OnnxModel m(13);
    m.input("x", {1, 3, 1, 2});
    auto& n = m.node("LRN", {"x"}, {"y"});
    OnnxModel::attr(n, "size", size);
    OnnxModel::attr(n, "alpha", static_cast<float>(size));
    OnnxModel::attr(n, "beta", 1.0f);
    OnnxModel::attr(n, "bias", 1.0f);
    m.output("y");
    return evaluate(m, {{"x", {1, 2, 3, 4, 5, 6}}});
  };
  // size 3: window [c-1, c+1]. c0: 1+9=10, 4+16=20; c1: 1+9+25=35, 4+16+36=56; c2: 9+25=34, 16+36=52.
  expect_values(run(3), "y", {1.0 / 11, 2.0 / 21, 3.0 / 36, 4.0 / 57, 5.0 / 35, 6.0 / 53});
  // size 2: window [c, c+1] (floor((2-1)/2) = 0 before, 1 after). c0: 10, 20; c1: 34, 52; c2: 25, 36.
  expect_values(run(2), "y", {1.0 / 11, 2.0 / 21, 3.0 / 35, 4.0 / 53, 5.0 / 26, 6.0 / 37});
}

TEST(Ops, LrnWithBetaThreeQuarters) {
  // One channel, size 1, alpha 1, bias 2, beta 0.75: y = x / (2 + x^2)^0.75. x = 2: 2 / 6^0.75.
  OnnxModel m(13);
  m.input("x", {1, 1, 1, 1});
  auto& n = m.node("LRN", {"x"}, {"y"});
  OnnxModel::attr(n, "size", int64_t{1});
  OnnxModel::attr(n, "alpha", 1.0f);
  OnnxModel::attr(n, "bias", 2.0f);
  m.output("y");
  expect_values(evaluate(m, {{"x", {2}}}), "y", {2.0 / std::pow(6.0, 0.75)});
}

OnnxModel avg_pool(int64_t include_pad) {
  OnnxModel m(13);
  m.input("x", {1, 1, 3, 3});
  auto& n = m.node("AveragePool", {"x"}, {"y"});
  OnnxModel::attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxModel::attr(n, "strides", std::vector<int64_t>{2, 2});
  OnnxModel::attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  OnnxModel::attr(n, "count_include_pad", include_pad);
  m.output("y");
  return m;
}

TEST(Ops, AveragePoolCountsPaddingOnlyWhenAsked) {
  // x = 1..9 (3x3), 2x2 windows, stride 2, one pad all round: windows hold {1}, {2,3}, {4,7},
  // {5,6,8,9}. count_include_pad = 0 divides by the taps inside the input, = 1 by 4.
  const Values x = {{"x", {1, 2, 3, 4, 5, 6, 7, 8, 9}}};
  expect_values(evaluate(avg_pool(0), x), "y", {1, 2.5, 5.5, 7});
  expect_values(evaluate(avg_pool(1), x), "y", {0.25, 1.25, 2.75, 7});
}

TEST(Ops, PoolsInCeilModeAddAWindowThatOverhangsTheEnd) {
  // x = 0..15 (4x4), 3x3 windows, stride 2: floor mode gives 1x1, ceil mode 2x2 whose last
  // windows hang over the end; their average divides by the taps inside the input.
  auto run = [](const char* op) {
    OnnxModel m(13);
    m.input("x", {1, 1, 4, 4});
    auto& n = m.node(op, {"x"}, {"y"});
    OnnxModel::attr(n, "kernel_shape", std::vector<int64_t>{3, 3});
    OnnxModel::attr(n, "strides", std::vector<int64_t>{2, 2});
    OnnxModel::attr(n, "ceil_mode", int64_t{1});
    m.output("y");
    std::vector<double> x(16);
    for (int i = 0; i < 16; ++i) x[i] = i;
    return evaluate(m, {{"x", x}});
  };
  Graph avg = run("AveragePool");
  EXPECT_EQ(avg.tensor("y").shape, (Shape{1, 1, 2, 2}));
  // {0,1,2,4,5,6,8,9,10} = 45/9; {2,3,6,7,10,11} = 39/6; {8,9,10,12,13,14} = 66/6; {10,11,14,15} = 50/4.
  expect_values(avg, "y", {5, 6.5, 11, 12.5});
  expect_values(run("MaxPool"), "y", {10, 11, 14, 15});
}

TEST(Ops, SameUpperPaddingPadsTheEndFirst) {
  // 1x4 input, kernel 1x2, stride 1, SAME_UPPER: output 1x4, one pad column at the end (-inf
  // for MaxPool): max of neighbours {1,3}, {3,2}, {2,5}, {5}.
  OnnxModel m(13);
  m.input("x", {1, 1, 1, 4});
  auto& n = m.node("MaxPool", {"x"}, {"y"});
  OnnxModel::attr(n, "kernel_shape", std::vector<int64_t>{1, 2});
  attr(n, "auto_pad", "SAME_UPPER");
  m.output("y");
  expect_values(evaluate(m, {{"x", {1, 3, 2, 5}}}), "y", {3, 3, 5, 5});
}

TEST(Ops, LayerNormalizationReturnsMeanAndInvStdDev) {
  // Rows [1,2,3,4] and [2,4,6,8]: mean 2.5 and 5, variance 1.25 and 5.
  OnnxModel m(17);
  m.input("x", {2, 4});
  m.floats("scale", {4}, {1, 2, 1, 1}).floats("bias", {4}, {0, 0, 0, 1});
  m.node("LayerNormalization", {"x", "scale", "bias"}, {"y", "mean", "rstd"});
  m.output("y").output("mean").output("rstd");
  Graph g = evaluate(m, {{"x", {1, 2, 3, 4, 2, 4, 6, 8}}});
  EXPECT_EQ(g.tensor("mean").shape, (Shape{2, 1}));
  const double r0 = 1 / std::sqrt(1.25 + 1e-5), r1 = 1 / std::sqrt(5 + 1e-5);
  expect_values(g, "mean", {2.5, 5});
  expect_values(g, "rstd", {r0, r1});
  expect_values(g, "y", {-1.5 * r0, -0.5 * r0 * 2, 0.5 * r0, 1.5 * r0 + 1, -3 * r1, -1 * r1 * 2, 1 * r1, 3 * r1 + 1});
}

TEST(Ops, GatherElementsWithRunTimeIndices) {
  // The ONNX examples: axis 1 on [[1,2],[3,4]] with [[0,0],[1,0]] -> [[1,1],[4,3]]; axis 0
  // on 1..9 (3x3) with [[1,2,0],[2,0,0]] -> [[4,8,3],[7,2,3]]; a negative index counts from the end.
  auto run = [](Shape ds, Shape is, int64_t axis, std::vector<double> d, std::vector<double> i) {
    OnnxModel m(13);
    m.input("data", ds).input("idx", is, onnx::TensorProto::INT64);
    OnnxModel::attr(m.node("GatherElements", {"data", "idx"}, {"y"}), "axis", axis);
    m.output("y");
    return evaluate(m, {{"data", d}, {"idx", i}});
  };
  expect_values(run({2, 2}, {2, 2}, 1, {1, 2, 3, 4}, {0, 0, 1, 0}), "y", {1, 1, 4, 3});
  expect_values(run({3, 3}, {2, 3}, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 0, 2, 0, 0}), "y", {4, 8, 3, 7, 2, 3});
  expect_values(run({2, 3}, {1, 2}, 1, {1, 2, 3, 4, 5, 6}, {-1, 0}), "y", {3, 1});
}

TEST(Ops, RoundHalvesToEvenFloorAndCeil) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 0.49999997f, 2.3f, -2.7f};
  auto run = [&](const char* op) {
    OnnxModel m(13);
    m.floats("x", {8}, x);
    m.node(op, {"x"}, {"y"});
    m.output("y");
    return evaluate(m, {});
  };
  expect_values(run("Round"), "y", {0, 2, 2, 0, -2, 0, 2, -3});
  expect_values(run("Floor"), "y", {0, 1, 2, -1, -2, 0, 2, -3});
  expect_values(run("Ceil"), "y", {1, 2, 3, 0, -1, 1, 3, -2});
}

TEST(Ops, PadModesEdgeReflectWrapAndARunTimeValue) {
  // x = [1, 2, 3], pads 2 before and 2 after.
  auto run = [](const char* mode) {
    OnnxModel m(13);
    m.input("x", {3});
    m.ints("pads", {2}, {2, 2});
    attr(m.node("Pad", {"x", "pads"}, {"y"}), "mode", mode);
    m.output("y");
    return evaluate(m, {{"x", {1, 2, 3}}});
  };
  expect_values(run("edge"), "y", {1, 1, 1, 2, 3, 3, 3});
  expect_values(run("reflect"), "y", {3, 2, 1, 2, 3, 2, 1});
  expect_values(run("wrap"), "y", {2, 3, 1, 2, 3, 1, 2});
  // Constant mode, the value an input: [[v, v, v], [v, 4, 5]] for x = [[4, 5]], pads (1, 1, 0, 0).
  OnnxModel c(13);
  c.input("x", {1, 2}).input("v", {});
  c.ints("pads", {4}, {1, 1, 0, 0});
  c.node("Pad", {"x", "pads", "v"}, {"y"});
  c.output("y");
  expect_values(evaluate(c, {{"x", {4, 5}}, {"v", {-7}}}), "y", {-7, -7, -7, -7, 4, 5});
}

TEST(Ops, BatchNormalizationWithRunTimeStatistics) {
  // Two channels of two values: y = (x - mean) * scale / sqrt(var + eps) + bias, eps = 0.
  OnnxModel m(15);
  m.input("x", {1, 2, 2}).input("scale", {2}).input("bias", {2}).input("mean", {2}).input("var", {2});
  OnnxModel::attr(m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}), "epsilon", 0.0f);
  m.output("y");
  Graph g = evaluate(m, {{"x", {1, 3, 10, 20}}, {"scale", {2, 1}}, {"bias", {0, 5}}, {"mean", {1, 10}}, {"var", {4, 25}}});
  // c0: (1-1)*2/2 = 0, (3-1)*2/2 = 2; c1: (10-10)/5 + 5 = 5, (20-10)/5 + 5 = 7.
  expect_values(g, "y", {0, 2, 5, 7});
}

TEST(Ops, GatherOnASecondAxisWithRunTimeIndices) {
  // data [2, 3] = [[1,2,3],[4,5,6]], axis 1, indices [[2, 0]] (shape [1, 2]) -> [2, 1, 2]:
  // [[[3, 1]], [[6, 4]]].
  OnnxModel m(13);
  m.input("data", {2, 3}).input("idx", {1, 2}, onnx::TensorProto::INT64);
  OnnxModel::attr(m.node("Gather", {"data", "idx"}, {"y"}), "axis", int64_t{1});
  m.output("y");
  Graph g = evaluate(m, {{"data", {1, 2, 3, 4, 5, 6}}, {"idx", {2, 0}}});
  EXPECT_EQ(g.tensor("y").shape, (Shape{2, 1, 2}));
  expect_values(g, "y", {3, 1, 6, 4});
}

TEST(Ops, ReductionsOverAnEmptySetGiveTheirIdentity) {
  auto run = [](const char* op) {
    OnnxModel m(18);  // x[:, 1:1] is [2, 0] (an input axis of 0 reads as unknown)
    m.input("x", {2, 3});
    m.ints("axes", {1}, {1}).ints("at", {1}, {1});
    m.node("Slice", {"x", "at", "at", "axes"}, {"empty"});
    m.node(op, {"empty", "axes"}, {"y"});
    m.output("y");
    return evaluate(m, {{"x", {1, 2, 3, 4, 5, 6}}});
  };
  expect_values(run("ReduceSum"), "y", {0, 0});
  const Graph gmax = run("ReduceMax"), gmin = run("ReduceMin");
  const auto &mx = *gmax.tensor("y").data, &mn = *gmin.tensor("y").data;
  ASSERT_EQ(mx.size(), 2u);
  ASSERT_EQ(mn.size(), 2u);
  EXPECT_TRUE(std::isinf(mx[0]) && mx[0] < 0);
  EXPECT_TRUE(std::isinf(mn[1]) && mn[1] > 0);
}

TEST(Ops, DepthwiseConvScalesEachChannelsWindows) {
  // Two channels, group 2, 1x2 kernel, one zero pad at the end: channel 0 [1, 2, 3] with
  // w = (1, 10) -> [21, 32, 3]; channel 1 [4, 5, 6] with w = (2, -1), bias 100 -> [103, 104, 112].
  OnnxModel m(13);
  m.input("x", {1, 2, 1, 3});
  m.floats("w", {2, 1, 1, 2}, {1, 10, 2, -1}).floats("b", {2}, {0, 100});
  auto& c = m.node("Conv", {"x", "w", "b"}, {"y"});
  OnnxModel::attr(c, "group", int64_t{2});
  OnnxModel::attr(c, "pads", std::vector<int64_t>{0, 0, 0, 1});
  m.output("y");
  expect_values(evaluate(m, {{"x", {1, 2, 3, 4, 5, 6}}}), "y", {21, 32, 3, 103, 104, 112});
}

TEST(Ops, ActivationsBuiltFromElementwiseOps) {
  auto run = [](const char* op, std::vector<double> x, std::map<std::string, float> attrs) {
    OnnxModel m(13);
    m.input("x", {static_cast<int64_t>(x.size())});
    auto& n = m.node(op, {"x"}, {"y"});
    for (const auto& [k, v] : attrs) OnnxModel::attr(n, k, v);
    m.output("y");
    return evaluate(m, {{"x", x}});
  };
  const double em1 = std::exp(-1.0) - 1;  // -0.6321...
  expect_values(run("Elu", {-1, 0, 3}, {{"alpha", 2.0f}}), "y", {2 * em1, 0, 3});
  // Selu's defaults: gamma 1.0507009873554805, alpha 1.6732632423543772
  expect_values(run("Selu", {1, -1}, {}), "y", {1.05070102214813232421875, 1.05070102214813232421875 * 1.67326319217681884765625 * em1});
  // Celu alpha 2: max(0, x) + min(0, 2 (exp(x / 2) - 1)); x = -2 -> 2 (e^-1 - 1)
  expect_values(run("Celu", {-2, 3}, {{"alpha", 2.0f}}), "y", {2 * em1, 3});
  expect_values(run("ThresholdedRelu", {0.5, 1, 2}, {}), "y", {0, 0, 2});
  expect_values(run("Softsign", {-3, 1}, {}), "y", {-0.75, 0.5});
  expect_values(run("Shrink", {-2, -1, 1, 2}, {{"lambd", 1.5f}, {"bias", 1.0f}}), "y", {-1, 0, 0, 1});
}

TEST(Ops, PReluSlopesPerChannelAndTileRepeats) {
  OnnxModel m(13);
  m.input("x", {1, 2, 2}).input("slope", {2, 1});
  m.ints("reps", {3}, {1, 1, 2});
  m.node("PRelu", {"x", "slope"}, {"y"});
  m.node("Tile", {"x", "reps"}, {"t"});
  m.output("y").output("t");
  // channel 0 [-1, 2] slope 2 -> [-2, 2]; channel 1 [-3, 4] slope 0.5 -> [-1.5, 4]
  Graph g = evaluate(m, {{"x", {-1, 2, -3, 4}}, {"slope", {2, 0.5}}});
  expect_values(g, "y", {-2, 2, -1.5, 4});
  EXPECT_EQ(g.tensor("t").shape, (Shape{1, 2, 4}));
  expect_values(g, "t", {-1, 2, -1, 2, -3, 4, -3, 4});
}

TEST(Ops, SliceWithNegativeStepsOnARunTimeTensor) {
  // x = 0..9 as [2, 5]: rows reversed (step -1), columns 4, 2, 0 (start 4, step -2).
  OnnxModel m(13);
  m.input("x", {2, 5});
  m.ints("starts", {2}, {1, 4}).ints("ends", {2}, {-3, -6}).ints("axes", {2}, {0, 1}).ints("steps", {2}, {-1, -2});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  m.output("y");
  Graph g = evaluate(m, {{"x", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}});
  EXPECT_EQ(g.tensor("y").shape, (Shape{2, 3}));
  expect_values(g, "y", {9, 7, 5, 4, 2, 0});
}

TEST(Ops, MaxPoolIndicesPointAtTheFirstMaximum) {
  // x = [[1,7,2],[7,3,7],[0,9,4]], 2x2 windows, stride 1. Window (0,0) holds 7 twice: the first
  // in row-major scan, x[0][1], wins (flat 1); (0,1) likewise; the lower windows' 9 is x[2][1]
  // (flat 7). Column-major flat indices (storage_order = 1): h + 3 w, so 3, 3, 5, 5.
  auto run = [](int64_t order) {
    OnnxModel m(12);
    m.input("x", {1, 1, 3, 3});
    auto& n = m.node("MaxPool", {"x"}, {"y", "i"});
    OnnxModel::attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
    OnnxModel::attr(n, "storage_order", order);
    m.output("y").output("i");
    return evaluate(m, {{"x", {1, 7, 2, 7, 3, 7, 0, 9, 4}}});
  };
  Graph g = run(0);
  expect_values(g, "y", {7, 7, 9, 9});
  EXPECT_EQ(g.tensor("i").type, ElemType::Int64);
  expect_values(g, "i", {1, 1, 7, 7});
  expect_values(run(1), "i", {3, 3, 5, 5});
}

TEST(Ops, UnsupportedAttributesAreNamed) {
  OnnxModel a(13);
  a.input("x", {1, 1, 4, 4});
  auto& p = a.node("AveragePool", {"x"}, {"y"});
  OnnxModel::attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(p, "auto_pad", "SOMETIMES");
  a.output("y");
  EXPECT_NE(error_of<UnsupportedError>(a).find("unsupported: op AveragePool (attribute auto_pad = SOMETIMES)"), std::string::npos);

  OnnxModel l(17);
  l.input("x", {2, 4});
  l.floats("scale", {4}, {1, 1, 1, 1});
  OnnxModel::attr(l.node("LayerNormalization", {"x", "scale"}, {"y", "mean"}), "stash_type", int64_t{0});
  l.output("y");
  EXPECT_NE(error_of<UnsupportedError>(l).find("unsupported: op LayerNormalization (attribute stash_type = 0)"), std::string::npos);

  OnnxModel r(13);
  r.input("x", {1, 2, 1, 1});
  OnnxModel::attr(r.node("LRN", {"x"}, {"y"}), "size", int64_t{0});
  r.output("y");
  EXPECT_NE(error_of<ShapeError>(r).find("LRN attribute size = 0"), std::string::npos);

  OnnxModel pad(13);
  pad.input("x", {2});
  pad.ints("pads", {2}, {2, 0});
  attr(pad.node("Pad", {"x", "pads"}, {"y"}), "mode", "reflect");
  pad.output("y");
  EXPECT_NE(error_of<UnsupportedError>(pad).find("unsupported: op Pad (attribute mode = reflect with pads 2/0 >= axis size 2)"), std::string::npos);
}

}  // namespace
}  // namespace trnsim::compiler
