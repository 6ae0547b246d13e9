#include "trnsim/compiler/lower_context.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/compiler/initialiser.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

SView row_major(const std::string& tensor, const Shape& shape) {
  return {tensor, 0, shape, row_major_strides(shape)};
}

SView broadcast_view(const std::string& tensor, const Shape& in, const Shape& out) {
  return {tensor, 0, out, broadcast_strides(in, out)};
}

TilePlan plan_tiles(const std::vector<SView>& views) {
  const size_t nv = views.size();
  // Drop size-1 axes, then merge neighbours that are contiguous in every view.
  Shape dims;
  std::vector<std::vector<int64_t>> st(nv);
  for (size_t d = 0; d < views[0].shape.size(); ++d) {
    if (views[0].shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t v = 0; v < nv && merge; ++v) merge = st[v].back() == views[v].strides[d] * views[0].shape[d];
    if (merge) {
      dims.back() *= views[0].shape[d];
      for (size_t v = 0; v < nv; ++v) st[v].back() = views[v].strides[d];
    } else {
      dims.push_back(views[0].shape[d]);
      for (size_t v = 0; v < nv; ++v) st[v].push_back(views[v].strides[d]);
    }
  }
  TilePlan p;
  p.outer_strides.assign(nv, {});
  p.row_stride.assign(nv, 0);
  p.col_stride.assign(nv, 0);
  if (dims.empty()) return p;
  const size_t r = dims.size();
  // The largest divisor <= 128 of the last axis: the rows it folds into.
  int64_t fold = 1;
  for (int64_t c = std::min<int64_t>(128, dims.back()); c >= 1; --c)
    if (dims.back() % c == 0) { fold = c; break; }
  // One long axis, or a short row axis (a batch of 8 beside a long contiguous row, which
  // would leave most partitions idle): the last axis is folded into [rows, cols], the rest
  // goes outer.
  if (r == 1 || dims[r - 2] < fold) {
    p.rows = fold;
    p.cols = dims.back() / fold;
    p.outer.assign(dims.begin(), dims.end() - 1);
    for (size_t v = 0; v < nv; ++v) {
      p.col_stride[v] = st[v][r - 1];
      p.row_stride[v] = st[v][r - 1] * p.cols;
      p.outer_strides[v].assign(st[v].begin(), st[v].end() - 1);
    }
    return p;
  }
  p.rows = dims[r - 2];
  p.cols = dims[r - 1];
  p.outer.assign(dims.begin(), dims.end() - 2);
  for (size_t v = 0; v < nv; ++v) {
    p.row_stride[v] = st[v][r - 2];
    p.col_stride[v] = st[v][r - 1];
    p.outer_strides[v].assign(st[v].begin(), st[v].end() - 2);
  }
  return p;
}

void for_each_tile(const TilePlan& p, int64_t max_cols,
                   const std::function<void(int64_t, kernels::Span, kernels::Span)>& f) {
  const int64_t outer = numel(p.outer);
  for (int64_t o = 0; o < outer; ++o)
    for (const auto& rs : kernels::split(p.rows, 128))
      for (const auto& cs : kernels::split(p.cols, max_cols)) f(o, rs, cs);
}

const kernels::Tensor& LowerCtx::hbm(const std::string& name) {
  if (auto it = tensors.find(name); it != tensors.end()) return it->second;
  return hbm_shaped(name, {std::max<int64_t>(1, numel(g.tensor(name).shape))});
}

