// What the lowering of one IR node works with: a KernelBuilder for the node's kernel (one
// Program per node, so every instruction is attributed to the op that emitted it), the HBM
// tensors it reads and writes (every IR tensor is held in HBM as flat fp32), and strided
// views of those tensors (broadcasts, transposes, slices are strides, not copies).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"
#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::compiler {

using kernels::KernelBuilder;
using kernels::View;
using numerics::DType;

// A strided view of an IR tensor in element units: element i (multi-index) is at
// offset + sum(index[d] * strides[d]).
struct SView {
  std::string tensor;
  int64_t offset = 0;
  Shape shape;
  std::vector<int64_t> strides;
};
SView row_major(const std::string& tensor, const Shape& shape);
SView broadcast_view(const std::string& tensor, const Shape& in, const Shape& out);

// A set of same-shape views walked as [outer..., rows, cols] after merging axes that are
// contiguous in every view: rows go on the partitions, cols along the free axis.
struct TilePlan {
  Shape outer;
  std::vector<std::vector<int64_t>> outer_strides;  // per view
  int64_t rows = 1, cols = 1;
  std::vector<int64_t> row_stride, col_stride;       // per view
};
TilePlan plan_tiles(const std::vector<SView>& views);

struct LowerCtx {
  LowerCtx(KernelBuilder& b, const Graph& gr, const Node& nd, DType mm) : kb(b), g(gr), n(nd), matmul_dtype(mm) {}
  KernelBuilder& kb;
  const Graph& g;
  const Node& n;
  DType matmul_dtype;  // TensorE operand dtype of the policy (fp32, bf16 or fp8)
  int cores = 1;       // NeuronCores of the node's builder (the core-split pass's `cores`)

  // The segment's HBM tensor for an IR tensor: declared on first use, as an input unless it is
  // one of the node's outputs.
  const kernels::Tensor& hbm(const std::string& name);
  // The same, declared with a 2-D shape for the library kernels that take [rows, cols].
  const kernels::Tensor& hbm_shaped(const std::string& name, std::vector<int64_t> shape);
  // A constant (a weight) declared in HBM in `t`, the dtype the kernel reads it as: Neuron
  // casts matmul weights ahead of time under --auto-cast, so they stream at that width.
  const kernels::Tensor& hbm_const_as(const std::string& name, DType t);
  kernels::Tensor scratch(const std::string& base, int64_t elements);
  // The [rows of the partition range] x [cols] tile view of `v` for one outer index.
  View view(const SView& v, const TilePlan& p, size_t which, int64_t outer_index, kernels::Span rows,
            kernels::Span cols);
  std::map<std::string, kernels::Tensor> tensors;
  std::vector<std::string> reads, writes;

  // An activation resident in SBUF (compiler/sbuf_residency.h): the tile this kernel holds at
  // its fixed offset, the tensor's row length, whether it is also stored to HBM, and whether
  // this node produces it.
  struct Resident {
    kernels::Tile tile;
    int64_t m = 0, cols = 0;  // rows per batch index, row length
    bool store = false, producer = false;
    // Rows [r0, r0 + nrows) of batch index `bi` (within one row tile of 128) x columns `c`.
    View rows(int64_t bi, int64_t r0, int64_t nrows, kernels::Span c) const;
  };
  std::map<std::string, Resident> resident;
  const Resident* resident_of(const std::string& name) const;
  // Holds every resident tile live across this node (its "resident:" attributes), so that the
  // kernel's own allocations stay clear of them. Called before the node is lowered.
  void hold_resident();
};

// Walks a plan: f(outer_index, row span, col span) per tile (rows <= 128, cols <= max_cols).
void for_each_tile(const TilePlan& p, int64_t max_cols,
                   const std::function<void(int64_t, kernels::Span, kernels::Span)>& f);

}  // namespace trnsim::compiler
