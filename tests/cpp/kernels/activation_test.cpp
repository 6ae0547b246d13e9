// Every ScalarE function through the activation kernel, fp32 (1e-5 relative + 1e-6) and a
// few in bf16 (1e-2 relative), over partial row tiles and several column chunks.
#include "library_kernel_check.h"
#include "trnsim/isa/instruction.h"

namespace trnsim::kernels {
namespace {
using testing::run_checked;

class ActivationKernel : public ::testing::TestWithParam<int> {};

TEST_P(ActivationKernel, Fp32MatchesReference) {
  std::string f(isa::act_name(static_cast<isa::ActFunc>(GetParam())));
  run_checked("activation", "trn2", {{"rows", "130"}, {"cols", "300"}, {"func", f}, {"chunk", "128"}}, "fp32");
}

INSTANTIATE_TEST_SUITE_P(AllFunctions, ActivationKernel, ::testing::Range(0, static_cast<int>(isa::ActFunc::kCount)),
                         [](const auto& info) { return std::string(isa::act_name(static_cast<isa::ActFunc>(info.param))); });

TEST(ActivationKernelBf16, CommonFunctions) {
  for (const char* f : {"gelu", "silu", "exp", "rsqrt", "tanh"})
    run_checked("activation", "trn1", {{"rows", "128"}, {"cols", "512"}, {"func", f}}, "bf16");
}

TEST(ActivationKernelArgs, UnknownFunctionNamesTheChoices) {
  try {
    resolve_args(find_kernel("activation"), {{"func", "swish"}});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("gelu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trnsim::kernels
