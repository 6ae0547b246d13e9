#include <fmt/format.h>

#include "trnsim/collectives/group.h"
#include "trnsim/common/error.h"

namespace trnsim::collectives {
namespace {

int log2_exact(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return (1 << l) == n ? l : -1;
}

// Member j's piece range after `done` halving steps: the pieces whose index agrees with j on
// the top `done` bits (distances n/2, n/4, ... are taken from the top bit down).
class HalvingDoubling : public ISchedule {
 public:
  HalvingDoubling(Group g, Phase p) : g_(std::move(g)), phase_(p), n_(g_.size()), log_(log2_exact(n_)) {
    if (log_ < 0)
      throw UnsupportedError(fmt::format("halving-doubling: needs a power-of-two number of ranks, got {}", n_));
    if (p != Phase::ReduceScatter && p != Phase::AllGather && p != Phase::AllReduce)
      throw UnsupportedError("halving-doubling: runs reduce-scatter, all-gather and all-reduce only");
  }
  int steps() const override { return (phase_ == Phase::AllReduce ? 2 : 1) * log_; }
  int64_t transfers() const override { return static_cast<int64_t>(steps()) * n_; }

  void append_step(int s, std::vector<Transfer>& out) const override {
    const bool halving = phase_ == Phase::ReduceScatter || (phase_ == Phase::AllReduce && s < log_);
    if (halving) {
      // Step s: distance n >> (s+1); each keeps the half its bit selects, sends the other.
      const int d = n_ >> (s + 1);
      for (int j = 0; j < n_; ++j) {
        const int partner = j ^ d;
        const int lo = j & ~(2 * d - 1);             // current range [lo, lo + 2d) of pieces
        const int send_lo = (j & d) ? lo : lo + d;   // the half the partner keeps
        emit(j, partner, send_lo, d, true, out);
      }
    } else {
      // Doubling step t: distance 1 << t; each sends the 2^t pieces it holds to its partner.
      const int t = phase_ == Phase::AllReduce ? s - log_ : s;
      const int d = 1 << t;
      for (int j = 0; j < n_; ++j) emit(j, j ^ d, j & ~(d - 1), d, false, out);
    }
  }

 private:
  void emit(int j, int partner, int first_piece, int pieces, bool reduce, std::vector<Transfer>& out) const {
    const int64_t b = piece_begin(g_.count, n_, first_piece), e = piece_begin(g_.count, n_, first_piece + pieces);
    if (e == b) return;
    out.push_back({g_.members[j], g_.members[partner], g_.base + b, g_.base + b, e - b, reduce});
  }

  Group g_;
  Phase phase_;
  int n_;
  int log_;
};

}  // namespace

std::unique_ptr<ISchedule> halving_doubling_schedule(Group g, Phase p) {
  return std::make_unique<HalvingDoubling>(std::move(g), p);
}

}  // namespace trnsim::collectives
