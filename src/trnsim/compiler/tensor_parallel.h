// Tensor parallelism (Megatron-style): the IR of a model split across `tp` chips.
//
// A column-parallel MatMul (replicated activations x a constant [K, N] weight, N split: Q/K/V
// projections, MLP up/gate) starts a region; its result flows through per-column ops
// (element-wise, activations, Reshape/Transpose into heads, per-head MatMul and Softmax, RoPE
// slices and concats, GQA's Expand) into a row-parallel MatMul (the split axis contracted
// against a constant [K, N] weight split along K: attention output projection, MLP down) whose
// per-rank result is a partial sum; an all-reduce (sum) of the partials follows. A region
// without a row-parallel MatMul whose split result is a graph output (the LM head's logits) is
// vocabulary-parallel: its output blocks are all-gathered. Everything outside such regions
// (embeddings, norms, residual adds) runs replicated.
//
// Policy when a region cannot be split: a structural reason (a split graph output in a region
// that also has a row-parallel MatMul, an op that mixes the split axis, a replicated
// non-constant operand that spans it) leaves that region replicated and is recorded in `notes`;
// a split dimension that does not divide by tp (heads, intermediate size) in an otherwise
// splittable region is a ShapeError naming the node and the dimension, except in a
// vocabulary-parallel region (left replicated with a note: a vocabulary often does not divide);
// a model with no splittable region at all is an UnsupportedError.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// A collective of the plan. All-reduce (sum): the partial sums of a row-parallel MatMul.
// All-gather: a vocabulary-parallel LM head, a column-parallel MatMul whose split result is a
// graph output (the logits); each rank computes a block of `axis` and the blocks are gathered.
struct TpCollective {
  enum class Kind : uint8_t { AllReduce, AllGather } kind = Kind::AllReduce;
  std::string node;      // the MatMul that produced the rank's piece
  std::string partial;   // the rank's piece (an output of the shard graph)
  std::string result;    // all-reduce: the summed tensor (an input of the shard graph);
                         // all-gather: the whole graph output (outside the shard graph)
  Shape shape;           // of the result
  int64_t axis = -1;     // all-gather: the axis of `result` the ranks' blocks tile
  ElemType type = ElemType::Float;  // the element type the activation is held in (HBM)
  int64_t bytes = 0;     // all-reduce: one rank's buffer; all-gather: the gathered result
};
using TpAllReduce = TpCollective;

// Bytes of one element of an activation in HBM: the compiler holds fp16/bf16 model tensors in
// their own type and everything else as fp32, whatever the dtype policy (the policy only sets
// the TensorE operand type). The collectives move and sum what is in HBM.
int activation_bytes(ElemType t);

// The execution plan, identical on every rank: compute the shard graph's nodes [begin, end),
// then (if collective >= 0) run collectives[collective]. Node i of a shard graph is segment i
// of its lowering (one segment per node).
struct TpStep {
  size_t begin = 0, end = 0;
  int collective = -1;
};

struct TensorParallelPlan {
  int tp = 1;
  std::vector<Graph> shards;               // rank r's graph (its weight slices as constants)
  std::vector<TpStep> steps;
  std::vector<TpCollective> collectives;   // in issue order
  std::vector<std::string> column_parallel, row_parallel;  // node names (before fusion)
  std::vector<std::string> vocab_parallel; // column-parallel MatMuls whose output is gathered
  std::vector<std::string> notes;          // regions left replicated, and why
};

struct ShardOptions {
  int ranks_to_build = 0;  // ranks [0, n) get a graph; <= 0: all tp (1 is enough for timing)
  bool fuse = true;        // attention and epilogue fusion on each shard
  int cores = 0;           // > 0: re-run the core split of each shard's nodes for this many cores
};

// `g` is a compiled graph with shapes known, after folding and decomposition, best before
// attention fusion (a FusedAttention node holds its head layout as strides, so regions through
// one stay replicated); matmul epilogues are taken apart and re-fused per shard. The shards get
// the fusion passes and the core split of the compile pipeline.
TensorParallelPlan shard_tensor_parallel(Graph g, int tp, const ShardOptions& options = {});

// The front of the compile pipeline, all the split needs: bind-inputs, shape-inference,
// constant-folding, decomposition, constant-folding, dead-code (no fusion, no core split, no
// memory planning or lowering: the shards get those). The whole model is never lowered.
Graph prepare_for_tensor_parallel(Graph g, const CompileOptions& options);

}  // namespace trnsim::compiler
