// Activations resident in SBUF between nodes (pass `sbuf-residency`), as the Neuron compiler
// keeps a layer's activations on chip at small batch: a MatMul's result whose readers are
// MatMuls (as their row-major A, or as a full-shape epilogue operand such as a residual) stays
// in SBUF from its producer to its last such reader, and those readers take it from there
// instead of a store to HBM and a load back (two DMA fixed costs and the bytes, on the
// critical path of every node boundary at one row tile). The HBM store is kept only when
// another reader (attention, a library kernel, a graph output) needs the tensor.
//
// Layout: the tensor as [B, M, N] (B batch indices): row r of batch index b lives on
// partition r % 128 at ((b * ceil(M / 128) + r / 128) * N + column) elements past the
// tensor's offset, the row tiles a matmul makes, in its storage dtype (fp32, or bf16 where
// operand-storage narrowed it). Offsets are one allocation over the program: each
// resident tensor is live from its producer to its last resident reader, placed top-down in
// the highest quarter of SBUF beside the tensors live at the same time; every kernel in that
// span holds those bytes (KernelBuilder::sbuf_tile_at), so nothing between overwrites them,
// and the linked program's per-byte dependencies order the readers after the producer.
// Only nodes on one NeuronCore take part (SBUF is per core), and only readers that see the
// tensor with the producer's (B, M): the same row tiles.
//
// Node attributes written: "resident:<tensor>" = {offset bytes per partition, bytes per
// partition, dtype (0 fp32, 1 bf16), store to HBM (0/1), producer (0/1), reads it from SBUF
// (0/1)} on every node of the tensor's span, under each name the node reads it by (a Reshape
// alias included). A node of the span that is neither the producer nor an accepted reader
// only holds the bytes; if it reads the tensor at all, it reads the HBM copy.
#pragma once
#include <map>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/compiler/ir.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::compiler {

// `ahead` receives the kernels it lowered to find their SBUF peaks whose program residency
// does not change (they read and write no resident tensor: holding one emits nothing).
void plan_sbuf_residency(Graph& g, const hw::ChipSpec& chip, DTypePolicy policy, std::map<size_t, Segment>* ahead = nullptr);

// The attribute key for tensor `name`.
std::string resident_attr(const std::string& name);

}  // namespace trnsim::compiler
