// Chip, core and system specifications, loaded from configs/*.yaml (spec_loader.h). Every
// field is in a strong unit type; every preset value carries its public source in the YAML.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trnsim/common/units.h"
#include "trnsim/hw/energy_spec.h"
#include "trnsim/hw/tco_spec.h"
#include "trnsim/numerics/dtype.h"

namespace trnsim::hw {

using numerics::DType;

// TensorE: a rows x cols systolic array contracting over the partition axis.
struct TensorEngineSpec {
  int rows = 128;                 // contraction (partition) dimension K per pass
  int cols = 128;                 // stationary free size M
  int max_moving_free = 512;      // N: one PSUM bank of fp32
  GHz clock;
  // Throughput relative to one bf16 MAC per PE per cycle: fp32 0.25 (four passes), fp8 1 on
  // NeuronCore-v2 (cFP8 at the bf16 rate), 2 on v3/v4 (double row), MX 4 on v4. A dtype absent
  // here is unsupported on TensorE.
  std::map<DType, double> dtype_rate;
  bool sparse_4_16 = false;       // 4:16 structured-sparse stationary operand
  // Sparse throughput as a multiple of the bf16 rate (not of the dtype's own rate): AWS
  // publishes one sparse figure per chip, 4x the dense bf16 one on Trn2 and Trn3. 1 = none.
  double sparse_speedup = 1.0;
  double stationary_load_cycles_fraction = 0.25;  // LoadStationary vs MultiplyMoving cost
};

// VectorE / ScalarE / GpSimd: lanes over partitions, elements per cycle by dtype width.
struct EngineSpec {
  GHz clock;
  int lanes = 128;
  // Whole-engine elements per cycle (128 = one element per partition per cycle, as in the NKI
  // ISA cost "max(MIN_II, N)" with N the free size per partition).
  double elems_per_cycle_16bit = 128;  // bf16/fp16 (and fp8 on v4)
  double elems_per_cycle_other = 128;  // other dtypes
  double fixed_overhead_cycles = 64;  // per-instruction static cost (MIN_II in the NKI ISA pages)
};

struct GpSimdSpec {
  GHz clock;
  int cores = 8;
  int simd_bits = 512;
  Bytes tcm_per_core;
};

struct MemorySpec {
  int partitions = 128;
  Bytes bytes_per_partition;
  int banks = 1;                      // PSUM: 8 banks of 2 KiB per partition
  Bytes capacity() const { return bytes_per_partition * partitions; }
};

struct DmaSpec {
  int engines = 16;
  int queues_per_engine = 16;
  int partitions_per_engine = 8;      // SBUF partitions an engine serves (16 x 8 = 128)
  std::string queue_arbitration = "round_robin";  // "round_robin" (v2, v3) or "qos" (v4)
  GBps bandwidth_per_engine;          // peak bytes per ns per DMA engine
  Nanoseconds fixed_overhead;         // per transfer, cross-engine (semaphore, descriptor)
  Nanoseconds descriptor_overhead;    // hardware-generated descriptor DMA instruction
  Bytes efficient_bytes_per_partition;   // below this a transfer cannot reach peak
  Bytes saturating_bytes_per_partition;  // at or above this it reaches peak
};

struct CoreSpec {
  std::string version;                // "NeuronCore-v2"
  TensorEngineSpec tensor;
  EngineSpec vector;
  EngineSpec scalar;
  GpSimdSpec gpsimd;
  MemorySpec sbuf;
  MemorySpec psum;
  DmaSpec dma;
  Nanoseconds semaphore_latency;      // cross-engine semaphore wait/signal
  // NeuronCore-v2 restrictions: VectorE and GpSimd share the SBUF port; VectorE and ScalarE
  // share the PSUM port. Lifted on v3.
  bool shared_sbuf_port_vector_gpsimd = false;
  bool shared_psum_port_vector_scalar = false;
};

struct HbmSpec {
  Bytes capacity;
  GBps bandwidth;
};

struct LinkSpec {
  std::string name;                   // "NeuronLink-v3"
  GBps bandwidth_per_chip;            // all chip-to-chip links of a chip together
  int links_per_chip = 4;
  Nanoseconds latency;
};

struct ChipSpec {
  std::string name;                   // preset key, e.g. "trn2"
  std::string display_name;           // "Trainium2"
  std::string source_file;            // where it was loaded from ("preset:chips/trn2.yaml")
  int neuron_cores = 1;
  CoreSpec core;
  HbmSpec hbm;
  LinkSpec link;
  int collective_cores = 0;
  std::vector<DType> dtypes;          // formats the chip computes in
  std::map<DType, TFlops> dense_tflops;   // published chip peaks (see the YAML for sources)
  std::map<DType, TFlops> sparse_tflops;
  std::optional<Watts> power;         // typical/peak chip power where a public figure exists
  // Host interface (PCIe) bandwidth per direction: a request's inputs come in and its outputs go
  // out over it (runtime/in_flight_load.h). Absent: host transfers are not modelled.
  std::optional<GBps> host_link;
  EnergySpec energy;                  // energy coefficients and DVFS points (energy_spec.h)

