// Access patterns and the hardware rules of isa::validate.
#include <gtest/gtest.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/isa/validate.h"

using namespace trnsim;
using namespace trnsim::isa;
using numerics::DType;

namespace {

const hw::ChipSpec& trn1() {
  static hw::ChipSpec c = hw::load_chip("trn1");
  return c;
}

AccessPattern sb(int P, int64_t F, DType t, int64_t off = 0, int start = 0) {
  return tile_ap(Space::SBUF, start, P, off, F, t);
}
AccessPattern ps(int P, int64_t F, int64_t off = 0) { return tile_ap(Space::PSUM, 0, P, off, F, DType::F32); }

template <class E>
std::string error_of(const Op& op, Engine e, const hw::ChipSpec& chip = trn1()) {
  Program p;
  try {
    validate(Instruction{op, {}}, e, chip, p);
  } catch (const E& err) {
    return err.what();
  }
  return "";
}

TEST(AccessPattern, ShapesExtentsAndRuns) {
  AccessPattern a = sb(128, 512, DType::BF16, 1024);
  EXPECT_EQ(a.free_size(), 512);
  EXPECT_EQ(a.bytes(), 128 * 512 * 2);
  EXPECT_TRUE(a.contiguous());
  EXPECT_EQ(a.byte_extent(), (std::pair<int64_t, int64_t>{1024, 2048}));
  a.ndims = 2;
  a.dims[0] = {1024, 4};  // 4 rows of 64 elements, 1024 apart
  a.dims[1] = {1, 64};
  EXPECT_FALSE(a.contiguous());
  EXPECT_EQ(a.contiguous_run(), 64);
  EXPECT_EQ(a.element_offset(65), 1024 + 1);
  EXPECT_EQ(a.byte_extent().second, 1024 + (3 * 1024 + 63 + 1) * 2);
}

// Untrusted patterns (a forged .tpg): an extent that overflows int64 is a ShapeError, not a
// wrapped interval that passes the bounds check (UBSan reported the overflow here).
TEST(AccessPattern, ExtentOverflowIsAShapeError) {
  AccessPattern a = sb(1, 1, DType::F32, 0);
  a.space = Space::HBM;
  a.partitions = 5;
  for (int64_t stride : {int64_t{1} << 62, -(int64_t{1} << 62), INT64_MAX, INT64_MIN}) {
    a.partition_stride = stride;
    EXPECT_THROW(a.byte_extent(), ShapeError) << stride;
  }
  a.partition_stride = 1;
  a.offset = INT64_MAX - 2;
  EXPECT_THROW(a.byte_extent(), ShapeError);
  a.offset = 0;
  a.ndims = 1;
  a.dims[0] = {INT32_MAX, INT32_MAX};  // 2^62 elements of 4 bytes: past int64 in bytes
  EXPECT_THROW(a.byte_extent(), ShapeError);
  a.dims[0] = {INT32_MAX, 2};  // large but representable: exact
  EXPECT_EQ(a.byte_extent().second, (int64_t{INT32_MAX} + 4 + 1) * 4);
}

TEST(Validate, MatmulLimits) {
  auto mm = [](AccessPattern out, AccessPattern st, AccessPattern mv) { return Op(Matmul{out, st, mv, true, true, false}); };
  EXPECT_EQ(error_of<ShapeError>(mm(ps(128, 512), sb(128, 128, DType::BF16), sb(128, 512, DType::BF16)), Engine::Tensor), "");
  EXPECT_NE(error_of<ShapeError>(mm(ps(128, 1024), sb(128, 128, DType::BF16), sb(128, 1024, DType::BF16)), Engine::Tensor)
                .find("N=1024 > 512"), std::string::npos);
  EXPECT_NE(error_of<ShapeError>(mm(ps(128, 512), sb(128, 256, DType::BF16), sb(128, 512, DType::BF16)), Engine::Tensor)
                .find("M=256 > 128"), std::string::npos);
  EXPECT_NE(error_of<ShapeError>(mm(ps(128, 512, 1024), sb(128, 128, DType::BF16), sb(128, 512, DType::BF16)), Engine::Tensor)
                .find("PSUM bank"), std::string::npos);
  EXPECT_NE(error_of<UnsupportedError>(mm(ps(128, 512), sb(128, 128, DType::F8E3M4), sb(128, 512, DType::F8E3M4)), Engine::Tensor)
                .find("does not take fp8_e3m4"), std::string::npos);
  Matmul sp{ps(128, 512), sb(128, 128, DType::BF16), sb(128, 512, DType::BF16), true, true, true};
  EXPECT_NE(error_of<UnsupportedError>(sp, Engine::Tensor).find("4:16"), std::string::npos);
  EXPECT_NE(error_of<UnsupportedError>(mm(ps(128, 512), sb(128, 128, DType::BF16), sb(128, 512, DType::BF16)), Engine::Vector)
                .find("runs on TensorE"), std::string::npos);
}

TEST(Validate, PartitionsAndCapacity) {
  TensorCopy too_many{sb(128, 64, DType::F32), sb(128, 64, DType::F32)};
  too_many.in.partitions = 129;
  EXPECT_NE(error_of<ShapeError>(too_many, Engine::Vector).find("a core has 128"), std::string::npos);
  TensorCopy bad_start{sb(64, 64, DType::F32, 0, 32), sb(64, 64, DType::F32, 4096)};
  EXPECT_NE(error_of<ShapeError>(bad_start, Engine::Vector).find("starts at partition 32"), std::string::npos);
  TensorCopy ok_start{sb(32, 64, DType::F32, 0, 96), sb(32, 64, DType::F32, 4096, 96)};
  EXPECT_EQ(error_of<ShapeError>(ok_start, Engine::Vector), "");
  TensorCopy past_end{sb(128, 64, DType::F32, 192 * 1024 - 128), sb(128, 64, DType::F32)};
  EXPECT_NE(error_of<ShapeError>(past_end, Engine::Vector).find("holds 196608 bytes"), std::string::npos);
  TensorCopy psum_wide{sb(128, 8192, DType::F32), tile_ap(Space::PSUM, 0, 128, 0, 4097, DType::BF16)};
  EXPECT_NE(error_of<ShapeError>(psum_wide, Engine::Vector).find("at most 4096"), std::string::npos);
  Dma into_psum{ps(128, 8), sb(128, 8, DType::F32)};
  EXPECT_NE(error_of<UnsupportedError>(into_psum, Engine::Dma).find("cannot write PSUM"), std::string::npos);
}

TEST(Validate, ProgramChecksSemaphoresAndNamesTheInstruction) {
  Program p;
  p.cores.resize(1);
  p.semaphores = 1;
  Instruction i{Memset{sb(128, 8, DType::F32), 0.0f}, {}};
  i.sync.add_wait(3, 1);
  p.cores[0].stream(Engine::Vector).push_back(i);
  try {
    validate(p, trn1());
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("core0.VectorE instruction #0"), std::string::npos) << e.what();
  }
}

TEST(Sync, WaitsMergePerSemaphore) {
  Sync s;
  s.add_wait(2, 3);
  s.add_wait(2, 5);
  s.add_wait(1, 1);
  EXPECT_EQ(s.num_waits, 2);
  EXPECT_EQ(s.waits[0].value, 5u);
}

}  // namespace
