// Splitting the work of a node across the chip's NeuronCores.
//
// The "core-split" pass decides, per node (by its op unit's rule, compiler/ops/), how many cores its kernel runs on and records it as
// the node's `cores` attribute (visible in --dump-ir; absent means one): as many as the node has independent
// pieces of work, up to the cores the compile targets. The pieces:
//   MatMul          output row tiles (128 rows) per batch, then column ranges of >= 128 columns
//                   when there are fewer row tiles than cores (every core then re-reads the
//                   rows it needs; the reduction over K stays whole on one core, so results
//                   are bit-identical to one core);
//   FusedAttention  heads (batch x heads);
//   Gather          tiles of 128 indices, each one indirect DMA of the table rows they select;
//   Softmax, LayerNormalization: row tiles of 128 rows;
//   element-wise (Unary/Binary classes but casts and roundings): (row tile, column range)
//                   pieces, like MatMul, when the tensor has at least kMinElementwiseElems.
// Other nodes (movement, gathers) stay on one core. The lowering then emits one
// Program whose cores run their shares concurrently (for_each_core_share), sharing HBM
// bandwidth in the simulator.
//
// Which cores: by default every physical NeuronCore of the chip (ChipSpec::neuron_cores: 8 on
// trn2, 2 on trn1). The chip presets do not model logical-core grouping (trn2's default LNC=2
// pairs physical cores into 4 logical ones); compiling for one logical core is --cores 2 on
// trn2, for one physical core --cores 1.
#pragma once
#include <cstdint>
#include <functional>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

struct LowerCtx;

// A matmul's columns are split among cores in ranges of at least this many (one moving tile
// of 128 columns): the builder tracks dependencies by exact byte sets (access_overlap.h), so
// cores storing interleaved column ranges of one output do not wait for each other.
inline constexpr int64_t kMinColsPerCore = 128;
// Element-wise nodes: pieces are (row tile, column range); when there are fewer row tiles than
// cores their columns are split in ranges of at least this many (256 bytes of fp32 per
// partition per DMA), and nodes of fewer elements than kMinElementwiseElems stay on one core
// (the per-core fixed costs outweigh the share).
inline constexpr int64_t kMinElementwiseCols = 64;
inline constexpr int64_t kMinElementwiseElems = 16384;

// Column ranges per piece so that `pieces` pieces of `cols` columns feed `cores` cores: 1 when
// there are enough pieces, else up to ceil(cores / pieces), each at least `min_cols` wide.
int64_t column_parts(int64_t pieces, int64_t cols, int64_t min_cols, int64_t cores);
// Whether an element-wise node's lowering (lower_elementwise) may be split across cores: not
// the casts and roundings that use extra tile rings of their own.
bool splittable_elementwise(const Node& n);

// Tiles of 128 rows of a tensor viewed as [rows, last axis].
int64_t row_tiles(const Shape& s);
// Independent pieces of work of a node: its unit's OpRules::parallel_units (1 without one).
int64_t parallel_units(const Graph& g, const Node& n);
// Sets each node's `cores` attribute to min(cores, parallel_units) where that is above 1.
void split_across_cores(Graph& g, int cores);

// Runs f(begin, end) once per core of the node's builder (ctx.cores, at most `units`), with the
// builder switched to that core, over a contiguous share [begin, end) of `units`; back on core
// 0 afterwards. Allocations made inside f belong to that core.
void for_each_core_share(LowerCtx& ctx, int64_t units, const std::function<void(int64_t, int64_t)>& f);

}  // namespace trnsim::compiler
