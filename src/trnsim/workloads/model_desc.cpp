#include "trnsim/workloads/model_desc.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "trnsim/common/error.h"
#include "trnsim/hw/presets.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::workloads {
namespace {

using nlohmann::json;

const std::vector<std::string> kFamilies = {"llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe",
                                            "deepseek_v3", "gpt_oss", "bert"};

// Reads typed fields of one config.json; every error names the file and the field.
struct Fields {
  const json& j;
  std::string file;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw ConfigError(fmt::format("{}: field '{}': {}", file, field, what));
  }
  int64_t integer(const std::string& k, std::optional<int64_t> def = std::nullopt, int64_t min = 1) const {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) {
      if (!def) fail(k, "missing (expected an integer)");
      return *def;
    }
    if (!it->is_number_integer()) fail(k, fmt::format("expected an integer, got {}", it->dump()));
    int64_t v = it->get<int64_t>();
    if (v < min) fail(k, fmt::format("expected an integer >= {}, got {}", min, v));
    return v;
  }
  double number(const std::string& k, double def) const {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) return def;
    if (!it->is_number()) fail(k, fmt::format("expected a number, got {}", it->dump()));
    return it->get<double>();
  }
  bool boolean(const std::string& k, bool def) const {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) return def;
    if (!it->is_boolean()) fail(k, fmt::format("expected true or false, got {}", it->dump()));
    return it->get<bool>();
  }
  std::string string(const std::string& k, const std::string& def) const {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) return def;
    if (!it->is_string()) fail(k, fmt::format("expected a string, got {}", it->dump()));
    return it->get<std::string>();
  }
};

void read_moe(const Fields& f, ModelDesc& m) {
  const bool ds = m.family == "deepseek_v3";
  const char* experts_key = ds ? "n_routed_experts" : m.family == "qwen3_moe" ? "num_experts" : "num_local_experts";
  m.moe.experts = static_cast<int>(f.integer(experts_key));
  m.moe.experts_per_token = static_cast<int>(f.integer("num_experts_per_tok"));
  if (m.moe.experts_per_token > m.moe.experts)
    f.fail("num_experts_per_tok", fmt::format("{} exceeds the {} experts", m.moe.experts_per_token, m.moe.experts));
  m.moe.expert_intermediate = f.j.contains("moe_intermediate_size") ? f.integer("moe_intermediate_size") : m.intermediate;
  m.moe.shared_experts = static_cast<int>(f.integer("n_shared_experts", 0, 0));
  m.moe.first_dense_layers = static_cast<int>(f.integer("first_k_dense_replace", 0, 0));
  m.moe.capacity_factor = f.number("capacity_factor", 1.0);
  if (m.moe.capacity_factor < 1.0) f.fail("capacity_factor", "expected a number >= 1");
}

void read_mla(const Fields& f, ModelDesc& m) {
  m.mla.enabled = true;
  m.mla.q_lora_rank = f.integer("q_lora_rank", 0, 0);
  m.mla.kv_lora_rank = f.integer("kv_lora_rank");
  m.mla.qk_nope_head_dim = f.integer("qk_nope_head_dim");
  m.mla.qk_rope_head_dim = f.integer("qk_rope_head_dim");
  m.mla.v_head_dim = f.integer("v_head_dim");
  m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
}

ModelDesc parse(const json& j, const std::string& file, const std::string& name) {
  if (!j.is_object()) throw ConfigError(fmt::format("{}: expected a JSON object (a config.json)", file));
  Fields f{j, file};
  ModelDesc m;
  m.name = name;
  m.family = f.string("model_type", "");
  if (m.family.empty()) f.fail("model_type", "missing (expected one of " + fmt::format("{}", fmt::join(kFamilies, ", ")) + ")");
  if (std::find(kFamilies.begin(), kFamilies.end(), m.family) == kFamilies.end())
    f.fail("model_type", fmt::format("'{}' is not a supported family (expected one of {})", m.family, fmt::join(kFamilies, ", ")));
  m.source = f.string("_source", "");
  m.hidden = f.integer("hidden_size");
  m.layers = f.integer("num_hidden_layers");
  m.heads = f.integer("num_attention_heads");
  m.kv_heads = f.integer("num_key_value_heads", m.heads);
  if (m.heads % m.kv_heads != 0)
    f.fail("num_key_value_heads", fmt::format("{} does not divide num_attention_heads {}", m.kv_heads, m.heads));
  m.intermediate = f.integer("intermediate_size");
  m.vocab = f.integer("vocab_size");
  m.max_positions = f.integer("max_position_embeddings", 0, 0);
  m.head_dim = f.integer("head_dim", m.hidden / m.heads);
  if (!j.contains("head_dim") && m.hidden % m.heads != 0)
    f.fail("num_attention_heads", fmt::format("{} does not divide hidden_size {} (give head_dim)", m.heads, m.hidden));
  m.rope_theta = f.number("rope_theta", 10000.0);
  m.tie_embeddings = f.boolean("tie_word_embeddings", m.family == "bert");
  m.attention_bias = f.boolean("attention_bias", m.family == "qwen2" || m.family == "bert");
  m.qk_norm = m.family == "qwen3" || m.family == "qwen3_moe";
  m.encoder = m.family == "bert";
  m.gated_ffn = !m.encoder;
  if (m.encoder) m.type_vocab = f.integer("type_vocab_size", 2, 0);
  if (j.contains("sliding_window") && !j["sliding_window"].is_null()) m.sliding_window = f.integer("sliding_window");
  if (m.family == "gpt_oss") m.sliding_every = 2;  // layer_types: sliding, full, sliding, ...
  if (m.family == "mixtral" || m.family == "qwen3_moe" || m.family == "deepseek_v3" || m.family == "gpt_oss")
    read_moe(f, m);
  if (m.family == "deepseek_v3") read_mla(f, m);
  return m;
}

}  // namespace

