// The dtype table: rows, names and aliases, storage sizes.
#include <gtest/gtest.h>

#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/numerics/dtype.h"

namespace trnsim::numerics {
namespace {

TEST(DTypeTable, EveryDTypeHasItsRowAndItsNameParsesBack) {
  auto all = all_dtypes();
  ASSERT_EQ(all.size(), static_cast<size_t>(DType::kCount));
  for (DType t : all) {
    EXPECT_EQ(info(t).id, t);
    EXPECT_EQ(parse_dtype(name(t)), t) << name(t);
  }
}

TEST(DTypeTable, LimitsFollowFromTheBitLayout) {
  // Float formats with subnormals: min_subnormal = 2^(1 - bias - mantissa_bits).
  for (DType t : {DType::F32, DType::BF16, DType::F16, DType::F8E4M3, DType::F8E5M2,
                  DType::F8E3M4, DType::F4E2M1}) {
    const auto& d = info(t);
    EXPECT_EQ(d.min_normal, std::ldexp(1.0, 1 - d.exponent_bias)) << d.name;
    EXPECT_EQ(d.min_subnormal, std::ldexp(1.0, 1 - d.exponent_bias - d.mantissa_bits)) << d.name;
    EXPECT_EQ(d.bits, 1 + d.exponent_bits + d.mantissa_bits) << d.name;
  }
  EXPECT_EQ(info(DType::F8E4M3).max_finite, 448.0);
  EXPECT_EQ(info(DType::F8E5M2).max_finite, 57344.0);
  EXPECT_EQ(info(DType::F8E3M4).max_finite, 15.5);
  EXPECT_EQ(info(DType::F16).max_finite, 65504.0);
  EXPECT_EQ(info(DType::E8M0).max_finite, std::ldexp(1.0, 127));
}

TEST(DTypeTable, MxFormatsNameTheirElementAndScale) {
  EXPECT_EQ(info(DType::MXFP4).element, DType::F4E2M1);
  EXPECT_EQ(info(DType::MXFP8E4M3).element, DType::F8E4M3);
  EXPECT_EQ(info(DType::MXFP8E5M2).element, DType::F8E5M2);
  for (DType t : {DType::MXFP4, DType::MXFP8E4M3, DType::MXFP8E5M2}) {
    EXPECT_TRUE(is_block_format(t));
    EXPECT_EQ(info(t).block_size, 32);
    EXPECT_EQ(info(t).scale, DType::E8M0);
  }
  EXPECT_FALSE(is_block_format(DType::F8E4M3));
}

TEST(DTypeTable, AliasesFromMlDtypesAndNumpy) {
  EXPECT_EQ(parse_dtype("bfloat16"), DType::BF16);
  EXPECT_EQ(parse_dtype("float8_e4m3fn"), DType::F8E4M3);
  EXPECT_EQ(parse_dtype("E4M3"), DType::F8E4M3);
  EXPECT_EQ(parse_dtype("float4_e2m1fn"), DType::F4E2M1);
  EXPECT_EQ(parse_dtype("float8_e8m0fnu"), DType::E8M0);
  EXPECT_EQ(parse_dtype("int8"), DType::I8);
  EXPECT_EQ(parse_dtype("fp9"), std::nullopt);
}

TEST(DTypeTable, UnknownNameThrowsListingTheAcceptedOnes) {
  try {
    dtype_from_string("fp9");
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'fp9'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("mxfp4"), std::string::npos) << msg;
  }
}

TEST(DTypeTable, StorageBytes) {
  EXPECT_EQ(storage_bytes(DType::F32, 10), 40);
  EXPECT_EQ(storage_bytes(DType::BF16, 10), 20);
  EXPECT_EQ(storage_bytes(DType::F8E4M3, 10), 10);
  EXPECT_EQ(storage_bytes(DType::F4E2M1, 3), 2);         // two per byte, rounded up
  EXPECT_EQ(storage_bytes(DType::MXFP4, 64), 32 + 2);    // + one E8M0 per 32
  EXPECT_EQ(storage_bytes(DType::MXFP8E4M3, 33), 33 + 2);
  EXPECT_THROW(storage_bytes(DType::F32, -1), ShapeError);
}

}  // namespace
}  // namespace trnsim::numerics
