// The kernel registry: every kernel listed once with a reference and a tolerance; argument
// resolution fills defaults and rejects unknown names, bad values and dtypes with messages
// that name the limit.
#include <gtest/gtest.h>

#include <set>

#include "trnsim/common/error.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {
namespace {

TEST(KernelRegistry, ListsTheLibrary) {
  std::set<std::string> names;
  for (const auto& k : kernel_registry()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_TRUE(k.build && k.reference && k.tolerance) << k.name;
    EXPECT_FALSE(k.dtypes.empty()) << k.name;
  }
  for (const char* n : {"matmul", "matmul_naive", "softmax", "layernorm", "rmsnorm", "activation", "transpose", "attention"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(KernelRegistry, UnknownKernelListsTheNames) {
  try {
    find_kernel("conv9d");
    FAIL();
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("softmax"), std::string::npos) << e.what();
  }
}

TEST(KernelRegistry, ResolvesDefaultsAndPythonSpelling) {
  const auto& k = find_kernel("attention");
  auto a = resolve_args(k, {{"head_dim", "64"}}, "fp32");
  EXPECT_EQ(a.i("head-dim"), 64);
  EXPECT_EQ(a.i("seq"), 1024);
  EXPECT_FALSE(a.flag("causal"));
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(resolve_args(k, {}).dtype, DType::BF16);
}

TEST(KernelRegistry, RejectsWithMessagesNamingTheProblem) {
  const auto& k = find_kernel("attention");
  auto message = [&](const std::map<std::string, std::string>& p, const char* dtype = "") -> std::string {
    try {
      resolve_args(k, p, dtype);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message({{"m", "4"}}).find("--heads"), std::string::npos);
  EXPECT_NE(message({{"head-dim", "256"}}).find("[1, 128]"), std::string::npos);
  EXPECT_NE(message({{"seq", "many"}}).find("integer"), std::string::npos);
  EXPECT_NE(message({}, "fp8_e4m3").find("bf16"), std::string::npos);
}

}  // namespace
}  // namespace trnsim::kernels
