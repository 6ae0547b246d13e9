#include "trnsim/kernels/transpose.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/core/run.h"
#include "trnsim/kernels/row_kernel.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::kernels {
namespace {
constexpr int64_t kBlock = 512;          // input columns per load; output columns per PSUM bank
constexpr int64_t kAutoMaxElements = 65536;

void check_shapes(const Tensor& in, const Tensor& out) {
  auto [r, c] = matrix_shape(in, "transpose", "in");
  if (out.shape() != std::vector<int64_t>{c, r} || out.dtype() != in.dtype())
    throw ShapeError(fmt::format("transpose: out must be [{}, {}] of {}", c, r, numerics::name(in.dtype())));
}
}  // namespace

void transpose_tensor(KernelBuilder& kb, const Tensor& in, const Tensor& out) {
  check_shapes(in, out);
  const int64_t rows = in.shape()[0], cols = in.shape()[1];
  const DType dt = in.dtype();
  // Four row tiles of one row block, double-buffered.
  TileRing ir(kb, Space::SBUF, {128, kBlock}, dt, 8, "transpose.in");
  TileRing pr(kb, Space::PSUM, {128, kBlock}, DType::F32, 2, "transpose.psum");
  TileRing orr(kb, Space::SBUF, {128, kBlock}, dt, 3, "transpose.out");
  int copies = 0;
  for (const Span& rb : split(rows, kBlock)) {
    const auto row_tiles = split(rb.size, 128);
    for (const Span& cb : split(cols, kBlock)) {
      std::vector<View> tiles;
      for (const Span& rt : row_tiles) {
        View t = corner(ir.next(), rt.size, cb.size);
        kb.load(t, in.slice({{rb.begin + rt.begin, rb.begin + rt.end()}, cb.range()}));
        tiles.push_back(t);
      }
      for (const Span& ct : split(cb.size, 128)) {
        View ps = corner(pr.next(), ct.size, rb.size);
        for (size_t i = 0; i < row_tiles.size(); ++i)
          kb.transpose(ps.slice({{0, ct.size}, row_tiles[i].range()}),
                       tiles[i].slice({{0, row_tiles[i].size}, ct.range()}));
        View ot = corner(orr.next(), ct.size, rb.size);
        // Alternate the PSUM evacuation between VectorE and ScalarE so neither is the bottleneck.
        Opts evac;
        evac.engine = (copies++ % 2) ? Engine::Scalar : Engine::Vector;
        kb.copy(ot, ps, evac);
        kb.store(out.slice({{cb.begin + ct.begin, cb.begin + ct.end()}, rb.range()}), ot);
      }
    }
  }
}

void transpose_dma(KernelBuilder& kb, const Tensor& in, const Tensor& out) {
  check_shapes(in, out);
  const int64_t rows = in.shape()[0], cols = in.shape()[1];
  View in_t = in.with_partition_axis(1);  // [cols, rows], partition stride 1
  // Pieces of 128 x 2048 spread over the queues so transfers overlap.
  for (const Span& c : split(cols, 128))
    for (const Span& r : split(rows, 2048))
      kb.dma(out.slice({c.range(), r.range()}), in_t.slice({c.range(), r.range()}));
}

isa::Program transpose_program(const hw::ChipSpec& chip, int64_t rows, int64_t cols, DType t,
                               const std::string& method) {
  if (method == "auto") {
    if (rows * cols > kAutoMaxElements) return transpose_program(chip, rows, cols, t, "tensor");
    isa::Program a = transpose_program(chip, rows, cols, t, "tensor");
    isa::Program b = transpose_program(chip, rows, cols, t, "dma");
    core::RunOptions o{.mode = core::Mode::Timing, .record_instructions = false};
    return core::run(a, chip, {}, o).total <= core::run(b, chip, {}, o).total ? std::move(a) : std::move(b);
  }
  if (method != "tensor" && method != "dma")
    throw UnsupportedError(fmt::format("transpose: method '{}' is none of auto, tensor, dma", method));
  KernelBuilder kb(chip);
  kb.set_name(fmt::format("transpose_{}_{}x{}_{}", method, rows, cols, numerics::name(t)));
  auto in = kb.hbm_input("x", {rows, cols}, t);
  auto out = kb.hbm_output("y", {cols, rows}, t);
  if (method == "tensor") transpose_tensor(kb, in, out);
  else transpose_dma(kb, in, out);
  return kb.build();
}

KernelDef transpose_def() {
  KernelDef k;
  k.name = "transpose";
  k.description = "y[cols, rows] = x[rows, cols]^T on TensorE through PSUM, or by strided DMA (--method)";
  k.params = {rows_param(), cols_param(),
              {"method", "tensor (PE array), dma (strided DMA) or auto (the faster)", KernelParam::Kind::Choice, 0, 0, 0,
               {"auto", "tensor", "dma"}}};
  k.dtypes = {DType::BF16, DType::F32};
  k.build = [](const hw::ChipSpec& chip, const KernelArgs& a) {
    return transpose_program(chip, a.i("rows"), a.i("cols"), a.dtype, a.choice("method"));
  };
  k.reference = [](const KernelArgs& a, const Tensors& in) {
    const int64_t rows = a.i("rows"), cols = a.i("cols");
    const auto& x = in.at("x");
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * cols + c];
    return ReferenceOutputs{{"y", std::move(y)}};
  };
  k.tolerance = [](const KernelArgs&) { return Tolerance{0, 0}; };  // data movement: exact
  return k;
}

}  // namespace trnsim::kernels
