// Recycled host buffers for functional-mode memories (SBUF, PSUM, HBM tensors, TensorE's
// decoded tiles). A fresh multi-MiB std::vector is fresh pages from the kernel: on a run of a
// few milliseconds the page faults of a 24 MiB SBUF cost as much as the arithmetic. Buffers
// given back at the end of a run serve the next one (process-wide, thread-safe, at most
// kMaxPooledBytes kept). Contents of a taken buffer are unspecified.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace trnsim::core {

inline constexpr size_t kMaxPooledBytes = size_t{512} << 20;

// An allocator whose resize() leaves new elements uninitialised: every pooled buffer is
// written before it is read (or filled on purpose), so zeroing it first is wasted memory
// bandwidth (it was a tenth of a model's functional simulation).
template <class T>
struct UninitAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind { using other = UninitAllocator<U>; };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) {}
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) U;
    else ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using RawBytes = std::vector<uint8_t, UninitAllocator<uint8_t>>;
using RawFloats = std::vector<float, UninitAllocator<float>>;

RawBytes take_bytes(size_t n);
void give_back(RawBytes&& v);
RawFloats take_floats(size_t n);
void give_back(RawFloats&& v);

}  // namespace trnsim::core
