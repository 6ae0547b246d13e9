#include "trnsim/compiler/resize_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

namespace {
[[noreturn]] void refuse(const Node& n, const std::string& what) {
  throw UnsupportedError(fmt::format("unsupported: op Resize (attribute {}) at node '{}'", what, n.name));
}

// The input coordinate that output coordinate x samples (ONNX's coordinate_transformation_mode).
double source_coordinate(const std::string& mode, double x, double scale, int64_t in, int64_t out) {
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") {
    // The resized length before flooring (in x scale), as onnx.reference and onnxruntime use it.
    const double resized = static_cast<double>(in) * scale;
    return resized == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (resized - 1.0);
  }
  if (mode == "asymmetric") return x / scale;
  if (mode == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double center = static_cast<double>(in) / 2.0;
    const double offset = center * (1.0 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return x / scale;  // not reached: checked by resize_params
}

int64_t nearest_index(const std::string& mode, double x) {
  const double f = std::floor(x);
  if (x == f) return static_cast<int64_t>(f);
  if (mode == "floor") return static_cast<int64_t>(f);
  if (mode == "ceil") return static_cast<int64_t>(f) + 1;
  const double frac = x - f;
  if (mode == "round_prefer_ceil") return static_cast<int64_t>(frac >= 0.5 ? f + 1 : f);
  return static_cast<int64_t>(frac > 0.5 ? f + 1 : f);  // round_prefer_floor
}
}  // namespace

ResizeParams resize_params(const Graph& g, const Node& n, const Shape& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  // Resize-10 has inputs (X, scales) and samples like Upsample: asymmetric, floor.
  const bool v10 = n.inputs.size() == 2;
  const std::string mode = n.s("mode", "nearest");
  const std::string ctm = v10 ? "asymmetric" : n.s("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = v10 ? "floor" : n.s("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear") refuse(n, "mode = " + mode);
  // tf_half_pixel_for_centers (Resize-11 only) has no reference left to check it against:
  // neither onnx.reference nor onnxruntime implements it.
  if (ctm == "tf_crop_and_resize" || ctm == "tf_half_pixel_for_centers") refuse(n, "coordinate_transformation_mode = " + ctm);
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" && ctm != "align_corners" && ctm != "asymmetric" &&
      ctm != "half_pixel_symmetric")
    throw ShapeError(fmt::format("node '{}': Resize coordinate_transformation_mode '{}' is not an ONNX mode", n.name, ctm));
  if (nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" && nearest != "floor" && nearest != "ceil")
    throw ShapeError(fmt::format("node '{}': Resize nearest_mode '{}' is not an ONNX mode", n.name, nearest));
  const std::string policy = n.s("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    throw ShapeError(fmt::format("node '{}': Resize keep_aspect_ratio_policy '{}' is not an ONNX policy", n.name, policy));
  std::vector<int64_t> axes = n.ints("axes", {});
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  for (auto& a : axes) a = normalize_axis(a, rank, n.name);

  // Per listed axis: sizes win when given; else scales (output = floor(in * scale)).
  const size_t scales_at = v10 ? 1 : 2, sizes_at = 3;
  const bool has_sizes = !v10 && n.inputs.size() > sizes_at && !n.inputs[sizes_at].empty() &&
                         numel(g.tensor(n.inputs[sizes_at]).shape) > 0;
  std::vector<double> scale(axes.size(), 1.0);
  ResizeParams p;
  p.out = in;
  if (has_sizes) {
    const auto sizes = const_ints(g, n, sizes_at);
    if (sizes.size() != axes.size())
      throw ShapeError(fmt::format("node '{}': Resize has {} sizes for {} axes", n.name, sizes.size(), axes.size()));
    for (size_t i = 0; i < axes.size(); ++i) {
      if (sizes[i] < 1) throw ShapeError(fmt::format("node '{}': Resize size {} must be positive", n.name, sizes[i]));
      p.out[axes[i]] = sizes[i];
      scale[i] = static_cast<double>(sizes[i]) / static_cast<double>(in[axes[i]]);
    }
    if (policy != "stretch") {  // one scale for every listed axis (the least or the most), sizes rounded half up
      const double s1 = policy == "not_larger" ? *std::min_element(scale.begin(), scale.end()) : *std::max_element(scale.begin(), scale.end());
      for (size_t i = 0; i < axes.size(); ++i) {
        scale[i] = s1;
        p.out[axes[i]] = static_cast<int64_t>(s1 * static_cast<double>(in[axes[i]]) + 0.5);
      }
    }
  } else {
    if (n.inputs.size() <= scales_at || n.inputs[scales_at].empty())
      throw ShapeError(fmt::format("node '{}': Resize needs scales or sizes", n.name));
    const auto& sc = const_values(g, n, scales_at);
    if (sc.size() != axes.size())
      throw ShapeError(fmt::format("node '{}': Resize has {} scales for {} axes", n.name, sc.size(), axes.size()));
    for (size_t i = 0; i < axes.size(); ++i) {
      const float s = static_cast<float>(sc[i]);  // ONNX scales are float: compute as onnxruntime does
      if (!(s > 0)) throw ShapeError(fmt::format("node '{}': Resize scale {} must be positive", n.name, sc[i]));
      p.out[axes[i]] = static_cast<int64_t>(std::floor(static_cast<double>(in[axes[i]]) * static_cast<double>(s)));
      scale[i] = s;
    }
  }
  if (n.i("antialias", 0) != 0 && mode == "linear")
    for (size_t i = 0; i < axes.size(); ++i)
      if (scale[i] < 1.0) refuse(n, "antialias = 1 when downsampling");

  // An interpolation matrix is out x in doubles; past this a resize is refused, not attempted.
  constexpr int64_t kMaxMatrix = int64_t{1} << 25;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i], ni = in[a], no = p.out[a];
    if (std::count(axes.begin(), axes.end(), a) > 1)
      throw ShapeError(fmt::format("node '{}': Resize lists axis {} twice", n.name, a));
    if (ni == no && scale[i] == 1.0) continue;  // sampled at the same points: the identity
    if (ni < 1 || no < 1) throw ShapeError(fmt::format("node '{}': Resize of an empty axis {}", n.name, a));
    if (ni * no > kMaxMatrix)
      throw UnsupportedError(fmt::format("unsupported: op Resize (axis {} from {} to {}: an interpolation matrix of more than "
                                         "2^25 elements) at node '{}'", a, ni, no, n.name));
    p.axes.push_back({a, ni, no, scale[i]});
  }
  p.mode = mode;
  p.coordinate_mode = ctm;
  p.nearest_mode = nearest;
  return p;
}

std::vector<double> resize_matrix(const ResizeParams& p, const ResizeAxis& ax) {
  const int64_t ni = ax.in, no = ax.out;
  std::vector<double> m(static_cast<size_t>(no * ni), 0.0);
  for (int64_t o = 0; o < no; ++o) {
    const double x = source_coordinate(p.coordinate_mode, static_cast<double>(o), ax.scale, ni, no);
    double* row = m.data() + o * ni;
    if (p.mode == "nearest") {
      row[std::clamp<int64_t>(nearest_index(p.nearest_mode, x), 0, ni - 1)] = 1.0;
    } else {  // linear, edge-clamped (onnx.reference pads with the edge values)
      const double c = std::clamp(x, 0.0, static_cast<double>(ni - 1));
      const int64_t x0 = static_cast<int64_t>(std::floor(c)), x1 = std::min(x0 + 1, ni - 1);
      const double w = c - static_cast<double>(x0);
      row[x0] += 1.0 - w;
      row[x1] += w;
    }
  }
  return m;
}

}  // namespace trnsim::compiler
