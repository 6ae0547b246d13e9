// A collective as a transfer schedule: a sequence of steps, each a set of transfers that run
// concurrently; a step starts when the previous one has completed everywhere (step-synchronous,
// the semantics nccom-style ring/tree implementations approach in steady state). Each rank
// works in one buffer of `count` elements (collective_op.h's size); a transfer copies (or adds,
// when `reduce`) `count` elements from offset `src_offset` of the sender's buffer to
// `dst_offset` of the receiver's, reading the buffers as they were when the step began.
//
// Schedules are generated one step at a time (append_step), so a 16,384-rank schedule never
// exists in memory all at once; the same object drives timing (schedule_timer.h) and
// functional execution (functional_executor.h): one schedule, two fidelities.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace trnsim::collectives {

struct Transfer {
  int src;
  int dst;
  int64_t src_offset;  // elements
  int64_t dst_offset;  // elements
  int64_t count;       // elements
  bool reduce;         // receiver adds instead of overwriting
};

class ISchedule {
 public:
  virtual ~ISchedule() = default;
  virtual int steps() const = 0;
  // Appends the transfers of step i (0 <= i < steps()), in a deterministic order.
  virtual void append_step(int i, std::vector<Transfer>& out) const = 0;
  // Total transfers over all steps (cheap, closed form): what building the schedule costs.
  virtual int64_t transfers() const = 0;
};

// First element of piece i when `count` elements are cut into n pieces as evenly as possible.
inline int64_t piece_begin(int64_t count, int n, int i) { return count * i / n; }

// Steps of `parts` one after another.
std::unique_ptr<ISchedule> sequence(std::vector<std::unique_ptr<ISchedule>> parts);
// Step i is the union of step i of every part (parts on disjoint rank groups run side by side).
std::unique_ptr<ISchedule> parallel(std::vector<std::unique_ptr<ISchedule>> parts);

}  // namespace trnsim::collectives
