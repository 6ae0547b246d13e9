// A decoder-only LLM described by its public architecture hyper-parameters, as in a Hugging
// Face config.json, with no weights: enough to build prefill, decode-step and training-step
// graphs (shapes and dtypes only) and to count parameters, FLOPs and KV-cache bytes.
// Presets live in configs/models/<name>.json (each field's public source in "_source");
// a user's own config.json of a supported family loads through the same parser.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trnsim::workloads {

// Mixture of experts (Mixtral, Qwen3-MoE, DeepSeek-V3, gpt-oss). experts == 0: a dense model.
struct MoeDesc {
  int experts = 0;                  // routed experts per MoE layer
  int experts_per_token = 0;        // top-k
  int shared_experts = 0;           // always-on experts (DeepSeek-V3)
  int64_t expert_intermediate = 0;  // FFN width of one expert
  int first_dense_layers = 0;       // leading layers with a dense FFN (DeepSeek-V3: 3)
  double capacity_factor = 1.0;     // tokens an expert takes, relative to the balanced share
};

// Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds the compressed latent.
struct MlaDesc {
  bool enabled = false;
  int64_t q_lora_rank = 0, kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
};

struct ModelDesc {
  std::string name;            // preset name or the file's stem
  std::string family;          // "llama", "mistral", "mixtral", "qwen3", "qwen3_moe", "deepseek_v3", "gpt_oss"
  int64_t hidden = 0;          // hidden_size
  int64_t intermediate = 0;    // intermediate_size (dense FFN)
  int64_t layers = 0;          // num_hidden_layers
  int64_t heads = 0;           // num_attention_heads
  int64_t kv_heads = 0;        // num_key_value_heads (GQA); == heads for MHA
  int64_t head_dim = 0;        // hidden / heads unless the config says otherwise
  int64_t vocab = 0;           // vocab_size
  int64_t max_positions = 0;   // max_position_embeddings
  int64_t sliding_window = 0;  // 0: full attention in every layer
  int sliding_every = 0;       // gpt-oss: every other layer is sliding (2); 0: none
  bool tie_embeddings = false;
  bool gated_ffn = true;       // SwiGLU (three matrices) vs a plain MLP (two)
  MoeDesc moe;
  MlaDesc mla;
  // Added by the llm engineer (additive): what some families need for exact counts and graphs.
  bool attention_bias = false;  // q/k/v/o biases (gpt-oss, BERT)
  bool qk_norm = false;         // Qwen3: RMSNorm over each head's q and k
  bool encoder = false;         // BERT: bidirectional, learned positions, LayerNorm, no LM head
  int64_t type_vocab = 0;       // BERT token-type embeddings
  double rope_theta = 10000.0;
  std::string source;           // the "_source" of the description (a URL)

  // Layer l (0-based) uses a sliding window (gpt-oss: every other layer; Mistral: all).
  bool layer_is_sliding(int64_t l) const;
  bool layer_is_moe(int64_t l) const;  // MoE FFN (false for leading dense layers)
  int64_t q_width() const;             // heads x (query/key head width)
  int64_t v_width() const;             // heads x value head width (the o_proj input)

  int64_t parameters() const;         // all weights
  int64_t active_parameters() const;  // weights touched per token (top-k experts only)
  // KV-cache elements per token over all layers (K and V, or MLA's latent + rope key).
  int64_t kv_elements_per_token() const;
};

// `name_or_path`: a preset in configs/models/ ("llama-3.1-8b") or a config.json path.
// A missing field, an unknown family or a nonsensical value is a ConfigError naming the
// file and the field.
ModelDesc load_model(const std::string& name_or_path);

// The presets of configs/models/, sorted (added by the llm engineer).
std::vector<std::string> model_preset_names();

}  // namespace trnsim::workloads
