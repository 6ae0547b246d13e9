#include "trnsim/collectives/group.h"

namespace trnsim::collectives {
namespace {

class Direct : public ISchedule {
 public:
  Direct(Group g, Phase p) : g_(std::move(g)), phase_(p), n_(g_.size()) {}
  int steps() const override {
    if (n_ < 2) return 0;
    return phase_ == Phase::AllReduce ? 2 : 1;
  }
  int64_t transfers() const override {
    const int64_t per = phase_ == Phase::Permute ? n_ : static_cast<int64_t>(n_) * (n_ - 1);
    return steps() * per;
  }

  void append_step(int s, std::vector<Transfer>& out) const override {
    switch (phase_) {
      case Phase::ReduceScatter: return scatter(true, out);
      case Phase::AllGather: return gather(out);
      case Phase::AllReduce: return s == 0 ? scatter(true, out) : gather(out);
      case Phase::AllToAll: return all_to_all(out);
      case Phase::Permute:
        if (g_.count == 0) return;
        for (int j = 0; j < n_; ++j)
          out.push_back({g_.members[j], g_.members[(j + 1) % n_], g_.base, g_.base, g_.count, false});
        return;
    }
  }

 private:
  int64_t b(int i) const { return piece_begin(g_.count, n_, i); }
  // Member j sends piece i to member i, which adds it (reduce-scatter in one step).
  void scatter(bool reduce, std::vector<Transfer>& out) const {
    for (int j = 0; j < n_; ++j)
      for (int k = 1; k < n_; ++k) {
        const int i = (j + k) % n_;  // staggered so that no receiver is everyone's first target
        if (b(i + 1) > b(i))
          out.push_back({g_.members[j], g_.members[i], g_.base + b(i), g_.base + b(i), b(i + 1) - b(i), reduce});
      }
  }
  // Member j sends its own piece j to everyone.
  void gather(std::vector<Transfer>& out) const {
    for (int j = 0; j < n_; ++j)
      for (int k = 1; k < n_; ++k) {
        const int i = (j + k) % n_;
        if (b(j + 1) > b(j))
          out.push_back({g_.members[j], g_.members[i], g_.base + b(j), g_.base + b(j), b(j + 1) - b(j), false});
      }
  }
  // Piece i of member j lands in piece j of member i (pieces are equal: count % n == 0).
  void all_to_all(std::vector<Transfer>& out) const {
    for (int j = 0; j < n_; ++j)
      for (int k = 1; k < n_; ++k) {
        const int i = (j + k) % n_;
        if (b(i + 1) > b(i))
          out.push_back({g_.members[j], g_.members[i], g_.base + b(i), g_.base + b(j), b(i + 1) - b(i), false});
      }
  }

  Group g_;
  Phase phase_;
  int n_;
};

}  // namespace

std::unique_ptr<ISchedule> direct_schedule(Group g, Phase p) { return std::make_unique<Direct>(std::move(g), p); }

}  // namespace trnsim::collectives
