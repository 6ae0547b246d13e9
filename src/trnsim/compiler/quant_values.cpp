#include "trnsim/compiler/quant_values.h"

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/compiler/host_eval.h"
#include "trnsim/numerics/convert.h"
#include "trnsim/numerics/sparsity.h"

namespace trnsim::compiler {

QuantValues quantize_scaled(const std::vector<double>& v, int64_t rows, int64_t cols, ElemType code_type, int per_axis) {
  const double qmax = code_type == ElemType::Int8 ? 127.0 : 448.0;
  const int64_t groups = per_axis < 0 ? 1 : per_axis == 0 ? rows : cols;
  std::vector<double> amax(static_cast<size_t>(groups), 0.0);
  auto group = [&](int64_t r, int64_t c) { return static_cast<size_t>(per_axis < 0 ? 0 : per_axis == 0 ? r : c); };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double& a = amax[group(r, c)];
      a = std::max(a, std::fabs(v[static_cast<size_t>(r * cols + c)]));
    }
  QuantValues q;
  q.type = code_type;
  for (double a : amax) q.scales.push_back(a > 0 && std::isfinite(a) ? static_cast<float>(a / qmax) : 1.0);
  q.codes.resize(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      const double x = v[i] / q.scales[group(r, c)];
      q.codes[i] = (code_type == ElemType::Int8 ? std::clamp(std::nearbyint(x), -127.0, 127.0) : round_to(code_type, x)) + 0.0;  // no -0
    }
  return q;
}

QuantValues quantize_mx(const std::vector<double>& v, int64_t rows, int64_t cols, ElemType element, int block_axis) {
  const numerics::DType mx = element == ElemType::Float4E2M1 ? numerics::DType::MXFP4 : numerics::DType::MXFP8E4M3;
  const numerics::DType el = narrow_dtype(element);
  const int64_t along = block_axis == 0 ? rows : cols, across = block_axis == 0 ? cols : rows;
  if (along % 32 != 0) throw ShapeError("MX quantisation needs a multiple of 32 values along the blocked axis");
  QuantValues q;
  q.type = element;
  q.scale_type = ElemType::Float8E8M0;
  q.codes.resize(v.size());
  q.scales.resize(static_cast<size_t>(along / 32 * across));
  std::vector<float> block(32);
  std::vector<uint8_t> codes(32), scale(1);
  for (int64_t a = 0; a < across; ++a)
    for (int64_t b = 0; b < along / 32; ++b) {
      auto index = [&](int64_t j) {  // element j of block b of line a
        const int64_t t = b * 32 + j;
        return static_cast<size_t>(block_axis == 0 ? t * cols + a : a * cols + t);
      };
      for (int64_t j = 0; j < 32; ++j) block[static_cast<size_t>(j)] = static_cast<float>(v[index(j)]);
      numerics::mx_quantize(block, mx, codes, scale);
      for (int64_t j = 0; j < 32; ++j) q.codes[index(j)] = numerics::decode(codes[static_cast<size_t>(j)], el);
      q.scales[static_cast<size_t>(block_axis == 0 ? b * cols + a : a * (cols / 32) + b)] = numerics::decode(scale[0], numerics::DType::E8M0);
    }
  return q;
}

std::vector<double> prune_4_16(const std::vector<double>& v, int64_t k, int64_t n) {
  if (k % 16 != 0) throw ShapeError("4:16 pruning needs K a multiple of 16");
  // numerics::sparse_pack prunes along rows: hand it W^T (a row per output channel).
  std::vector<float> wt(static_cast<size_t>(k * n)), out(wt.size()), vals(static_cast<size_t>(k * n / 4));
  std::vector<uint8_t> idx(vals.size());
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) wt[static_cast<size_t>(c * k + r)] = static_cast<float>(v[static_cast<size_t>(r * n + c)]);
  numerics::sparse_pack(wt, static_cast<size_t>(n), static_cast<size_t>(k), vals, idx);
  numerics::sparse_unpack(vals, idx, static_cast<size_t>(n), static_cast<size_t>(k), out);
  std::vector<double> r(v.size());
  for (int64_t i = 0; i < k; ++i)
    for (int64_t c = 0; c < n; ++c) r[static_cast<size_t>(i * n + c)] = out[static_cast<size_t>(c * k + i)];
  return r;
}

}  // namespace trnsim::compiler
