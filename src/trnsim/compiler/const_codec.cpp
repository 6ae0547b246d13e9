#include "trnsim/compiler/const_codec.h"

#include <cmath>
#include <cstring>

#include "trnsim/compiler/initialiser.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::compiler {

namespace {

std::optional<numerics::DType> narrow_format(ElemType t) {
  switch (t) {
    case ElemType::Int8: return numerics::DType::I8;
    case ElemType::Float16: return numerics::DType::F16;
    case ElemType::BFloat16: return numerics::DType::BF16;
    case ElemType::Float8E4M3FN:
    case ElemType::Float8E5M2:
    case ElemType::Float4E2M1:
    case ElemType::Float8E8M0: return narrow_dtype(t);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> pack_narrow(const std::vector<double>& values, ElemType t) {
  const auto f = narrow_format(t);
  if (!f) return std::nullopt;
  const int bits = storage_bits(t);
  std::string out(static_cast<size_t>(encoded_bytes(t, static_cast<int64_t>(values.size()))), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const float x = static_cast<float>(values[i]);
    if (static_cast<double>(x) != values[i] && !std::isnan(values[i])) return std::nullopt;
    const uint32_t c = numerics::encode(x, *f);
    const float back = numerics::decode(c, *f);
    if (!(back == x || (std::isnan(back) && std::isnan(x))) || std::signbit(back) != std::signbit(x)) return std::nullopt;
    if (bits == 16) {
      const auto h = static_cast<uint16_t>(c);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else if (bits == 8) {
      out[i] = static_cast<char>(c);
    } else {
      out[i / 2] = static_cast<char>(static_cast<uint8_t>(out[i / 2]) | ((c & 0xF) << (i % 2 ? 4 : 0)));
    }
  }
  return out;
}

}  // namespace trnsim::compiler
