#include "trnsim/isa/access_pattern.h"

#include <algorithm>

#include <fmt/format.h>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"

namespace trnsim::isa {

std::string_view space_name(Space s) {
  switch (s) {
    case Space::HBM: return "hbm";
    case Space::SBUF: return "sbuf";
    case Space::PSUM: return "psum";
  }
  return "?";
}

int AccessPattern::element_bytes() const {
  int bits = numerics::info(dtype).bits;
  return bits >= 8 ? bits / 8 : 1;  // sub-byte formats occupy a byte each in tiles
}

bool AccessPattern::contiguous() const {
  int64_t expect = 1;
  for (int d = ndims - 1; d >= 0; --d) {
    if (dims[d].count == 1) continue;
    if (dims[d].stride != expect) return false;
    expect *= dims[d].count;
  }
  return true;
}

int64_t AccessPattern::contiguous_run() const {
  int64_t run = 1;
  for (int d = ndims - 1; d >= 0; --d) {
    if (dims[d].count == 1) continue;
    if (dims[d].stride != run) break;
    run *= dims[d].count;
  }
  return run;
}

// Checked arithmetic: a pattern from a file whose extent overflows int64 is a ShapeError, so a
// wrapped extent can never pass a bounds check (isa/validate.cpp).
std::pair<int64_t, int64_t> AccessPattern::byte_extent() const {
  const char* what = "access pattern extent";
  int64_t lo = 0, hi = 0;  // element offsets relative to `offset`
  auto add_span = [&](int64_t stride, int64_t count) {
    const int64_t span = checked_mul(stride, count - 1, what);
    if (span < 0) lo = checked_add(lo, span, what); else hi = checked_add(hi, span, what);
  };
  for (int d = 0; d < std::min<int>(ndims, kMaxFreeDims); ++d)
    if (dims[d].count > 0) add_span(dims[d].stride, dims[d].count);
  if (space == Space::HBM && partitions > 1) add_span(partition_stride, partitions);
  const int eb = element_bytes();
  return {checked_add(offset, checked_mul(lo, eb, what), what),
          checked_add(offset, checked_mul(checked_add(hi, 1, what), eb, what), what)};
}


AccessPattern AccessPattern::with_partitions(int start, int count) const {
  AccessPattern a = *this;
  if (space == Space::HBM) {
    a.offset += static_cast<int64_t>(start) * partition_stride * element_bytes();
  } else {
    a.start_partition = static_cast<uint8_t>(start_partition + start);
  }
  a.partitions = static_cast<uint16_t>(count);
  return a;
}

std::string AccessPattern::to_string() const {
  std::string dimstr;
  for (int d = 0; d < ndims; ++d)
    dimstr += fmt::format("{}[{},{}]", d ? "" : "", dims[d].stride, dims[d].count);
  if (space == Space::HBM)
    return fmt::format("hbm#{}[p{}x{} +{}B {} {}]", tensor, partitions, partition_stride, offset,
                       dimstr, numerics::name(dtype));
  return fmt::format("{}[{}:{}, +{}B {} {}]", space_name(space), start_partition,
                     start_partition + partitions, offset, dimstr, numerics::name(dtype));
}

AccessPattern tile_ap(Space s, int start_partition, int partitions, int64_t byte_offset,
                      int64_t free_elems, DType t) {
  AccessPattern a;
  a.space = s;
  a.dtype = t;
  a.ndims = 1;
  a.start_partition = static_cast<uint8_t>(start_partition);
  a.partitions = static_cast<uint16_t>(partitions);
  a.offset = byte_offset;
  a.dims[0] = {1, static_cast<int32_t>(free_elems)};
  return a;
}

}  // namespace trnsim::isa
