// Lowering of element-wise ops and data movement.
//  - element-wise (unary, binary with broadcasting, Where, Cast): a generic tiled kernel: each
//    operand tile is DMA'd from its strided view into SBUF (fp32), computed on ScalarE
//    (activation functions) or VectorE (ALU ops), and stored.
//  - movement (Transpose, Slice, Expand, Concat, Pad): HBM -> HBM DMAs whose access patterns
//    do the permutation / window / broadcast.
#pragma once
#include "trnsim/compiler/lower_context.h"

namespace trnsim::compiler {

// One element-wise op on tiles (also the matmul epilogue). `b`/`c` are the other operands of
// binary ops / Where; `tmp` a scratch tile of the same shape; `n` carries attributes.
void apply_elementwise(KernelBuilder& kb, const Node& n, OpKind op, const View& out, const View& a,
                       const View* b, const View* c, const View& tmp, bool integral);

// A tiled element-wise kernel over same-shape views; `compute` gets SBUF tiles.
using TileCompute = std::function<void(const View& out, const std::vector<View>& ins, const View& tmp)>;
void elementwise_kernel(LowerCtx& ctx, const SView& out, const std::vector<SView>& ins, const TileCompute& compute);

void copy_kernel(LowerCtx& ctx, const SView& out, const SView& in);

void lower_elementwise(LowerCtx& ctx);
void lower_movement(LowerCtx& ctx);

}  // namespace trnsim::compiler
