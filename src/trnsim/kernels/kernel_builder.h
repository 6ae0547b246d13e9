// The kernel-builder API: write a NeuronCore kernel at tile level, the way NKI does.
//
//   KernelBuilder kb(chip);
//   auto a   = kb.hbm_input("a", {M, K}, DType::BF16);
//   auto out = kb.hbm_output("out", {M, N}, DType::BF16);
//   Tile t   = kb.sbuf_tile({128, 512}, DType::BF16);      // capacity-checked allocation
//   kb.load(t, a.slice({0, 128}, {0, 512}));                // HBM -> SBUF on a DMA queue
//   Tile acc = kb.psum_tile({128, 512});                    // fp32, one PSUM bank
//   kb.matmul(acc, stationary, moving, /*start=*/true, /*stop=*/true);
//   kb.activation(t, acc, ActFunc::Exp);                    // PSUM -> SBUF on ScalarE
//   kb.store(out.slice({0, 128}, {0, 512}), t);
//   isa::Program p = kb.build();
//
// Every call appends one instruction to the stream of the engine that runs it (chosen from the
// op; override with Opts::engine / Opts::queue). The builder tracks which instructions read
// and write which byte ranges of which tile or HBM tensor, and turns read-after-write,
// write-after-read and write-after-write overlaps between different streams into semaphore
// waits: kernels never name semaphores. Reusing a tile therefore waits for its previous readers,
// so N rotating tiles (TileRing) give N-deep pipelining of DMA against compute.
// Shape and capacity errors are thrown at the call that makes them (ShapeError /
// UnsupportedError naming the call and the limit).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/isa/program.h"

namespace trnsim::kernels {

using isa::ActFunc;
using isa::AluOp;
using isa::Engine;
using isa::Space;
using numerics::DType;

class KernelBuilder;

struct Range {   // half-open [begin, end) along one axis
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// What an instruction reads or writes: an access pattern plus the logical shape
// ({partitions, free dims...}) and the buffer it belongs to (for dependency tracking).
class View {
 public:
  View() = default;
  View(isa::AccessPattern ap, std::vector<int64_t> shape, int buffer)
      : ap_(ap), shape_(std::move(shape)), buffer_(buffer) {}
  const isa::AccessPattern& ap() const { return ap_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t partitions() const { return shape_.empty() ? 0 : shape_[0]; }
  int64_t free_size() const { return ap_.free_size(); }
  DType dtype() const { return ap_.dtype; }
  int buffer() const { return buffer_; }

  // Sub-view: one Range per axis (partition axis first); missing trailing axes are whole.
  View slice(std::initializer_list<Range> ranges) const;
  View slice(const std::vector<Range>& ranges) const;
  // Same bytes seen with a different free shape (contiguous free axes only).
  View reshape(std::vector<int64_t> shape) const;
  // Same bytes read as another dtype of the same width (bitcast), e.g. for DMA of raw data.
  View bitcast(DType t) const;

 private:
  isa::AccessPattern ap_{};
  std::vector<int64_t> shape_;
  int buffer_ = -1;
};

// An allocated SBUF or PSUM tile (the view of the whole allocation). Copyable handle; free it
// with KernelBuilder::free or let a TileScope do it.
class Tile : public View {
 public:
  Tile() = default;
  Tile(View v, int alloc) : View(std::move(v)), alloc_(alloc) {}
  int allocation() const { return alloc_; }
 private:
  int alloc_ = -1;
};

// An HBM tensor of the program. slice() maps the first sliced axis to partitions.
class Tensor : public View {
 public:
  Tensor() = default;
  Tensor(View v, int id, std::string name) : View(std::move(v)), id_(id), name_(std::move(name)) {}
  int id() const { return id_; }
  const std::string& name() const { return name_; }
  // A view whose partition axis is `axis` of the tensor (e.g. 1 to load a transposed tile);
  // other axes stay free axes in order.
  View with_partition_axis(int axis) const;
 private:
  int id_ = -1;
  std::string name_;
};

// A per-partition scalar: an immediate or a [P, 1] view.
struct Scalar {
  Scalar(float v) : imm(v) {}                       // NOLINT: implicit from a number
  Scalar(const View& v) : view(v), is_view(true) {}  // NOLINT: implicit from a view
  float imm = 0.0f;
  View view;
  bool is_view = false;
};

struct Opts {
  std::optional<Engine> engine;  // override the engine chosen from the op
  int queue = -1;                // DMA: queue index; -1 = round-robin
  std::string name;              // label kept for traces (not stored per instruction)
};

struct BuilderOptions {
  int cores = 1;          // cores the program runs on (set_core picks the one being written)
  int dma_queues = 16;    // queues per core used by round-robin DMA placement
  // Instructions the model's programs built before this one hold: the budget of a quarter of
  // the memory limit is for them all (a model of many kernels each near a per-program budget
  // held several quarters of the limit).
  int64_t instructions_before = 0;
};

class KernelBuilder {
 public:
  explicit KernelBuilder(const hw::ChipSpec& chip, BuilderOptions opts = {});
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  const hw::ChipSpec& chip() const { return chip_; }
  void set_name(std::string name);
  void set_core(int core);   // following instructions go to this core's streams
  int core() const { return core_; }

