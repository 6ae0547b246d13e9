// GPU peers (H100, H200, B200, GB300) and their systems (p5.48xlarge, p5en.48xlarge,
// p6-b200.48xlarge, GB300 NVL72), loaded from configs/gpus/*.yaml. A GPU is described by the
// figures a per-op roofline needs (peaks, HBM, NVLink, power) plus efficiency curves that say how
// close real kernels get to those peaks; workloads/gpu_step_cost.h turns them into step times.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trnsim/common/units.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::hw {

// How close kernels come to the peaks (calibrated to published results: bench/calibration_gpu.py).
struct GpuEfficiency {
  double gemm_max = 0.8;          // fraction of the dense peak a large GEMM reaches
  double gemm_half_rows = 64;     // GEMM rows (tokens) at which it reaches half of gemm_max
  double attention = 0.5;         // prefill attention FLOPs at this fraction of the dense peak
  double memory = 0.8;            // memory-bound kernels at this fraction of HBM bandwidth
  double nvlink = 0.7;            // all-reduce bus bandwidth as a fraction of NVLink per direction
  Nanoseconds kernel_launch;      // per kernel launch (CUDA graphs: the GPU-side gap)
  int kernels_per_layer = 12;     // kernels of one transformer layer (fused as TensorRT-LLM does)
  Nanoseconds collective_latency; // per NVLink all-reduce
  Nanoseconds step_overhead;      // per engine iteration (scheduler, sampling, host sync)
};

struct GpuEnergy {
  Watts static_power;             // idle + leakage
  Joules per_flop;                // effective, dense bf16 (fp8: half, fp4: quarter)
  Joules hbm_per_byte;
  Joules nvlink_per_byte;
  // DVFS (added by power2): the SM clock's operating points relative to the boost clock, top
  // first; the point in use. SM FLOPs scale with the clock, their energy with voltage^2, static
  // power with voltage; HBM and NVLink keep theirs (gpu_at_clock_scale).
  std::vector<OperatingPoint> operating_points;
  double clock_scale = 1, voltage_scale = 1;
};

struct GpuSpec {
  std::string name, display_name, source_file;
  std::map<numerics::DType, TFlops> dense_tflops;  // bf16, fp8 (e4m3), fp4 (mxfp4) where published
  HbmSpec hbm;
  GBps nvlink_bandwidth;          // per GPU, both directions together (NVIDIA's figure)
  Watts power;                    // TDP (the default and highest power limit)
  GHz boost_clock;                // the SM clock at the top operating point
  GpuEfficiency efficiency;
  GpuEnergy energy;
  TFlops peak(numerics::DType t) const;  // UnsupportedError for a dtype without a figure
};

struct GpuSystemSpec {
  std::string name, source_file;
  GpuSpec gpu;
  int gpus = 8;
  int gpus_per_instance = 8;
  int nvlink_domain = 8;          // GPUs joined by NVLink/NVSwitch (tensor parallel fits inside)
  ScaleOutSpec scale_out;         // EFA / InfiniBand per instance
  std::optional<UsdPerHour> price;           // on-demand per instance (us-east-1)
  std::optional<UsdPerHour> price_reserved;  // effective reserved / savings-plan rate
  SystemEnergySpec energy;
  TcoSpec tco;
};

bool is_gpu_system(std::string_view name_or_path);  // a preset in configs/gpus or a file with gpus:
GpuSpec load_gpu(std::string_view name_or_path);
GpuSystemSpec load_gpu_system(std::string_view name_or_path);

// The system with its GPUs' SM clocks at scale f of the boost clock (whatever scale they are at
// now): dense peaks x f, per-FLOP energy x (V(f)/V)^2, static power x V(f)/V. UnsupportedError
// outside the operating points.
GpuSystemSpec gpu_at_clock_scale(GpuSystemSpec s, double f);

}  // namespace trnsim::hw
