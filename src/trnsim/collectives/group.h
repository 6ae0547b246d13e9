// A group of ranks that runs one phase of a collective on one region of their buffers: the
// building block of every algorithm (flat ones use one group of all ranks, hierarchical ones
// a group per instance and a group per position across instances).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "trnsim/collectives/schedule.h"

namespace trnsim::collectives {

// What a phase does to the region [base, base + count) of every member's buffer. Pieces are
// piece_begin(count, n, j): member j owns piece j.
enum class Phase {
  ReduceScatter,  // member j ends with the sum over members of piece j
  AllGather,      // member j starts with piece j; everyone ends with all pieces
  AllReduce,      // everyone ends with the sum
  AllToAll,       // piece i of member j goes to piece j of member i
  Permute,        // member j's region goes to member j+1 (mod n)
};

struct Group {
  std::vector<int> members;  // ranks; member j owns piece j
  std::vector<int> ring;     // member indices in the order a ring visits them
  int64_t base = 0;
  int64_t count = 0;
  int size() const { return static_cast<int>(members.size()); }
};

// Ring: n-1 steps per reduce-scatter or all-gather half, each member sending one piece to its
// ring successor per step; bytes per member 2(n-1)/n x region for an all-reduce.
std::unique_ptr<ISchedule> ring_schedule(Group g, Phase p);
// Recursive halving (reduce-scatter) then doubling (all-gather), log2 n steps each, partner
// j XOR distance; needs a power-of-two group.
std::unique_ptr<ISchedule> halving_doubling_schedule(Group g, Phase p);
// Direct (mesh): every member sends to every other in one step per half.
std::unique_ptr<ISchedule> direct_schedule(Group g, Phase p);

}  // namespace trnsim::collectives
