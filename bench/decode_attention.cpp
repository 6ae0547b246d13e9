// Decode attention on the library flash kernel: one query row group per (sequence, KV head)
// against `keys` cached keys, timed in timing mode, with the KV bytes read per second and each
// engine's busy share, so that what bounds a decode step's attention is visible.
//   ./build/bench/bench_decode_attention [chip] [rows] [keys]
#include <fmt/format.h>

#include <string>
#include <vector>

#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/kernels/attention.h"

using namespace trnsim;

int main(int argc, char** argv) {
  const auto chip = hw::load_chip(argc > 1 ? argv[1] : "trn1");
  const int64_t rows = argc > 2 ? std::stoll(argv[2]) : 1, d = 128;
  fmt::print("{:>6} {:>7} {:>10} {:>10}  busy share per engine (TensorE VectorE ScalarE DMA-queues)\n", "heads",
             "keys", "time(us)", "KV GB/s");
  std::vector<int64_t> key_list{2048, 8192};
  if (argc > 3) key_list = {std::stoll(argv[3])};
  for (int64_t heads : {1, 2, 3, 4, 8, 16, 24, 32, 40})
    for (int64_t keys : key_list) {
      kernels::KernelBuilder kb(chip);
      kernels::AttentionSpec s;
      const auto dt = numerics::DType::BF16;
      s.q = kernels::AttentionOperand::dense(kb.hbm_input("q", {heads, rows, d}, dt));
      s.k = kernels::AttentionOperand::dense(kb.hbm_input("k", {heads, d, keys}, dt));  // a transposed K cache
      s.k_transposed = true;
      s.v = kernels::AttentionOperand::dense(kb.hbm_input("v", {heads, keys, d}, dt));
      s.out = kernels::AttentionOperand::dense(kb.hbm_output("out", {heads, rows, d}, dt));
      s.heads = heads, s.seq_q = rows, s.seq_k = keys, s.head_dim = d;
      kernels::attention(kb, s);
      core::RunOptions ro;
      ro.mode = core::Mode::Timing;
      const auto r = core::run(kb.build(), chip, {}, ro);
      const double t = r.total.ms() * 1e-3;
      std::string busy;
      double dma = 0;
      for (const auto& u : r.units) {
        const double share = static_cast<double>(u.busy_ps) * 1e-12 / t;
        if (u.unit.engine == isa::Engine::Dma) dma += share;
        else busy += fmt::format(" {:.2f}", share);
      }
      fmt::print("{:>6} {:>7} {:>10.1f} {:>10.1f} {} dma {:.2f}\n", heads, keys, t * 1e6,
                 2.0 * heads * keys * d * 2 / t * 1e-9, busy, dma);
    }
}
