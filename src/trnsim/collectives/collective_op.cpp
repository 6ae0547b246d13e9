#include "trnsim/collectives/collective_op.h"

#include <fmt/format.h>

#include <array>
#include <cctype>

#include "trnsim/common/error.h"

namespace trnsim::collectives {
namespace {

constexpr std::array<OpInfo, static_cast<size_t>(Op::kCount)> kOps{{
    {Op::AllReduce, "all-reduce", true, false},
    {Op::AllGather, "all-gather", false, true},
    {Op::ReduceScatter, "reduce-scatter", true, true},
    {Op::AllToAll, "all-to-all", false, true},
    {Op::Permute, "permute", false, false},
}};
static_assert(kOps.size() == static_cast<size_t>(Op::kCount), "one row per op");

struct Alias {
  std::string_view name;
  Op op;
};
// Spellings after lower-casing and dropping '-' and '_'.
constexpr Alias kAliases[] = {
    {"allreduce", Op::AllReduce},       {"allr", Op::AllReduce},       {"allgather", Op::AllGather},
    {"allg", Op::AllGather},            {"reducescatter", Op::ReduceScatter}, {"redsct", Op::ReduceScatter},
    {"alltoall", Op::AllToAll},         {"a2a", Op::AllToAll},         {"permute", Op::Permute},
    {"sendrecv", Op::Permute},
};

}  // namespace

const OpInfo& info(Op op) {
  const auto i = static_cast<size_t>(op);
  if (i >= kOps.size()) throw Error("collective: invalid op");
  return kOps[i];
}

std::vector<std::string_view> op_names() {
  std::vector<std::string_view> out;
  for (auto& o : kOps) out.push_back(o.name);
  return out;
}

Op parse_op(std::string_view s) {
  std::string key;
  for (char c : s)
    if (c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto& a : kAliases)
    if (a.name == key) return a.op;
  throw UnsupportedError(fmt::format("unknown collective op '{}'; expected one of: {} (or send-recv)", s,
                                     fmt::join(op_names(), ", ")));
}

double bus_factor(Op op, int n) {
  switch (op) {
    case Op::AllReduce: return 2.0 * (n - 1) / n;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AllToAll: return static_cast<double>(n - 1) / n;
    case Op::Permute:
    case Op::kCount: break;
  }
  return 1.0;
}

}  // namespace trnsim::collectives