  // Peak from the TensorE clock and array size (what the timing model can reach):
  // rows x cols x 2 FLOP x clock x neuron_cores x dtype_rate. Throws UnsupportedError for a
  // dtype TensorE does not run (absent from dtype_rate).
  TFlops clock_derived_tflops(DType t) const;
  // Published peak if known, else clock-derived.
  TFlops peak_tflops(DType t) const;
  // FLOP per byte at which the chip turns from HBM- to compute-bound: peak / HBM bandwidth.
  double roofline_knee(DType t) const;
  bool supports(DType t) const { return core.tensor.dtype_rate.count(t) > 0; }
};

// One tier of a tiered switch (tiered_switch_topology.h): each chip has an uplink and a downlink
// of `bandwidth_per_chip` into it; `latency` is added per traversal (up, then down).
struct SwitchTierSpec {
  std::string name;                   // "server", "rack", "cross-rack"
  GBps bandwidth_per_chip;
  Nanoseconds latency;
};

struct TopologySpec {
  std::string kind;                   // registered name: "torus2d", "torus3d", "ring", "switch",
                                      // "tiered_switch", "single"
  std::vector<int> dims;              // torus/ring dimensions (empty for switch and single)
  GBps bandwidth_per_chip;            // scale-up bandwidth per chip (0 for single)
  // Per-chip bandwidth along each of `dims` where it is not split evenly (Trn2 UltraServer:
  // 512, 512 GB/s in the instance torus, 256 GB/s in Z); empty = bandwidth_per_chip / dims.
  std::vector<GBps> bandwidth_per_dim;
  Nanoseconds link_latency;
  // tiered_switch only: chips grouped into servers, servers into racks; tiers = server, rack,
  // cross-rack. The loader sets bandwidth_per_chip to the tiers' sum and link_latency to the
  // smallest tier latency (summary figures for reports).
  int chips_per_server = 0;
  int servers_per_rack = 0;
  std::vector<SwitchTierSpec> tiers;
};

struct ScaleOutSpec {
  std::string kind;                   // "efa", "ena" (plain Ethernet) or "none" (no public figure)
  GBps bandwidth_per_instance;        // 0 for "none"
  Nanoseconds latency;
};

struct SystemSpec {
  std::string name;                   // "trn2.48xlarge"
  std::string source_file;
  ChipSpec chip;
  int chips = 1;
  int chips_per_instance = 1;
  TopologySpec topology;
  ScaleOutSpec scale_out;
  std::optional<UsdPerHour> price;    // us-east-1 on-demand, per instance
  std::optional<UsdPerHour> price_reserved;  // effective 1-year reserved / savings-plan rate
  TcoSpec tco;                        // owned-fleet capex and maintenance
  SystemEnergySpec energy;            // host power per instance, switch and scale-out energy

  int instances() const { return chips / chips_per_instance; }  // the loader checks divisibility
};

}  // namespace trnsim::hw