  // ---- HBM tensors
  Tensor hbm_input(const std::string& name, std::vector<int64_t> shape, DType t);
  Tensor hbm_output(const std::string& name, std::vector<int64_t> shape, DType t);
  Tensor hbm_scratch(const std::string& name, std::vector<int64_t> shape, DType t);

  // ---- on-chip allocation (current core). Shape {partitions, free...}.
  Tile sbuf_tile(std::vector<int64_t> shape, DType t, const std::string& name = "");
  // The same at a fixed byte offset per partition (ShapeError if those bytes are taken): SBUF
  // that several kernels of a linked program share, such as an activation kept resident
  // between its producer and its consumers (compiler/sbuf_residency.h).
  Tile sbuf_tile_at(int64_t offset, std::vector<int64_t> shape, DType t, const std::string& name = "");
  // PSUM tiles are placed so that none crosses a 2 KiB bank unless it spans whole banks.
  Tile psum_tile(std::vector<int64_t> shape, DType t = DType::F32, const std::string& name = "");
  void free(const Tile& t);
  // Refuses up front (ShapeError with the estimate and the memory limit) a program that would
  // hold `n` instructions beyond the builder's budget; emitting past it is refused anyway.
  void expect_instructions(int64_t n) const;
  // SBUF bytes per partition not taken by the kernel's own tiles. Tiles held at fixed offsets
  // (sbuf_tile_at) do not count: whoever places them keeps them above what the kernel uses
  // without them (sbuf_peak_bytes_per_partition), so they never change a kernel's plan.
  int64_t sbuf_free_bytes_per_partition() const;
  // The highest SBUF byte per partition the kernel's own tiles reached, over its cores.
  int64_t sbuf_peak_bytes_per_partition() const;
  int psum_free_banks() const;

  // ---- DMA (queue round-robin unless Opts::queue)
  void load(const View& dst, const View& src, const Opts& o = {});   // HBM -> SBUF
  void store(const View& dst, const View& src, const Opts& o = {});  // SBUF/PSUM -> HBM
  void dma(const View& dst, const View& src, const Opts& o = {});    // any legal pair
  // HBM -> SBUF of a row repeated on every partition (src's partition stride 0: a bias, a
  // LayerNorm scale): the row is read once into dst's first partition and GpSimd copies it to
  // the others, instead of a DMA that reads the same HBM bytes once per partition.
  void load_broadcast(const View& dst, const View& src, const Opts& o = {});
  // Indirect DMA, an embedding lookup: dst partition p <- row index[p] of `table` (its first
  // axis is the row; a row is the rest, dst's free size). index: [P, 1] in SBUF, integral
  // values; one out of range stops a functional run with an error naming it.
  void dma_gather(const View& dst, const Tensor& table, const View& index, const Opts& o = {});

