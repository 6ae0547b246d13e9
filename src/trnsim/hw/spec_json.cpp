#include "trnsim/hw/spec_json.h"

#include <cmath>
#include <cstdint>

namespace trnsim::hw {
namespace {

using nlohmann::json;

// Byte counts are whole numbers; write them as integers so 96 GiB reads 103079215104.
json bytes(Bytes b) {
  double v = b.value();
  if (v == std::floor(v) && std::abs(v) < 9e15) return static_cast<std::int64_t>(v);
  return v;
}

template <class Q> json optional(const std::optional<Q>& q) { return q ? json(q->value()) : json(nullptr); }

json per_dtype(const ChipSpec& c, auto value) {
  json out = json::object();
  for (auto& [t, rate] : c.core.tensor.dtype_rate) out[std::string(numerics::name(t))] = value(t);
  return out;
}

json tflops_map(const std::map<DType, TFlops>& m) {
  json out = json::object();
  for (auto& [t, v] : m) out[std::string(numerics::name(t))] = v.value();
  return out;
}

json engine(const EngineSpec& e) {
  return {{"clock_ghz", e.clock.value()},
          {"lanes", e.lanes},
          {"elems_per_cycle_16bit", e.elems_per_cycle_16bit},
          {"elems_per_cycle_other", e.elems_per_cycle_other},
          {"fixed_overhead_cycles", e.fixed_overhead_cycles}};
}

json memory(const MemorySpec& m) {
  return {{"partitions", m.partitions},
          {"bytes_per_partition", bytes(m.bytes_per_partition)},
          {"banks", m.banks},
          {"capacity_bytes", bytes(m.capacity())}};
}

json core(const CoreSpec& c) {
  const auto& t = c.tensor;
  json rates = json::object();
  for (auto& [d, r] : t.dtype_rate) rates[std::string(numerics::name(d))] = r;
  const auto& d = c.dma;
  return {
      {"version", c.version},
      {"tensor",
       {{"rows", t.rows}, {"cols", t.cols}, {"max_moving_free", t.max_moving_free},
        {"clock_ghz", t.clock.value()}, {"dtype_rate", rates}, {"sparse_4_16", t.sparse_4_16},
        {"sparse_speedup", t.sparse_speedup},
        {"stationary_load_cycles_fraction", t.stationary_load_cycles_fraction}}},
      {"vector", engine(c.vector)},
      {"scalar", engine(c.scalar)},
      {"gpsimd",
       {{"clock_ghz", c.gpsimd.clock.value()}, {"cores", c.gpsimd.cores},
        {"simd_bits", c.gpsimd.simd_bits}, {"tcm_per_core_bytes", bytes(c.gpsimd.tcm_per_core)}}},
      {"sbuf", memory(c.sbuf)},
      {"psum", memory(c.psum)},
      {"dma",
       {{"engines", d.engines}, {"queues_per_engine", d.queues_per_engine},
        {"partitions_per_engine", d.partitions_per_engine}, {"queue_arbitration", d.queue_arbitration},
        {"bandwidth_per_engine_gbps", d.bandwidth_per_engine.value()},
        {"bandwidth_per_core_gbps", d.bandwidth_per_engine.value() * d.engines},
        {"fixed_overhead_ns", d.fixed_overhead.value()},
        {"descriptor_overhead_ns", d.descriptor_overhead.value()},
        {"efficient_bytes_per_partition", bytes(d.efficient_bytes_per_partition)},
        {"saturating_bytes_per_partition", bytes(d.saturating_bytes_per_partition)}}},
      {"semaphore_latency_ns", c.semaphore_latency.value()},
      {"shared_sbuf_port_vector_gpsimd", c.shared_sbuf_port_vector_gpsimd},
      {"shared_psum_port_vector_scalar", c.shared_psum_port_vector_scalar},
  };
}

// kind "none" has no bandwidth or latency: null rather than a misleading 0.
json scale_out(const ScaleOutSpec& o) {
  bool none = o.kind == "none";
  return {{"kind", o.kind},
          {"bandwidth_per_instance_gbps", none ? json(nullptr) : json(o.bandwidth_per_instance.value())},
          {"latency_ns", none ? json(nullptr) : json(o.latency.value())}};
}

}  // namespace

json to_json(const ChipSpec& c) {
  json dtypes = json::array();
  for (auto t : c.dtypes) dtypes.push_back(std::string(numerics::name(t)));
  return {
      {"name", c.name},
      {"display_name", c.display_name},
      {"source", c.source_file},
      {"neuron_cores", c.neuron_cores},
      {"core_version", c.core.version},
      {"tensor_engine_clock_ghz", c.core.tensor.clock.value()},
      {"collective_cores", c.collective_cores},
      {"dtypes", dtypes},
      {"dense_tflops", per_dtype(c, [&](DType t) { return c.peak_tflops(t).value(); })},
      {"published_dense_tflops", tflops_map(c.dense_tflops)},
      {"clock_derived_tflops", per_dtype(c, [&](DType t) { return c.clock_derived_tflops(t).value(); })},
      {"sparse_tflops", tflops_map(c.sparse_tflops)},
      {"roofline_knee_flop_per_byte", per_dtype(c, [&](DType t) { return c.roofline_knee(t); })},
      {"hbm_capacity_bytes", bytes(c.hbm.capacity)},
      {"hbm_bandwidth_gbps", c.hbm.bandwidth.value()},
      {"link_name", c.link.name},
      {"link_bandwidth_gbps", c.link.bandwidth_per_chip.value()},
      {"links_per_chip", c.link.links_per_chip},
      {"link_latency_ns", c.link.latency.value()},
      {"sbuf_capacity_bytes_per_core", bytes(c.core.sbuf.capacity())},
      {"psum_capacity_bytes_per_core", bytes(c.core.psum.capacity())},
      {"power_w", optional(c.power)},
      {"host_link_bandwidth_gbps", optional(c.host_link)},
      {"core", core(c.core)},
  };
}

json to_json(const SystemSpec& s) {
  const auto& t = s.topology;
  json per_dim = json::array();
  for (auto bw : t.bandwidth_per_dim) per_dim.push_back(bw.value());
  json totals = per_dtype(s.chip, [&](DType d) { return s.chip.peak_tflops(d).value() * s.chips; });
  json out = {
      {"name", s.name},
      {"source", s.source_file},
      {"chip_name", s.chip.name},
      {"chips", s.chips},
      {"chips_per_instance", s.chips_per_instance},
      {"instances", s.instances()},
      {"topology",
       {{"kind", t.kind}, {"dims", t.dims}, {"bandwidth_per_chip_gbps", t.bandwidth_per_chip.value()},
        {"bandwidth_per_dim_gbps", per_dim}, {"link_latency_ns", t.link_latency.value()}}},
      {"scale_out", scale_out(s.scale_out)},
      {"price_usd_per_hour", optional(s.price)},
      {"total_dense_tflops", totals},
      {"total_hbm_capacity_bytes", bytes(s.chip.hbm.capacity * s.chips)},
      {"total_hbm_bandwidth_gbps", s.chip.hbm.bandwidth.value() * s.chips},
      {"chip", to_json(s.chip)},
  };
  if (t.kind == "tiered_switch") {  // its per-tier figures (bandwidth_per_chip is their sum)
    json tiers = json::array();
    for (const auto& tier : t.tiers)
      tiers.push_back({{"name", tier.name}, {"bandwidth_per_chip_gbps", tier.bandwidth_per_chip.value()},
                       {"latency_ns", tier.latency.value()}});
    out["topology"]["chips_per_server"] = t.chips_per_server;
    out["topology"]["servers_per_rack"] = t.servers_per_rack;
    out["topology"]["tiers"] = tiers;
  }
  return out;
}

}  // namespace trnsim::hw
