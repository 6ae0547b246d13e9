// Reads a chip YAML (configs/chips/*.yaml) into a ChipSpec: field by field, then the checks that
// span fields (a dtype with a published peak must run on TensorE, PSUM banks must divide a
// partition, ...). The YAML keys are the member names of chip_spec.h.
#include <fmt/core.h>

#include <cmath>
#include <set>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/hw/yaml_fields.h"

namespace trnsim::hw {
namespace {

using numerics::DType;

using DTypeSet = std::set<DType>;

// A dtype-keyed map; each key must be in `allowed` (named `allowed_name` in the error).
template <class V, class ReadValue>
std::map<DType, V> read_dtype_map(const YamlMap& m, const DTypeSet& allowed,
                                  std::string_view allowed_name, ReadValue read_value) {
  std::map<DType, V> out;
  for (auto& [k, v] : m.entries()) {
    std::string field = m.field(k.Scalar());
    DType t = m.dtype_at(k, field);
    if (!allowed.count(t)) m.fail(k, field, fmt::format("a dtype listed in {}", allowed_name));
    if (out.count(t)) m.fail(k, field, "each dtype once (an alias names the same dtype)");
    out[t] = read_value(v, field);
  }
  return out;
}

std::map<DType, TFlops> read_tflops(const YamlMap& m, const DTypeSet& allowed) {
  return read_dtype_map<TFlops>(m, allowed, "core.tensor.dtype_rate", [&](auto& v, auto& field) {
    return TFlops(m.quantity_at(v, field, Dimension::Compute));
  });
}

TensorEngineSpec read_tensor(YamlMap m, const DTypeSet& listed) {
  TensorEngineSpec t;
  t.rows = m.integer("rows");
  t.cols = m.integer("cols");
  t.max_moving_free = m.integer("max_moving_free");
  t.clock = m.quantity<GHz>("clock");
  YamlMap rates = m.any_map("dtype_rate");
  t.dtype_rate = read_dtype_map<double>(rates, listed, "dtypes", [&](auto& v, auto& field) {
    return rates.number_at(v, field, 0);
  });
  if (t.dtype_rate.empty()) m.fail_key("dtype_rate", "at least one dtype: rate entry");
  t.sparse_4_16 = m.flag("sparse_4_16");
  t.sparse_speedup = m.number("sparse_speedup");
  if (t.sparse_speedup < 1 || (!t.sparse_4_16 && t.sparse_speedup != 1))
    m.fail_key("sparse_speedup", t.sparse_4_16 ? "a number >= 1" : "1 when sparse_4_16 is false");
  t.stationary_load_cycles_fraction = m.number("stationary_load_cycles_fraction");
  if (t.stationary_load_cycles_fraction > 1)
    m.fail_key("stationary_load_cycles_fraction", "a fraction in (0, 1]");
  m.done();
  return t;
}

EngineSpec read_engine(YamlMap m) {
  EngineSpec e;
  e.clock = m.quantity<GHz>("clock");
  e.lanes = m.integer("lanes");
  e.elems_per_cycle_16bit = m.number("elems_per_cycle_16bit");
  e.elems_per_cycle_other = m.number("elems_per_cycle_other");
  e.fixed_overhead_cycles = m.integer("fixed_overhead_cycles", 0);
  m.done();
  return e;
}

GpSimdSpec read_gpsimd(YamlMap m) {
  GpSimdSpec g;
  g.clock = m.quantity<GHz>("clock");
  g.cores = m.integer("cores");
  g.simd_bits = m.integer("simd_bits");
  g.tcm_per_core = m.quantity<Bytes>("tcm_per_core");
  m.done();
  return g;
}

MemorySpec read_memory(YamlMap m) {
  MemorySpec s;
  s.partitions = m.integer("partitions");
  s.bytes_per_partition = m.quantity<Bytes>("bytes_per_partition");
  s.banks = m.integer("banks");
  if (std::fmod(s.bytes_per_partition.value(), s.banks) != 0)
    m.fail_key("banks", fmt::format("a divisor of bytes_per_partition ({} B)", s.bytes_per_partition.value()));
  m.done();
  return s;
}

DmaSpec read_dma(YamlMap m) {
  DmaSpec d;
  d.engines = m.integer("engines");
  d.queues_per_engine = m.integer("queues_per_engine");
  d.partitions_per_engine = m.integer("partitions_per_engine");
  d.queue_arbitration = m.text("queue_arbitration");
  if (d.queue_arbitration != "round_robin" && d.queue_arbitration != "qos")
    m.fail_key("queue_arbitration", "round_robin or qos");
  d.bandwidth_per_engine = m.quantity<GBps>("bandwidth_per_engine");
  d.fixed_overhead = m.quantity<Nanoseconds>("fixed_overhead");
  d.descriptor_overhead = m.quantity<Nanoseconds>("descriptor_overhead");
  d.efficient_bytes_per_partition = m.quantity<Bytes>("efficient_bytes_per_partition");
  d.saturating_bytes_per_partition = m.quantity<Bytes>("saturating_bytes_per_partition");
  if (d.saturating_bytes_per_partition < d.efficient_bytes_per_partition)
    m.fail_key("saturating_bytes_per_partition", "at least efficient_bytes_per_partition");
  m.done();
  return d;
}

CoreSpec read_core(YamlMap m, const DTypeSet& listed) {
  CoreSpec c;
  c.version = m.text("version");
  c.tensor = read_tensor(m.map("tensor", {"rows", "cols", "max_moving_free", "clock", "dtype_rate",
                                          "sparse_4_16", "sparse_speedup",
                                          "stationary_load_cycles_fraction"}),
                         listed);
  const std::vector<std::string_view> engine_keys = {"clock", "lanes", "elems_per_cycle_16bit",
                                                     "elems_per_cycle_other", "fixed_overhead_cycles"};
  c.vector = read_engine(m.map("vector", engine_keys));
  c.scalar = read_engine(m.map("scalar", engine_keys));
  c.gpsimd = read_gpsimd(m.map("gpsimd", {"clock", "cores", "simd_bits", "tcm_per_core"}));
  const std::vector<std::string_view> memory_keys = {"partitions", "bytes_per_partition", "banks"};
  c.sbuf = read_memory(m.map("sbuf", memory_keys));
  YamlMap psum = m.map("psum", memory_keys);
  c.psum = read_memory(psum);
  YamlMap dma = m.map("dma", {"engines", "queues_per_engine", "partitions_per_engine",
                              "queue_arbitration", "bandwidth_per_engine", "fixed_overhead",
                              "descriptor_overhead", "efficient_bytes_per_partition",
                              "saturating_bytes_per_partition"});
  c.dma = read_dma(dma);
  c.semaphore_latency = m.quantity<Nanoseconds>("semaphore_latency");
  c.shared_sbuf_port_vector_gpsimd = m.flag("shared_sbuf_port_vector_gpsimd");
  c.shared_psum_port_vector_scalar = m.flag("shared_psum_port_vector_scalar");

  // Geometry that must agree across units: TensorE contracts over SBUF partitions and writes
  // its M outputs to PSUM partitions; a matmul's N fp32 results fill at most one PSUM bank;
  // the DMA engines together cover every partition.
  if (c.psum.partitions != c.sbuf.partitions)
    psum.fail_key("partitions", fmt::format("the SBUF partition count ({})", c.sbuf.partitions));
  if (c.tensor.rows > c.sbuf.partitions || c.tensor.cols > c.psum.partitions)
    m.fail(m.at("tensor"), m.field("tensor"),
           fmt::format("rows and cols at most the {} partitions", c.sbuf.partitions));
  double bank_bytes = c.psum.bytes_per_partition.value() / c.psum.banks;
  if (c.tensor.max_moving_free * 4.0 > bank_bytes)
    m.fail(m.at("tensor")["max_moving_free"], m.field("tensor.max_moving_free"),
           fmt::format("at most {} (fp32 results in one {} B PSUM bank)", bank_bytes / 4, bank_bytes));
  // The compiler's matmul, convolution and attention lowerings tile the moving side in 512
  // columns (NKI's limit on every Trainium); a chip file with another width compiled programs
  // its own validator refused. Other widths are not modelled.
  if (c.tensor.max_moving_free != 512)
    m.fail(m.at("tensor")["max_moving_free"], m.field("tensor.max_moving_free"),
           "512: the compiler's lowerings tile TensorE's moving side in 512 columns; other widths are not modelled");
  if (c.dma.engines * c.dma.partitions_per_engine != c.sbuf.partitions)
    dma.fail_key("partitions_per_engine",
                 fmt::format("engines x partitions_per_engine = {} partitions", c.sbuf.partitions));
  m.done();
  return c;
}

}  // namespace

ChipSpec parse_chip(const std::string& yaml, const std::string& source) {
  YamlMap m(parse_yaml(yaml, source), source, "",
            {"name", "display_name", "neuron_cores", "collective_cores", "dtypes", "dense_tflops",
             "sparse_tflops", "power", "host_link", "hbm", "link", "core", "energy"});
  ChipSpec c;
  c.source_file = source;
  c.name = m.text("name");
  c.display_name = m.text("display_name");
  c.neuron_cores = m.integer("neuron_cores");
  c.collective_cores = m.integer("collective_cores", 0);
  DTypeSet listed;
  for (auto& n : m.sequence("dtypes")) {
    DType t = m.dtype_at(n, m.field("dtypes"));
    if (!listed.insert(t).second) m.fail(n, m.field("dtypes"), "each dtype once");
    c.dtypes.push_back(t);
  }
  if (c.dtypes.empty()) m.fail_key("dtypes", "at least one dtype");

  YamlMap core = m.map("core", {"version", "tensor", "vector", "scalar", "gpsimd", "sbuf", "psum",
                                "dma", "semaphore_latency", "shared_sbuf_port_vector_gpsimd",
                                "shared_psum_port_vector_scalar"});
  c.core = read_core(core, listed);

  // Published peaks only for dtypes TensorE runs: a peak for a dtype without a rate could
  // never be reached by the timing model.
  DTypeSet runnable;
  for (auto& [t, r] : c.core.tensor.dtype_rate) runnable.insert(t);
  if (m.has("dense_tflops")) c.dense_tflops = read_tflops(m.any_map("dense_tflops"), runnable);
  if (m.has("sparse_tflops")) c.sparse_tflops = read_tflops(m.any_map("sparse_tflops"), runnable);
  if (!c.sparse_tflops.empty() && !c.core.tensor.sparse_4_16)
    m.fail_key("sparse_tflops", "no entries when core.tensor.sparse_4_16 is false");
  c.power = m.optional_quantity<Watts>("power");
  c.host_link = m.optional_quantity<GBps>("host_link");
  if (m.has("energy"))
    c.energy = read_energy(m.map("energy", {"full_power", "static_power", "tensor_per_mac", "vector_per_element",
                                            "scalar_per_element", "gpsimd_per_element", "sbuf_per_byte",
                                            "psum_per_byte", "hbm_per_byte", "link_per_byte",
                                            "operating_points"}),
                           runnable);

  YamlMap hbm = m.map("hbm", {"capacity", "bandwidth"});
  c.hbm.capacity = hbm.quantity<Bytes>("capacity");
  c.hbm.bandwidth = hbm.quantity<GBps>("bandwidth");
  hbm.done();

  YamlMap link = m.map("link", {"name", "bandwidth_per_chip", "links_per_chip", "latency"});
  c.link.name = link.text("name");
  c.link.bandwidth_per_chip = link.quantity<GBps>("bandwidth_per_chip");
  c.link.links_per_chip = link.integer("links_per_chip", 0);
  c.link.latency = link.quantity<Nanoseconds>("latency");
  link.done();
  m.done();
  return c;
}

}  // namespace trnsim::hw