  // ---- TensorE
  void matmul(const View& out, const View& stationary, const View& moving, bool start = true,
              bool stop = true, bool sparse_stationary = false, const Opts& o = {});
  void transpose(const View& out, const View& in, const Opts& o = {});
  // OCP MX matmul (Trainium3): element-code tiles [K, M] / [K, N] with their E8M0 scale tiles
  // [ceil(K/32), M] / [ceil(K/32), N] (isa::MatmulMx).
  void matmul_mx(const View& out, const View& stationary, const View& stationary_scale, const View& moving,
                 const View& moving_scale, bool start = true, bool stop = true, const Opts& o = {});
  // QuantizeMX on VectorE: in [P, F] to element codes (out's dtype) and E8M0 scales
  // [ceil(P/32), F], blocks of 32 along the partitions (isa::QuantizeMx).
  void quantize_mx(const View& out, const View& out_scale, const View& in, const Opts& o = {});

  // ---- VectorE (default engine; GpSimd where the op is allowed there)
  void tensor_tensor(const View& out, const View& in0, const View& in1, AluOp op, const Opts& o = {});
  void tensor_scalar(const View& out, const View& in, AluOp op0, Scalar s0,
                     AluOp op1 = AluOp::Bypass, Scalar s1 = 0.0f, bool reverse0 = false,
                     const Opts& o = {});
  void reduce(const View& out, const View& in, AluOp op, int axes = 1, bool negate = false,
              const Opts& o = {});
  void copy(const View& out, const View& in, const Opts& o = {});
  void select(const View& out, const View& pred, const View& on_true, const View& on_false,
              const Opts& o = {});
  void bn_stats(const View& out, const View& in, const Opts& o = {});
  void bn_aggr(const View& out, const View& in, const Opts& o = {});
  void memset(const View& out, float value, const Opts& o = {});

  // ---- ScalarE
  void activation(const View& out, const View& in, ActFunc f, Scalar scale = 1.0f,
                  Scalar bias = 0.0f, const View* accum = nullptr, const Opts& o = {});

  // ---- GpSimd
  void iota(const View& out, int32_t base, int32_t partition_multiplier,
            std::vector<int32_t> free_multipliers = {1}, const Opts& o = {});
  void partition_reduce(const View& out, const View& in, AluOp op, const Opts& o = {});
  void partition_broadcast(const View& out, const View& in, const Opts& o = {});
  void gather(const View& out, const View& in, const View& index, const Opts& o = {});

  // ---- raw: append an instruction (its waits are added by the dependency tracker).
  void emit(Engine e, int queue, isa::Op op, const Opts& o = {});

  // Finishes the program (the builder may not be used afterwards).
  isa::Program build();

  size_t instructions() const;

  struct Impl;  // dependency tracker and allocators (kernel_builder.cpp)

 private:
  const hw::ChipSpec& chip_;
  BuilderOptions opts_;
  int core_ = 0;
  std::unique_ptr<Impl> impl_;
};

// Frees every tile allocated through it when it goes out of scope.
class TileScope {
 public:
  explicit TileScope(KernelBuilder& kb) : kb_(kb) {}
  ~TileScope();
  TileScope(const TileScope&) = delete;
  Tile sbuf(std::vector<int64_t> shape, DType t, const std::string& name = "");
  Tile psum(std::vector<int64_t> shape, DType t = DType::F32, const std::string& name = "");
 private:
  KernelBuilder& kb_;
  std::vector<Tile> tiles_;
};

// N tiles of one shape used in rotation: next() returns the least recently handed-out one.
// With the builder's automatic write-after-read waits this is N-deep buffering.
class TileRing {
 public:
  TileRing(KernelBuilder& kb, Space space, std::vector<int64_t> shape, DType t, int depth,
           const std::string& name = "");
  TileRing(const TileRing&) = delete;
  ~TileRing();
  const Tile& next();
  int depth() const { return static_cast<int>(tiles_.size()); }
 private:
  KernelBuilder& kb_;
  std::vector<Tile> tiles_;
  size_t i_ = 0;
};

}  // namespace trnsim::kernels
