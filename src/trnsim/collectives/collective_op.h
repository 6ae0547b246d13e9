// The collective operations, in one table (DESIGN principle 7), with NCCL's conventions as
// nccom-test reports them: `size` is the larger buffer of a rank in bytes (all-reduce: the
// buffer; all-gather: the gathered output, n pieces; reduce-scatter: the input, n pieces;
// all-to-all: the whole send buffer, one piece per peer; permute: what each rank sends to the
// next), algbw = size / time, busbw = algbw x bus_factor, which makes busbw comparable to the
// link bandwidth whatever the op and the rank count.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::collectives {

enum class Op : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, Permute, kCount };

struct OpInfo {
  Op op;
  std::string_view name;          // canonical: "all-reduce"
  bool reduces;                   // combines data (sum) on the way
  bool pieces_per_rank;           // size splits into one piece per rank (count % ranks == 0)
};

const OpInfo& info(Op op);
inline std::string_view name(Op op) { return info(op).name; }
// Accepts the canonical names and the usual spellings (allreduce, all_reduce, allr, send-recv,
// sendrecv, alltoall, ...); UnsupportedError listing the ops otherwise.
Op parse_op(std::string_view s);
std::vector<std::string_view> op_names();

// NCCL busbw factor: all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n;
// permute 1.
double bus_factor(Op op, int ranks);

}  // namespace trnsim::collectives