const kernels::Tensor& LowerCtx::hbm_shaped(const std::string& name, std::vector<int64_t> elems) {
  auto it = tensors.find(name);
  if (it != tensors.end()) return it->second;
  bool is_out = std::find(n.outputs.begin(), n.outputs.end(), name) != n.outputs.end();
  // fp16/bf16 tensors of the model are held in their own type, so every op's result is rounded
  // as ONNX specifies (the DMA converts on the way in and out); everything else is fp32.
  const ElemType et = g.tensor(name).type;
  DType dt = et == ElemType::Float16 ? DType::F16 : et == ElemType::BFloat16 ? DType::BF16 : DType::F32;
  if (g.is_const(name) && storage_bits(et) < 16)  // quantised weights: held as their codes
    dt = et == ElemType::Int8 ? DType::I8 : et == ElemType::UInt8 ? DType::F32 : narrow_dtype(et);
  kernels::Tensor k = is_out ? kb.hbm_output(name, elems, dt) : kb.hbm_input(name, elems, dt);
  (is_out ? writes : reads).push_back(name);
  return tensors.emplace(name, k).first->second;
}

const kernels::Tensor& LowerCtx::hbm_const_as(const std::string& name, DType t) {
  if (auto it = tensors.find(name); it != tensors.end()) return it->second;
  if (!g.is_const(name)) return hbm(name);
  // A constant stored narrower than `t` (int8/fp8/fp4 codes) streams at its own width.
  if (storage_bits(g.tensor(name).type) < numerics::info(t).bits) return hbm(name);
  reads.push_back(name);
  return tensors.emplace(name, kb.hbm_input(name, {std::max<int64_t>(1, numel(g.tensor(name).shape))}, t)).first->second;
}

View LowerCtx::Resident::rows(int64_t bi, int64_t r0, int64_t nrows, kernels::Span c) const {
  const int64_t t = bi * ((m + 127) / 128) + r0 / 128, p = r0 % 128;
  return tile.slice({{p, p + nrows}, {t * cols + c.begin, t * cols + c.end()}});
}

const LowerCtx::Resident* LowerCtx::resident_of(const std::string& name) const {
  auto it = resident.find(name);
  return it == resident.end() ? nullptr : &it->second;
}

void LowerCtx::hold_resident() {
  std::map<int64_t, kernels::Tile> held;  // by offset: aliases share the producer's tile
  for (const auto& [key, value] : n.attrs) {
    if (key.rfind("resident:", 0) != 0) continue;
    const auto& v = std::get<std::vector<int64_t>>(value);
    const std::string name = key.substr(9);
    const DType dt = v[2] ? DType::BF16 : DType::F32;
    auto it = held.find(v[0]);
    if (it == held.end())
      it = held.emplace(v[0], kb.sbuf_tile_at(v[0], {128, v[1] / (v[2] ? 2 : 4)}, dt, "resident." + name)).first;
    if (v.size() > 5 && v[5] == 0) continue;  // the space is held, but this node reads the HBM copy
    const Shape& s = g.tensor(name).shape;
    resident[name] = Resident{it->second, s.size() < 2 ? 1 : s[s.size() - 2], s.empty() ? 1 : s.back(), v[3] != 0, v[4] != 0};
  }
}

kernels::Tensor LowerCtx::scratch(const std::string& base, int64_t elements) {
  return kb.hbm_scratch(fmt::format("{}.{}", n.name, base), {std::max<int64_t>(1, elements)}, DType::F32);
}

View LowerCtx::view(const SView& v, const TilePlan& p, size_t which, int64_t outer_index, kernels::Span rows,
                    kernels::Span cols) {
  const kernels::Tensor& t = hbm(v.tensor);
  int64_t off = v.offset;
  for (int d = static_cast<int>(p.outer.size()) - 1; d >= 0; --d) {
    off += (outer_index % p.outer[d]) * p.outer_strides[which][d];
    outer_index /= p.outer[d];
  }
  off += rows.begin * p.row_stride[which] + cols.begin * p.col_stride[which];
  isa::AccessPattern ap = t.ap();
  ap.offset = off * ap.element_bytes();
  ap.partitions = static_cast<uint16_t>(rows.size);
  ap.partition_stride = p.row_stride[which];
  ap.ndims = 1;
  ap.dims = {};
  ap.dims[0] = {static_cast<int32_t>(p.col_stride[which]), static_cast<int32_t>(cols.size)};
  return View(ap, {rows.size, cols.size}, t.buffer());
}

}  // namespace trnsim::compiler
