// Sequential and parallel composition of schedules (hierarchical algorithms are built this way).
#include <algorithm>

#include "trnsim/collectives/schedule.h"

namespace trnsim::collectives {
namespace {

class Sequence : public ISchedule {
 public:
  explicit Sequence(std::vector<std::unique_ptr<ISchedule>> p) : parts_(std::move(p)) {
    for (auto& s : parts_) {
      start_.push_back(steps_);
      steps_ += s->steps();
      transfers_ += s->transfers();
    }
  }
  int steps() const override { return steps_; }
  int64_t transfers() const override { return transfers_; }
  void append_step(int i, std::vector<Transfer>& out) const override {
    const size_t k = std::upper_bound(start_.begin(), start_.end(), i) - start_.begin() - 1;
    parts_[k]->append_step(i - start_[k], out);
  }

 private:
  std::vector<std::unique_ptr<ISchedule>> parts_;
  std::vector<int> start_;
  int steps_ = 0;
  int64_t transfers_ = 0;
};

class Parallel : public ISchedule {
 public:
  explicit Parallel(std::vector<std::unique_ptr<ISchedule>> p) : parts_(std::move(p)) {
    for (auto& s : parts_) {
      steps_ = std::max(steps_, s->steps());
      transfers_ += s->transfers();
    }
  }
  int steps() const override { return steps_; }
  int64_t transfers() const override { return transfers_; }
  void append_step(int i, std::vector<Transfer>& out) const override {
    for (auto& s : parts_)
      if (i < s->steps()) s->append_step(i, out);
  }

 private:
  std::vector<std::unique_ptr<ISchedule>> parts_;
  int steps_ = 0;
  int64_t transfers_ = 0;
};

}  // namespace

std::unique_ptr<ISchedule> sequence(std::vector<std::unique_ptr<ISchedule>> parts) {
  return std::make_unique<Sequence>(std::move(parts));
}
std::unique_ptr<ISchedule> parallel(std::vector<std::unique_ptr<ISchedule>> parts) {
  return std::make_unique<Parallel>(std::move(parts));
}

}  // namespace trnsim::collectives
