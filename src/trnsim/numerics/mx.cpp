// OCP MX v1.0 block quantisation: E8M0 shared scales over blocks of 32 elements (convert.h
// states the rule and its edge cases).
#include <algorithm>
#include <cmath>
#include <string>

#include "trnsim/common/error.h"
#include "trnsim/numerics/convert.h"
#include "trnsim/numerics/float_codec.h"

namespace trnsim::numerics {
namespace {
using detail::f2u;
using detail::u2f;

constexpr uint8_t kNaNScale = 0xFF;
constexpr int kMaxBlock = 64;  // scratch size; OCP MX blocks are 32

const DTypeInfo& mx_info(DType mx, const char* what) {
  const DTypeInfo& d = info(mx);
  if (d.block_size <= 1)
    throw UnsupportedError(std::string(what) + ": " + std::string(d.name) +
                           " is not an MX block format (mxfp8_e4m3, mxfp8_e5m2, mxfp4)");
  if (d.block_size > kMaxBlock)
    throw UnsupportedError(std::string(what) + ": blocks of " + std::to_string(d.block_size) +
                           " exceed the supported " + std::to_string(kMaxBlock));
  return d;
}

size_t num_blocks(size_t n, int block) { return (n + block - 1) / block; }

void check_counts(const char* what, size_t n, size_t n_elements, size_t n_scales, int block) {
  if (n_elements != n)
    throw ShapeError(std::string(what) + ": " + std::to_string(n) + " values but " +
                     std::to_string(n_elements) + " element slots");
  if (n_scales != num_blocks(n, block))
    throw ShapeError(std::string(what) + ": " + std::to_string(n) + " values need " +
                     std::to_string(num_blocks(n, block)) + " scales (blocks of " +
                     std::to_string(block) + "), got " + std::to_string(n_scales));
}

// E8M0 code of one block: floor(log2(amax)) - emax_elem, clamped below to -127; NaN for a
// block with NaN or inf. Comparing |x| bit patterns orders NaN > inf > finite.
uint8_t block_scale(const float* x, size_t n, int emax_elem) {
  uint32_t amax = 0;
  for (size_t i = 0; i < n; ++i) amax = std::max(amax, f2u(x[i]) & 0x7FFFFFFFu);
  if (amax >= 0x7F800000u) return kNaNScale;
  const int e = int(amax >> 23);  // biased; 0 (zero or subnormal) lies below the clamp anyway
  const int shared = e == 0 ? -127 : std::max(e - 127 - emax_elem, -127);
  return static_cast<uint8_t>(shared + 127);
}

}  // namespace

void mx_quantize(std::span<const float> in, DType mx, std::span<uint8_t> elements,
                 std::span<uint8_t> scales, const ConvertOptions& opt) {
  const DTypeInfo& d = mx_info(mx, "mx_quantize");
  check_counts("mx_quantize", in.size(), elements.size(), scales.size(), d.block_size);
  const int emax_elem = std::ilogb(info(d.element).max_finite);  // 8, 15, 2
  ConvertOptions eopt = opt;
  eopt.overflow = Overflow::Saturate;
  float scaled[kMaxBlock];
  for (size_t b = 0, start = 0; start < in.size(); ++b, start += d.block_size) {
    const size_t n = std::min<size_t>(d.block_size, in.size() - start);
    const uint8_t s = block_scale(&in[start], n, emax_elem);
    scales[b] = s;
    if (s == kNaNScale) {
      std::fill_n(&elements[start], n, uint8_t{0});
      continue;
    }
    // x / 2^shared as a multiply by 2^-shared (-shared in [-125, 127]: a normal float), exact.
    const float inv = u2f(uint32_t(254 - s) << 23);
    for (size_t i = 0; i < n; ++i) scaled[i] = in[start + i] * inv;
    eopt.offset = opt.offset + start;
    encode(std::span<const float>(scaled, n), d.element, elements.subspan(start, n), eopt);
  }
}

void mx_dequantize(std::span<const uint8_t> elements, std::span<const uint8_t> scales, DType mx,
                   std::span<float> out) {
  const DTypeInfo& d = mx_info(mx, "mx_dequantize");
  check_counts("mx_dequantize", out.size(), elements.size(), scales.size(), d.block_size);
  decode(elements, d.element, out);
  for (size_t b = 0, start = 0; start < out.size(); ++b, start += d.block_size) {
    const size_t n = std::min<size_t>(d.block_size, out.size() - start);
    const float scale = decode(scales[b], DType::E8M0);  // 0xFF decodes to NaN
    for (size_t i = 0; i < n; ++i) out[start + i] *= scale;
  }
}

}  // namespace trnsim::numerics
