// Bulk movement between memory bytes and fp32 values along an access pattern: the fast path
// of every engine (decode a run at a time; fp32 and bf16 inline, other formats through
// numerics). Values are laid out [partition][free index], row-major.
#pragma once
#include <cstdint>
#include <span>

#include "trnsim/isa/access_pattern.h"

namespace trnsim::core {

// Where partition p of a pattern starts in host memory (resolved by the memory owner).
struct PartitionBase {
  uint8_t* base = nullptr;        // byte 0 of partition 0 (SBUF/PSUM) or of the tensor (HBM)
  int64_t partition_bytes = 0;    // SBUF/PSUM: bytes per partition; HBM: unused
  uint8_t* row(const isa::AccessPattern& ap, int p) const;
};

// Reads ap into out (ap.elements() floats).
void read_tile(const isa::AccessPattern& ap, const PartitionBase& mem, float* out);
// Writes in (ap.elements() floats) to ap, rounding to ap.dtype (nearest even).
void write_tile(const isa::AccessPattern& ap, const PartitionBase& mem, const float* in);

// Copies src to dst byte for byte when that is what a DMA does: the same element dtype of
// whole bytes, both patterns walking consecutive elements in each partition, the same shape,
// and distinct memories (no overlap). Returns false (nothing copied) otherwise; the caller
// then goes through fp32 (read_tile + write_tile), which rounds to dst's dtype.
bool copy_tile(const isa::AccessPattern& src, const PartitionBase& src_mem, const isa::AccessPattern& dst,
               const PartitionBase& dst_mem);

// Scalar element access (reference paths and tests).
float read_element(const isa::AccessPattern& ap, const PartitionBase& mem, int p, int64_t i);
void write_element(const isa::AccessPattern& ap, const PartitionBase& mem, int p, int64_t i, float v);

// Round-to-nearest-even fp32 -> bf16 (NaN stays a quiet NaN), and back.
inline uint16_t to_bf16(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float from_bf16(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

}  // namespace trnsim::core
