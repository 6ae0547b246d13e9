// Hierarchical all-reduce: reduce-scatter inside each domain, all-reduce of each piece across
// domains (one group per position in the domain, so every rank's cross-domain traffic is 1/k
// of the buffer), all-gather inside each domain. The domain is the slowest boundary the job
// crosses: a system when copies are joined by EFA, else an instance (the Trn2 UltraServer's
// four instances, joined by its Z ring), else a chip (its NeuronCores talk through HBM).
// "hierarchical" runs a ring across domains, "hierarchical-hd" halving-doubling (fewer steps,
// for small messages; power-of-two domain counts).
#include <fmt/format.h>

#include <algorithm>

#include "trnsim/collectives/group.h"
#include "trnsim/collectives/i_collective_algorithm.h"

namespace trnsim::collectives {
namespace {

int domain_size(const CollectiveJob& j) {
  const auto& f = *j.fabric;
  const int n = j.ranks();
  if (n > f.ranks_per_system()) return f.ranks_per_system();
  if (n > f.ranks_per_instance()) return f.ranks_per_instance();
  if (n > f.ranks_per_chip()) return f.ranks_per_chip();
  return n;
}

class Hierarchical : public ICollectiveAlgorithm {
 public:
  explicit Hierarchical(bool hd) : hd_(hd) {}
  std::string_view name() const override { return hd_ ? "hierarchical-hd" : "hierarchical"; }

  std::string why_not(const CollectiveJob& j) const override {
    if (j.op != Op::AllReduce) return fmt::format("{} runs all-reduce only", name());
    const int n = j.ranks(), k = domain_size(j);
    if (k <= 1 || k >= n) return fmt::format("{} needs ranks in more than one domain, several per domain", name());
    if (n % k) return fmt::format("{}: {} ranks do not fill domains of {} evenly", name(), n, k);
    const int d = n / k;
    if (hd_ && (d & (d - 1))) return fmt::format("{} needs a power-of-two number of domains, got {}", name(), d);
    return "";
  }

  std::unique_ptr<ISchedule> schedule(const CollectiveJob& j) const override {
    const int n = j.ranks(), k = domain_size(j), domains = n / k;
    std::vector<int> pos(n);
    const auto order = j.fabric->ring_order();
    for (int p = 0; p < n; ++p) pos[order[p]] = p;
    auto make_group = [&](std::vector<int> members, int64_t base, int64_t count) {
      Group g;
      g.members = std::move(members);
      g.ring.resize(g.members.size());
      for (size_t m = 0; m < g.ring.size(); ++m) g.ring[m] = static_cast<int>(m);
      std::sort(g.ring.begin(), g.ring.end(), [&](int a, int b) { return pos[g.members[a]] < pos[g.members[b]]; });
      g.base = base;
      g.count = count;
      return g;
    };
    auto inside = [&](Phase p) {
      std::vector<std::unique_ptr<ISchedule>> parts;
      for (int d = 0; d < domains; ++d) {
        std::vector<int> m(k);
        for (int i = 0; i < k; ++i) m[i] = d * k + i;
        parts.push_back(ring_schedule(make_group(std::move(m), 0, j.count), p));
      }
      return parallel(std::move(parts));
    };
    std::vector<std::unique_ptr<ISchedule>> across;
    for (int i = 0; i < k; ++i) {
      std::vector<int> m(domains);
      for (int d = 0; d < domains; ++d) m[d] = d * k + i;
      const int64_t b = piece_begin(j.count, k, i), e = piece_begin(j.count, k, i + 1);
      Group g = make_group(std::move(m), b, e - b);
      across.push_back(hd_ ? halving_doubling_schedule(std::move(g), Phase::AllReduce)
                           : ring_schedule(std::move(g), Phase::AllReduce));
    }
    std::vector<std::unique_ptr<ISchedule>> phases;
    phases.push_back(inside(Phase::ReduceScatter));
    phases.push_back(parallel(std::move(across)));
    phases.push_back(inside(Phase::AllGather));
    return sequence(std::move(phases));
  }

 private:
  bool hd_;
};

}  // namespace

void register_hierarchical_algorithms() {
  register_algorithm(std::make_unique<Hierarchical>(false));
  register_algorithm(std::make_unique<Hierarchical>(true));
}

}  // namespace trnsim::collectives
