// The paged KV cache of one replica (vLLM's block manager): a pool of fixed-size blocks that
// sequences take as their context grows and give back when they finish or are preempted, and,
// with prefix caching, shared read-only blocks of common prompt prefixes that stay cached after
// their last user until an allocation needs the space (least recently used first).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

namespace trnsim::workloads {

class KvBlockManager {
 public:
  KvBlockManager() = default;
  KvBlockManager(int64_t blocks, int block_tokens, bool prefix_caching);

  int64_t blocks_for(int64_t tokens) const { return (tokens + block_tokens_ - 1) / block_tokens_; }
  int block_tokens() const { return block_tokens_; }
  int64_t total() const { return total_; }
  // Blocks some running sequence needs (owned, or cached and referenced).
  int64_t in_use() const { return owned_ + cached_referenced_; }
  double utilization() const { return total_ ? static_cast<double>(in_use()) / total_ : 0; }
  int64_t free_now() const { return total_ - owned_ - cached_; }

  // Takes n blocks, evicting unreferenced cached prefixes if needed; false (nothing taken)
  // if even that is not enough.
  bool allocate(int64_t n);
  void release(int64_t n);

  // Prefix cache. acquire: the cached blocks of `group` (0 if none), referenced until release.
  int64_t acquire_prefix(int group, double now);
  void release_prefix(int group, double now);
  // A sequence hands `blocks` of its own blocks over as `group`'s cached prefix (if not cached
  // yet) and keeps a reference; returns whether it did.
  bool publish_prefix(int group, int64_t blocks, double now);
  int64_t cached_prefix_blocks(int group) const;
  void clear();  // the replica is lost: everything goes

 private:
  struct Entry {
    int64_t blocks = 0;
    int refs = 0;
    double last_use = 0;
  };
  void unreference(int group, Entry& e, double now);

  int64_t total_ = 0, owned_ = 0, cached_ = 0, cached_referenced_ = 0;
  int block_tokens_ = 16;
  bool prefix_caching_ = false;
  std::unordered_map<int, Entry> entries_;
  std::set<std::pair<double, int>> evictable_;  // (last use, group) of entries with refs == 0
};

}  // namespace trnsim::workloads