bool ModelDesc::layer_is_sliding(int64_t l) const {
  if (sliding_window <= 0) return false;
  return sliding_every <= 0 || l % sliding_every == 0;
}

bool ModelDesc::layer_is_moe(int64_t l) const { return moe.experts > 0 && l >= moe.first_dense_layers; }

int64_t ModelDesc::q_width() const { return heads * head_dim; }
int64_t ModelDesc::v_width() const { return heads * (mla.enabled ? mla.v_head_dim : head_dim); }

namespace {

int64_t attention_params(const ModelDesc& m) {
  const int64_t h = m.hidden;
  if (m.mla.enabled) {
    const auto& a = m.mla;
    int64_t q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * m.q_width() : h * m.q_width();
    int64_t kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank +
                 a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
    return q + kv + m.v_width() * h;
  }
  const int64_t kv = m.kv_heads * m.head_dim;
  int64_t p = h * m.q_width() + 2 * h * kv + m.q_width() * h;
  if (m.attention_bias) p += m.q_width() + 2 * kv + h;
  if (m.qk_norm) p += 2 * m.head_dim;
  if (m.family == "gpt_oss") p += m.heads;  // attention sinks
  return p;
}

int64_t ffn_params(int64_t h, int64_t i, bool gated, bool bias) {
  return (gated ? 3 : 2) * h * i + (bias ? (gated ? 2 * i : i) + h : 0);
}

// One layer's weights with `experts` of its routed experts counted.
int64_t layer_params(const ModelDesc& m, int64_t l, int experts) {
  const int64_t h = m.hidden;
  int64_t p = attention_params(m) + (m.encoder ? 4 * h : 2 * h);  // two norms (LayerNorm: and biases)
  if (!m.layer_is_moe(l)) return p + ffn_params(h, m.intermediate, m.gated_ffn, m.encoder);
  const bool expert_bias = m.family == "gpt_oss";
  p += static_cast<int64_t>(experts) * ffn_params(h, m.moe.expert_intermediate, true, expert_bias);
  p += static_cast<int64_t>(m.moe.shared_experts) * ffn_params(h, m.moe.expert_intermediate, true, false);
  p += h * m.moe.experts;                                                      // router
  if (m.family == "deepseek_v3" || m.family == "gpt_oss") p += m.moe.experts;  // router bias
  return p;
}

int64_t total(const ModelDesc& m, bool active) {
  int64_t p = m.vocab * m.hidden + (m.tie_embeddings ? 0 : m.vocab * m.hidden);
  if (m.encoder)  // learned positions, token types, embedding LayerNorm, pooler; final norm none
    p += (m.max_positions + m.type_vocab) * m.hidden + 2 * m.hidden + m.hidden * m.hidden + m.hidden;
  else
    p += m.hidden;  // final norm
  for (int64_t l = 0; l < m.layers; ++l) p += layer_params(m, l, active ? m.moe.experts_per_token : m.moe.experts);
  return p;
}

}  // namespace

int64_t ModelDesc::parameters() const { return total(*this, false); }
int64_t ModelDesc::active_parameters() const { return total(*this, true); }

int64_t ModelDesc::kv_elements_per_token() const {
  if (mla.enabled) return layers * (mla.kv_lora_rank + mla.qk_rope_head_dim);
  return layers * 2 * kv_heads * head_dim;
}

ModelDesc load_model(const std::string& name_or_path) {
  const bool path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  std::string text, file, name;
  if (path) {
    file = name_or_path;
    text = hw::read_config_file(file);
    name = std::filesystem::path(file).stem().string();
    if (name == "config") name = std::filesystem::path(file).parent_path().filename().string();
  } else {
    std::vector<std::string> names;
    for (const auto& f : hw::embedded_config_files()) {
      std::string_view p = f.path;
      if (!p.starts_with("models/") || !p.ends_with(".json")) continue;
      std::string n(p.substr(7, p.size() - 12));
      if (n == name_or_path) {
        text = std::string(f.text);
        file = "preset:" + std::string(p);
      }
      names.push_back(n);
    }
    if (file.empty())
      throw ConfigError(fmt::format("no model named '{}' (presets: {}; or give a config.json path)", name_or_path,
                                    fmt::join(names, ", ")));
    name = name_or_path;
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ConfigError(fmt::format("{}: not valid JSON: {}", file, e.what()));
  }
  return parse(j, file, name);
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> out;
  for (const auto& f : hw::embedded_config_files()) {
    std::string_view p = f.path;
    if (p.starts_with("models/") && p.ends_with(".json")) out.emplace_back(p.substr(7, p.size() - 12));
  }
  return out;
}

}  // namespace trnsim::workloads
