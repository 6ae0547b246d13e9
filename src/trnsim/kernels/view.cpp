// Views over tiles and HBM tensors: slicing, reshaping, partition-axis choice.
#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/kernels/kernel_builder.h"

namespace trnsim::kernels {

using isa::AccessPattern;

namespace {
std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += fmt::format("{}{}", i ? ", " : "", s[i]);
  return r + "]";
}
}  // namespace

View View::slice(std::initializer_list<Range> ranges) const {
  return slice(std::vector<Range>(ranges));
}

View View::slice(const std::vector<Range>& ranges) const {
  if (ranges.size() > shape_.size())
    throw ShapeError(fmt::format("slice: {} ranges for a view of shape {}", ranges.size(), shape_str(shape_)));
  AccessPattern a = ap_;
  std::vector<int64_t> shape = shape_;
  const int eb = a.element_bytes();
  for (size_t axis = 0; axis < ranges.size(); ++axis) {
    Range r = ranges[axis];
    if (r.begin < 0 || r.end > shape_[axis] || r.begin >= r.end)
      throw ShapeError(fmt::format("slice: range [{}, {}) of axis {} is outside a view of shape {}",
                                   r.begin, r.end, axis, shape_str(shape_)));
    shape[axis] = r.size();
    if (axis == 0) {
      if (a.space == isa::Space::HBM) {
        a.offset += r.begin * a.partition_stride * eb;
      } else {
        a.start_partition = static_cast<uint8_t>(a.start_partition + r.begin);
      }
      a.partitions = static_cast<uint16_t>(r.size());
    } else {
      auto& d = a.dims[axis - 1];
      a.offset += r.begin * d.stride * eb;
      d.count = static_cast<int32_t>(r.size());
    }
  }
  return View(a, shape, buffer_);
}

View View::reshape(std::vector<int64_t> shape) const {
  if (!ap_.contiguous())
    throw ShapeError("reshape: the view's free axes are not contiguous");
  if (shape.empty() || shape[0] != shape_[0])
    throw ShapeError("reshape: the partition axis must stay the same");
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  if (n != ap_.free_size())
    throw ShapeError(fmt::format("reshape: {} has {} free elements, {} has {}", shape_str(shape_),
                                 ap_.free_size(), shape_str(shape), n));
  if (shape.size() - 1 > isa::kMaxFreeDims) throw ShapeError("reshape: at most 4 free axes");
  AccessPattern a = ap_;
  a.ndims = static_cast<uint8_t>(shape.size() - 1);
  int64_t stride = 1;
  for (int d = a.ndims - 1; d >= 0; --d) {
    a.dims[d] = {static_cast<int32_t>(stride), static_cast<int32_t>(shape[d + 1])};
    stride *= shape[d + 1];
  }
  return View(a, std::move(shape), buffer_);
}

View View::bitcast(DType t) const {
  AccessPattern a = ap_;
  a.dtype = t;
  if (a.element_bytes() != ap_.element_bytes())
    throw ShapeError(fmt::format("bitcast: {} and {} differ in width", numerics::name(ap_.dtype),
                                 numerics::name(t)));
  return View(a, shape_, buffer_);
}

View Tensor::with_partition_axis(int axis) const {
  const auto& s = shape();
  if (axis < 0 || axis >= static_cast<int>(s.size()))
    throw ShapeError(fmt::format("tensor '{}': no axis {}", name_, axis));
  if (s.size() - 1 > isa::kMaxFreeDims) throw ShapeError("tensor view: at most 4 free axes");
  std::vector<int64_t> strides(s.size());
  int64_t st = 1;
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) { strides[d] = st; st *= s[d]; }
  AccessPattern a = ap();
  a.partition_stride = strides[axis];
  std::vector<int64_t> shape = {s[axis]};
  int nd = 0;
  for (int d = 0; d < static_cast<int>(s.size()); ++d) {
    if (d == axis) continue;
    a.dims[nd++] = {static_cast<int32_t>(strides[d]), static_cast<int32_t>(s[d])};
    shape.push_back(s[d]);
  }
  if (nd == 0) { a.dims[0] = {1, 1}; nd = 1; shape.push_back(1); }
  a.ndims = static_cast<uint8_t>(nd);
  a.partitions = static_cast<uint16_t>(std::min<int64_t>(s[axis], 65535));
  return View(a, shape, buffer());
}

}  // namespace trnsim::kernels
