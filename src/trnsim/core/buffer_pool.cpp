#include "trnsim/core/buffer_pool.h"

#include <mutex>

namespace trnsim::core {

namespace {
template <class T>
struct Pool {
  std::mutex mu;
  std::vector<std::vector<T>> free;
  size_t bytes = 0;

  std::vector<T> take(size_t n) {
    std::vector<T> v;
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

  void give(std::vector<T>&& v) {
    const size_t b = v.capacity() * sizeof(T);
    if (b < (size_t{64} << 10)) return;  // small ones are cheap to allocate anyway
    std::lock_guard<std::mutex> lock(mu);
    if (bytes + b > kMaxPooledBytes) return;
    bytes += b;
    free.push_back(std::move(v));
  }
};

Pool<uint8_t>& byte_pool() {
  static Pool<uint8_t> p;
  return p;
}
Pool<float>& float_pool() {
  static Pool<float> p;
  return p;
}
}  // namespace

std::vector<uint8_t> take_bytes(size_t n) { return byte_pool().take(n); }
void give_back(std::vector<uint8_t>&& v) { byte_pool().give(std::move(v)); }
std::vector<float> take_floats(size_t n) { return float_pool().take(n); }
void give_back(std::vector<float>&& v) { float_pool().give(std::move(v)); }

}  // namespace trnsim::core
