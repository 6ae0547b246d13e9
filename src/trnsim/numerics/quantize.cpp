// quantize(): round fp32 values in place to what a dtype holds (encode, then decode), as the
// simulator does when it writes a tile of that dtype.
#include <algorithm>
#include <cstdint>
#include <span>

#include "trnsim/numerics/codec_dispatch.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::numerics {
namespace {

constexpr size_t kChunk = 1024;  // codes round-trip through a stack buffer of this many

template <class Bits>
void roundtrip(std::span<float> v, DType t, const ConvertOptions& opt) {
  Bits codes[kChunk];
  for (size_t i = 0; i < v.size(); i += kChunk) {
    const size_t n = std::min(kChunk, v.size() - i);
    ConvertOptions o = opt;
    o.offset = opt.offset + i;
    auto part = v.subspan(i, n);
    encode(std::span<const float>(part.data(), n), t, std::span<Bits>(codes, n), o);
    decode(std::span<const Bits>(codes, n), t, part);
  }
}

void roundtrip_mx(std::span<float> v, DType t, const ConvertOptions& opt) {
  const size_t block = static_cast<size_t>(info(t).block_size);
  const size_t chunk = kChunk / block * block;  // whole blocks, so scales line up
  uint8_t elems[kChunk];
  uint8_t scales[kChunk];
  for (size_t i = 0; i < v.size(); i += chunk) {
    const size_t n = std::min(chunk, v.size() - i);
    const size_t nb = (n + block - 1) / block;
    ConvertOptions o = opt;
    o.offset = opt.offset + i;
    auto part = v.subspan(i, n);
    mx_quantize(part, t, std::span<uint8_t>(elems, n), std::span<uint8_t>(scales, nb), o);
    mx_dequantize(std::span<const uint8_t>(elems, n), std::span<const uint8_t>(scales, nb), t,
                  part);
  }
}

}  // namespace

void quantize(std::span<float> values, DType t, const ConvertOptions& opt) {
  if (is_block_format(t)) return roundtrip_mx(values, t, opt);
  if (t == DType::F32 && opt.overflow == Overflow::Default) return;  // nothing to round
  detail::with_codec(t, "quantize", [&](auto codec) {
    using Bits = typename decltype(codec)::Bits;
    roundtrip<Bits>(values, t, opt);
  });
}

}  // namespace trnsim::numerics
