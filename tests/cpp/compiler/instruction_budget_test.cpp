// One instruction budget for the whole model: a quarter of the memory limit at 640 host bytes
// per instruction (kernels/kernel_builder.cpp), shared by all its programs. A per-program budget
// let a model of many kernels, each near it, hold several quarters of the limit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::compiler {
namespace {

using testing::OnnxModel;

// `n` Softmax nodes in a chain over [rows, 512]: kernels that do not fuse, of equal size.
CompiledModel softmaxes(int n, int64_t rows) {
  static const hw::ChipSpec chip = hw::load_chip("trn1");
  OnnxModel m;
  m.input("x0", {rows, 512});
  for (int i = 0; i < n; ++i)
    OnnxModel::attr(m.node("Softmax", {"x" + std::to_string(i)}, {"x" + std::to_string(i + 1)}, "sm" + std::to_string(i)), "axis",
                    int64_t{-1});
  m.output("x" + std::to_string(n));
  return compile(import_onnx_bytes(m.bytes()), chip, CompileOptions{});
}

TEST(InstructionBudget, IsForTheWholeModelNotEachProgram) {
  const CompiledModel one = softmaxes(1, 4096);
  const int64_t per = static_cast<int64_t>(one.segments.at(0).program.instruction_count());
  ASSERT_GT(per, 100);
  // A limit whose quarter holds 2.5 programs: one and two compile, three are refused at the third.
  const int64_t limit = 4 * 640 * (5 * per / 2);
  ::setenv("TRNSIM_MAX_MEMORY", std::to_string(limit).c_str(), 1);
  EXPECT_NO_THROW(softmaxes(2, 4096));
  try {
    softmaxes(3, 4096);
    ADD_FAILURE() << "three programs of " << per << " instructions fit a budget of " << 5 * per / 2;
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("node 'sm2'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("beside the " + std::to_string(2 * per) + " of the model's earlier programs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("TRNSIM_MAX_MEMORY"), std::string::npos) << msg;
  }
  ::unsetenv("TRNSIM_MAX_MEMORY");
}

}  // namespace
}  // namespace trnsim::compiler
