#include "trnsim/core/buffer_pool.h"

#include <mutex>

namespace trnsim::core {

namespace {
template <class V>
struct Pool {
  using T = typename V::value_type;
  std::mutex mu;
  std::vector<V> free;
  size_t bytes = 0;

  V take(size_t n) {
    V v;
    {
      std::lock_guard<std::mutex> lock(mu);
      size_t best = free.size();
      for (size_t i = 0; i < free.size(); ++i)
        if (free[i].capacity() >= n && (best == free.size() || free[i].capacity() < free[best].capacity())) best = i;
      if (best < free.size()) {
        v = std::move(free[best]);
        free[best] = std::move(free.back());
        free.pop_back();
        bytes -= v.capacity() * sizeof(T);
      }
    }
    v.resize(n);
    return v;
  }

  void give(V&& v) {
    const size_t b = v.capacity() * sizeof(T);
    if (b < (size_t{64} << 10)) return;  // small ones are cheap to allocate anyway
    std::lock_guard<std::mutex> lock(mu);
    if (bytes + b > kMaxPooledBytes) return;
    bytes += b;
    free.push_back(std::move(v));
  }
};

Pool<RawBytes>& byte_pool() {
  static Pool<RawBytes> p;
  return p;
}
Pool<RawFloats>& float_pool() {
  static Pool<RawFloats> p;
  return p;
}
}  // namespace

RawBytes take_bytes(size_t n) { return byte_pool().take(n); }
void give_back(RawBytes&& v) { byte_pool().give(std::move(v)); }
RawFloats take_floats(size_t n) { return float_pool().take(n); }
void give_back(RawFloats&& v) { float_pool().give(std::move(v)); }

}  // namespace trnsim::core
