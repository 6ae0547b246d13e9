#include "trnsim/workloads/kv_cache_block_manager.h"

namespace trnsim::workloads {

KvBlockManager::KvBlockManager(int64_t blocks, int block_tokens, bool prefix_caching)
    : total_(blocks), block_tokens_(block_tokens), prefix_caching_(prefix_caching) {}

bool KvBlockManager::allocate(int64_t n) {
  if (n <= 0) return true;
  int64_t evictable_blocks = 0;
  for (const auto& [t, g] : evictable_) {
    if (free_now() + evictable_blocks >= n) break;
    evictable_blocks += entries_.at(g).blocks;
  }
  if (free_now() + evictable_blocks < n) return false;
  while (free_now() < n) {  // evict least recently used unreferenced prefixes
    const auto it = evictable_.begin();
    cached_ -= entries_.at(it->second).blocks;
    entries_.erase(it->second);
    evictable_.erase(it);
  }
  owned_ += n;
  return true;
}

void KvBlockManager::release(int64_t n) { owned_ -= n; }

int64_t KvBlockManager::acquire_prefix(int group, double now) {
  if (!prefix_caching_ || group < 0) return 0;
  auto it = entries_.find(group);
  if (it == entries_.end()) return 0;
  Entry& e = it->second;
  if (e.refs++ == 0) {
    evictable_.erase({e.last_use, group});
    cached_referenced_ += e.blocks;
  }
  e.last_use = now;
  return e.blocks;
}

void KvBlockManager::unreference(int group, Entry& e, double now) {
  e.last_use = now;
  if (--e.refs == 0) {
    cached_referenced_ -= e.blocks;
    evictable_.insert({now, group});
  }
}

void KvBlockManager::release_prefix(int group, double now) {
  auto it = entries_.find(group);
  if (it != entries_.end()) unreference(group, it->second, now);
}

bool KvBlockManager::publish_prefix(int group, int64_t blocks, double now) {
  if (!prefix_caching_ || group < 0 || blocks <= 0 || entries_.count(group)) return false;
  entries_[group] = Entry{blocks, 1, now};
  owned_ -= blocks;
  cached_ += blocks;
  cached_referenced_ += blocks;
  return true;
}

int64_t KvBlockManager::cached_prefix_blocks(int group) const {
  auto it = entries_.find(group);
  return it == entries_.end() ? 0 : it->second.blocks;
}

void KvBlockManager::clear() {
  owned_ = cached_ = cached_referenced_ = 0;
  entries_.clear();
  evictable_.clear();
}

}  // namespace trnsim::workloads
