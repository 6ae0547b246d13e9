#include "trnsim/collectives/group.h"
#include "trnsim/common/error.h"

namespace trnsim::collectives {
namespace {

class Ring : public ISchedule {
 public:
  Ring(Group g, Phase p) : g_(std::move(g)), phase_(p), n_(g_.size()) {
    if (p != Phase::ReduceScatter && p != Phase::AllGather && p != Phase::AllReduce)
      throw UnsupportedError("ring: runs reduce-scatter, all-gather and all-reduce only");
    halves_ = p == Phase::AllReduce ? 2 : 1;
  }
  int steps() const override { return n_ > 1 ? halves_ * (n_ - 1) : 0; }
  int64_t transfers() const override { return static_cast<int64_t>(steps()) * n_; }

  // Reduce-scatter step s: ring position i sends the piece owned by ring[i - s - 1] to its
  // successor, which adds it; after n-1 steps the piece owned by member m has visited every
  // member and ends at m. All-gather step s: position i forwards the piece owned by ring[i - s].
  void append_step(int s, std::vector<Transfer>& out) const override {
    const bool rs = phase_ == Phase::ReduceScatter || (phase_ == Phase::AllReduce && s < n_ - 1);
    const int k = rs ? s + 1 : (phase_ == Phase::AllReduce ? s - (n_ - 1) : s);
    for (int i = 0; i < n_; ++i) {
      const int owner = g_.ring[((i - k) % n_ + n_) % n_];
      const int64_t b = piece_begin(g_.count, n_, owner), e = piece_begin(g_.count, n_, owner + 1);
      if (e == b) continue;
      const int from = g_.members[g_.ring[i]], to = g_.members[g_.ring[(i + 1) % n_]];
      out.push_back({from, to, g_.base + b, g_.base + b, e - b, rs});
    }
  }

 private:
  Group g_;
  Phase phase_;
  int n_;
  int halves_;
};

}  // namespace

std::unique_ptr<ISchedule> ring_schedule(Group g, Phase p) { return std::make_unique<Ring>(std::move(g), p); }

}  // namespace trnsim::collectives
