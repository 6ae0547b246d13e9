#include "trnsim/core/sbuf.h"

#include <cstring>
#include <mutex>

namespace trnsim::core {

namespace {
// Buffers whose every byte is 0xFF, ready for the next Scratchpad of the same size.
struct CleanPool {
  std::mutex mu;
  std::vector<RawBytes> free;
  size_t bytes = 0;
  static constexpr size_t kMaxBytes = size_t{512} << 20;

  RawBytes take(size_t n) {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < free.size(); ++i)
      if (free[i].size() == n) {
        RawBytes v = std::move(free[i]);
        free[i] = std::move(free.back());
        free.pop_back();
        bytes -= n;
        return v;
      }
    return {};
  }
  bool give(RawBytes& v) {
    std::lock_guard<std::mutex> lock(mu);
    if (bytes + v.size() > kMaxBytes) return false;
    bytes += v.size();
    free.push_back(std::move(v));
    return true;
  }
};
CleanPool& clean_pool() {
  static CleanPool p;
  return p;
}
}  // namespace

Scratchpad::Scratchpad(const hw::MemorySpec& spec, bool functional)
    : partitions_(spec.partitions), bytes_per_partition_(static_cast<int64_t>(spec.bytes_per_partition.value())) {
  if (!functional) return;
  const size_t n = static_cast<size_t>(partitions_) * static_cast<size_t>(bytes_per_partition_);
  data_ = clean_pool().take(n);
  if (data_.empty()) {
    data_ = take_bytes(n);
    std::fill(data_.begin(), data_.end(), uint8_t{0xFF});
  }
  stamps_.assign(static_cast<size_t>((bytes_per_partition_ + kStampBytes - 1) / kStampBytes), 0);
}

Scratchpad::~Scratchpad() {
  if (data_.empty()) return;
  // Every write went through note_write and stamped its columns, so refilling the stamped
  // columns (runs of them at once) of every partition makes the buffer clean again.
  const int64_t columns = static_cast<int64_t>(stamps_.size());
  for (int64_t c = 0; c < columns;) {
    if (stamps_[static_cast<size_t>(c)] == 0) { ++c; continue; }
    int64_t end = c;
    while (end < columns && stamps_[static_cast<size_t>(end)] != 0) ++end;
    const int64_t lo = c * kStampBytes, hi = std::min(end * kStampBytes, bytes_per_partition_);
    for (int p = 0; p < partitions_; ++p)
      std::memset(data_.data() + static_cast<size_t>(p) * static_cast<size_t>(bytes_per_partition_) + lo, 0xFF,
                  static_cast<size_t>(hi - lo));
    c = end;
  }
  if (!clean_pool().give(data_)) give_back(std::move(data_));
}

}  // namespace trnsim::core
