#include "trnsim/compiler/tile_views.h"

namespace trnsim::compiler {
namespace {

kernels::View with_dims(isa::AccessPattern ap, int64_t parts, const FreeDims& dims, int buffer) {
  ap.partitions = static_cast<uint16_t>(parts);
  ap.ndims = static_cast<uint8_t>(dims.size());
  ap.dims = {};
  int64_t free = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    ap.dims[i] = {static_cast<int32_t>(dims[i].first), static_cast<int32_t>(dims[i].second)};
    free *= dims[i].second;
  }
  return kernels::View(ap, {parts, free}, buffer);
}

}  // namespace

kernels::View sbuf_pattern(const kernels::View& tile, int64_t parts, int64_t offset, const FreeDims& dims) {
  isa::AccessPattern ap = tile.ap();
  ap.offset += offset * ap.element_bytes();
  return with_dims(ap, parts, dims, tile.buffer());
}

kernels::View hbm_pattern(const kernels::Tensor& t, int64_t offset, int64_t parts, int64_t pstride, const FreeDims& dims) {
  isa::AccessPattern ap = t.ap();
  ap.offset = offset * ap.element_bytes();
  ap.partition_stride = pstride;
  return with_dims(ap, parts, dims, t.buffer());
}

}  // namespace trnsim::compiler
