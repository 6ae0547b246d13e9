// The runtime's report: time attributed per op, timing mode gives the same time without data,
// and bad inputs are errors that name the input.
#include <gtest/gtest.h>

#include "../compiler/onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/runtime/random_inputs.h"
#include "trnsim/runtime/report_json.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;

struct Fixture {
  hw::ChipSpec chip = hw::load_chip("trn2");
  compiler::CompiledModel cm;
  Fixture() {
    OnnxModel m;
    m.input("x", {-1, 64}).floats("w", {64, 256}, testing::values(64 * 256, 1));
    m.node("MatMul", {"x", "w"}, {"h"}, "mm");
    m.node("Softmax", {"h"}, {"y"}, "sm");
    m.output("y");
    compiler::CompileOptions o;
    o.batch = 32;
    cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), chip, o);
  }
};

TEST(Report, OpTimesAddUpAndTimingModeAgrees) {
  Fixture f;
  LoadedModel lm(f.cm, f.chip);
  auto fun = lm.run(random_inputs(f.cm, 1), core::Mode::Functional);
  auto tim = lm.run({}, core::Mode::Timing);
  ASSERT_EQ(fun.report.ops.size(), 2u);
  EXPECT_EQ(fun.report.ops[0].node, "mm");
  EXPECT_EQ(fun.report.ops[1].op, "Softmax");
  double sum = 0;
  for (const auto& o : fun.report.ops) sum += o.time_s;
  EXPECT_DOUBLE_EQ(sum, fun.report.time_s);
  EXPECT_DOUBLE_EQ(fun.report.time_s, tim.report.time_s);  // one program, two fidelities
  EXPECT_TRUE(tim.outputs.empty());
  EXPECT_EQ(fun.outputs.at("y").size(), 32u * 256u);
  EXPECT_GT(fun.report.hbm_bytes, 64.0 * 256 * 4);          // at least the weights were read
  EXPECT_NEAR(fun.report.ops[0].tensor_flops, 2.0 * 32 * 64 * 256, 2.0 * 32 * 64 * 256 * 0.5);
  auto j = report_json(fun.report, 32);
  EXPECT_EQ(j["ops"].size(), 2u);
  EXPECT_TRUE(j["engines"].contains("TensorE"));
}

TEST(Report, MissingOrMisSizedInputIsAShapeError) {
  Fixture f;
  LoadedModel lm(f.cm, f.chip);
  EXPECT_THROW(lm.run({}, core::Mode::Functional), ShapeError);
  EXPECT_THROW(lm.run({{"x", std::vector<float>(5)}}, core::Mode::Functional), ShapeError);
}

}  // namespace
}  // namespace trnsim::runtime
