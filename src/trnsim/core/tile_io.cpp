#include "trnsim/core/tile_io.h"

#include <cstring>
#include <string>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::core {

using isa::AccessPattern;
using numerics::DType;

uint8_t* PartitionBase::row(const AccessPattern& ap, int p) const {
  if (ap.space == isa::Space::HBM)
    return base + ap.offset + static_cast<int64_t>(p) * ap.partition_stride * ap.element_bytes();
  return base + static_cast<int64_t>(ap.start_partition + p) * partition_bytes + ap.offset;
}

namespace {

void check_format(DType t) {
  if (numerics::is_block_format(t))
    throw UnsupportedError(std::string("functional mode stores element formats in tiles; ") +
                           std::string(numerics::name(t)) + " is a block format (keep elements and scales in separate tiles)");
}

// Decode n elements of t starting at src with element stride `stride` (elements).
void decode_run(DType t, const uint8_t* src, int64_t stride, int64_t n, float* out) {
  switch (t) {
    case DType::F32:
      if (stride == 1) { std::memcpy(out, src, n * 4); return; }
      for (int64_t i = 0; i < n; ++i) std::memcpy(out + i, src + i * stride * 4, 4);
      return;
    case DType::BF16: {
      if (stride == 1) {  // a shift per element; the compiler vectorises this loop
        for (int64_t i = 0; i < n; ++i) {
          uint16_t b;
          std::memcpy(&b, src + 2 * i, 2);
          uint32_t u = static_cast<uint32_t>(b) << 16;
          std::memcpy(out + i, &u, 4);
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, src + i * stride * 2, 2);
        out[i] = from_bf16(b);
      }
      return;
    }
    default: break;
  }
  int eb = numerics::info(t).bits >= 16 ? numerics::info(t).bits / 8 : 1;
  if (eb == 2) {
    if (stride == 1 && reinterpret_cast<uintptr_t>(src) % alignof(uint16_t) == 0) {
      numerics::decode(std::span<const uint16_t>(reinterpret_cast<const uint16_t*>(src), n), t, std::span<float>(out, n));
      return;
    }
    thread_local std::vector<uint16_t> tmp;
    tmp.resize(n);
    for (int64_t i = 0; i < n; ++i) std::memcpy(&tmp[i], src + i * stride * 2, 2);
    numerics::decode(std::span<const uint16_t>(tmp.data(), n), t, std::span<float>(out, n));
  } else if (eb == 1) {
    if (stride == 1) {
      numerics::decode(std::span<const uint8_t>(src, n), t, std::span<float>(out, n));
    } else {
      thread_local std::vector<uint8_t> tmp;
      tmp.resize(n);
      for (int64_t i = 0; i < n; ++i) tmp[i] = src[i * stride];
      numerics::decode(std::span<const uint8_t>(tmp.data(), n), t, std::span<float>(out, n));
    }
  } else {
    throw UnsupportedError("tile_io: unsupported element width");
  }
}

void encode_run(DType t, uint8_t* dst, int64_t stride, int64_t n, const float* in) {
  switch (t) {
    case DType::F32:
      if (stride == 1) { std::memcpy(dst, in, n * 4); return; }
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride * 4, in + i, 4);
      return;
    case DType::BF16:
      if (stride == 1) {  // to_bf16 without branches, so that the loop vectorises
        for (int64_t i = 0; i < n; ++i) {
          uint32_t u;
          std::memcpy(&u, in + i, 4);
          const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
          const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
          const uint16_t b = static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : rounded);
          std::memcpy(dst + 2 * i, &b, 2);
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        uint16_t b = to_bf16(in[i]);
        std::memcpy(dst + i * stride * 2, &b, 2);
      }
      return;
    default: break;
  }
  int eb = numerics::info(t).bits >= 16 ? numerics::info(t).bits / 8 : 1;
  if (eb == 2) {
    std::vector<uint16_t> tmp(n);
    numerics::encode(std::span<const float>(in, n), t, std::span<uint16_t>(tmp));
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride * 2, &tmp[i], 2);
  } else if (eb == 1) {
    std::vector<uint8_t> tmp(n);
    numerics::encode(std::span<const float>(in, n), t, std::span<uint8_t>(tmp));
    for (int64_t i = 0; i < n; ++i) dst[i * stride] = tmp[i];
  } else {
    throw UnsupportedError("tile_io: unsupported element width");
  }
}

// Calls f(byte pointer of the run start, element stride, count, free index of the run start)
// for each innermost run of one partition.
template <class F>
void for_each_run(const AccessPattern& ap, uint8_t* row, F&& f) {
  const int eb = ap.element_bytes();
  if (ap.ndims == 0) { f(row, 1, 1, 0); return; }
  const int last = ap.ndims - 1;
  const int64_t inner = ap.dims[last].count, istride = ap.dims[last].stride;
  int64_t outer = 1;
  for (int d = 0; d < last; ++d) outer *= ap.dims[d].count;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off = 0, rem = o;
    for (int d = last - 1; d >= 0; --d) {
      off += (rem % ap.dims[d].count) * ap.dims[d].stride;
      rem /= ap.dims[d].count;
    }
    f(row + off * eb, istride, inner, o * inner);
  }
}

}  // namespace

bool copy_tile(const AccessPattern& src, const PartitionBase& src_mem, const AccessPattern& dst,
               const PartitionBase& dst_mem) {
  if (src.dtype != dst.dtype || numerics::info(src.dtype).bits < 8 || numerics::is_block_format(src.dtype)) return false;
  if (src.partitions != dst.partitions || src.free_size() != dst.free_size()) return false;
  if (!src.contiguous() || !dst.contiguous()) return false;
  if (src.space == dst.space && (src.space != isa::Space::HBM || src.tensor == dst.tensor)) return false;
  const size_t n = static_cast<size_t>(src.free_size() * src.element_bytes());
  for (int p = 0; p < src.partitions; ++p) std::memcpy(dst_mem.row(dst, p), src_mem.row(src, p), n);
  return true;
}

void read_tile(const AccessPattern& ap, const PartitionBase& mem, float* out) {
  check_format(ap.dtype);
  const int64_t fs = ap.free_size();
  for (int p = 0; p < ap.partitions; ++p) {
    float* o = out + p * fs;
    for_each_run(ap, mem.row(ap, p), [&](uint8_t* src, int64_t stride, int64_t n, int64_t i0) {
      decode_run(ap.dtype, src, stride, n, o + i0);
    });
  }
}

void write_tile(const AccessPattern& ap, const PartitionBase& mem, const float* in) {
  check_format(ap.dtype);
  const int64_t fs = ap.free_size();
  for (int p = 0; p < ap.partitions; ++p) {
    const float* s = in + p * fs;
    for_each_run(ap, mem.row(ap, p), [&](uint8_t* dst, int64_t stride, int64_t n, int64_t i0) {
      encode_run(ap.dtype, dst, stride, n, s + i0);
    });
  }
}

float read_element(const AccessPattern& ap, const PartitionBase& mem, int p, int64_t i) {
  float v;
  decode_run(ap.dtype, mem.row(ap, p) + ap.element_offset(i) * ap.element_bytes(), 1, 1, &v);
  return v;
}

void write_element(const AccessPattern& ap, const PartitionBase& mem, int p, int64_t i, float v) {
  encode_run(ap.dtype, mem.row(ap, p) + ap.element_offset(i) * ap.element_bytes(), 1, 1, &v);
}

}  // namespace trnsim::core
