// TensorE: the 128x128 systolic array. Matmul contracts over the partition axis into PSUM
// (fp32 accumulate); transpose is an identity matmul.
//
// Cost (NKI ISA pages), in TensorE cycles:
//   MultiplyMoving   max(min(64, M), N) / rate(dtype)   (rate: bf16 1, fp32 0.25, fp8 on v3 2;
//                                                        a sparse stationary: sparse_speedup)
//   LoadStationary   M * stationary_load_cycles_fraction / rate, needed when the stationary
//                    operand differs from the previous matmul's; it runs behind the previous
//                    MultiplyMoving when TensorE was busy (so it is hidden when that one took at
//                    least as long), and in full when TensorE had been idle waiting for data.
//   transpose        max(P, min(64, F)) / rate
//   matmul.mx        as matmul at the rate of the operands' MX formats (dtype_rate of
//                    mxfp8_e4m3 / mxfp8_e5m2 / mxfp4: 4 on Trainium3, K=512 per pass in
//                    hardware; here K <= 128 per instruction at a quarter of the cycles)
#pragma once
#include <array>
#include <vector>

#include "trnsim/core/buffer_pool.h"
#include "trnsim/core/unit.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::core {

class Scratchpad;

class TensorEngine : public Unit {
 public:
  using Unit::Unit;
  ~TensorEngine() override;
  static double multiply_cycles(const isa::Op& op, const hw::TensorEngineSpec& te);
  static double load_stationary_cycles(const isa::Matmul& mm, const hw::TensorEngineSpec& te);

 protected:
  sim::Time begin(const isa::Instruction& ins, sim::Time t) override;

 private:
  // Functional operands as fp32 rows: data[k * ld + i].
  struct Operand {
    const float* data;
    int64_t ld;
  };
  struct CachedTile {
    isa::AccessPattern ap;
    uint64_t stamp = 0;      // the memory's write stamp when decoded
    uint64_t last_use = 0;
    RawFloats values;
  };
  static constexpr size_t kCacheFloats = size_t{16} << 20;  // 64 MiB of decoded tiles
  Operand operand(const isa::AccessPattern& ap, int slot, bool mutate);
  Scratchpad* scratchpad(const isa::AccessPattern& ap);
  double pair_rate(numerics::DType a, numerics::DType b);  // rate(), memoised
  void execute(const isa::Matmul& mm);
  void execute(const isa::MatmulMx& mm);
  void execute(const isa::Transpose& tr);

  bool have_stationary_ = false;
  isa::AccessPattern stationary_{};   // what the PE array holds
  bool stationary_sparse_ = false;
  bool stationary_mx_ = false;         // the PE array holds an MX stationary (with its scales)
  isa::AccessPattern stationary_scale_{};
  sim::Time last_end_;
  double last_multiply_cycles_ = 0;
  struct RateMemo {
    bool valid = false;
    numerics::DType a{}, b{};
    double rate = 1;
  };
  std::array<RateMemo, 4> rate_memo_{};
  unsigned next_memo_ = 0;
  std::vector<CachedTile> cache_;  // decoded operand tiles (functional mode)
  size_t cache_floats_ = 0;
  uint64_t use_clock_ = 0;         // matmuls executed (LRU clock)
};

}  // namespace trnsim::core
