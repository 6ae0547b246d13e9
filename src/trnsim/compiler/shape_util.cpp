#include "trnsim/compiler/shape_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "trnsim/common/error.h"
#include "trnsim/common/checked.h"

namespace trnsim::compiler {

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& node) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError(fmt::format("node '{}': shapes {} and {} do not broadcast", node, shape_str(a), shape_str(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = checked_mul(st[i + 1], s[i + 1], "strides of a shape");
  return st;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  auto rs = row_major_strides(in);
  std::vector<int64_t> st(out.size(), 0);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : rs[i];
  return st;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& node) {
  // ONNX's range [-rank, rank-1]: empty for a rank-0 tensor (a scalar has no axis; the ops
  // that take one on a scalar pass the rank they work in, e.g. Unsqueeze's output rank).
  if (rank == 0)
    throw ShapeError(fmt::format("node '{}': axis {} of a rank-0 tensor (a scalar has no axes)", node, axis));
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw ShapeError(fmt::format("node '{}': axis {} out of range for rank {}", node, axis, rank));
  return a;
}

SliceRange slice_range(int64_t start, int64_t end, int64_t step, int64_t dim) {
  SliceRange r;
  r.step = step;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    // ceil(d / step) as (d - 1) / step + 1: no overflow for a step near INT64_MAX (fuzz, onnx)
    r.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    const int64_t back = step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
    r.count = start > end ? (start - end - 1) / back + 1 : 0;
  }
  r.start = start;
  return r;
}

}  // namespace trnsim::compiler
