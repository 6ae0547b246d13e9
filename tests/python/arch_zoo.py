"""The architecture zoo of the sweep (issue 11): 35 model families as users bring them, each
built from a tiny config (2 layers, hidden 32, vocab 128, seeded random weights, eval mode) so
the whole sweep compiles and simulates in CI.

`transformers` supplies every family it has; plain torch.nn supplies the rest (MobileNetV3: not
in transformers; a UNet; LSTM/GRU models), since timm needs torchvision, which this project
cannot install beside its pinned CPU torch.

Each builder returns (module, example_inputs). The module returns a tensor or a tuple of
tensors (logits, hidden states), so eager PyTorch is the reference every path is compared with.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn as nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SEED = 0
VOCAB = 128
HIDDEN = 32
BATCH = 2
SEQ = 8


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _ids(seq: int = SEQ, vocab: int = VOCAB, seed: int = 1) -> torch.Tensor:
    return torch.randint(3, vocab, (BATCH, seq), generator=_gen(seed))


def _padded_mask(seq: int = SEQ) -> torch.Tensor:
    """Right padding on the second sequence: the mask arithmetic is exercised, not all ones."""
    m = torch.ones(BATCH, seq, dtype=torch.long)
    m[1, seq - 3:] = 0
    return m


def _image(channels: int = 3, size: int = 32, seed: int = 2) -> torch.Tensor:
    return torch.randn(BATCH, channels, size, size, generator=_gen(seed))


def _text_cfg(**kw) -> dict:
    base = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=64)
    base.update(kw)
    return base


def _hf(cls_name: str, cfg_name: str, **cfg):
    import transformers
    torch.manual_seed(SEED)
    config = getattr(transformers, cfg_name)(**cfg)
    config._attn_implementation = "eager"  # matmul + softmax: SDPA's export adds NaN guards
    return getattr(transformers, cls_name)(config).eval()


class _Call(nn.Module):
    """model(**kwargs built from positional tensors) -> the named output fields."""

    def __init__(self, model: nn.Module, names: tuple[str, ...], fields: tuple[str, ...], **fixed):
        super().__init__()
        self.model, self.names, self.fields, self.fixed = model, names, fields, fixed

    def forward(self, *args):
        out = self.model(**dict(zip(self.names, args)), **self.fixed)
        res = tuple(getattr(out, f) for f in self.fields)
        return res[0] if len(res) == 1 else res


def _encoder(cls: str, cfg: str, **kw):
    m = _hf(cls, cfg, **_text_cfg(**kw))
    return _Call(m, ("input_ids", "attention_mask"), ("last_hidden_state",)), (_ids(), _padded_mask())


def _causal(cls: str, cfg: str, **kw):
    m = _hf(cls, cfg, **_text_cfg(**kw))
    ids = _ids()
    return (_Call(m, ("input_ids", "attention_mask"), ("logits",), use_cache=False),
            (ids, torch.ones_like(ids)))


def _seq2seq(cls: str, cfg: str, **kw):
    m = _hf(cls, cfg, **kw)
    return (_Call(m, ("input_ids", "attention_mask", "decoder_input_ids"), ("logits",), use_cache=False),
            (_ids(), _padded_mask(), _ids(6, seed=3)))


def _vision(cls: str, cfg: str, field: str = "last_hidden_state", channels: int = 3, size: int = 32, **kw):
    m = _hf(cls, cfg, **kw)
    return _Call(m, ("pixel_values",), (field,)), (_image(channels, size),)


# ---------------------------------------------------------------------- text: encoders

def gpt2():
    m = _hf("GPT2LMHeadModel", "GPT2Config", vocab_size=VOCAB, n_embd=HIDDEN, n_layer=2, n_head=4, n_positions=64,
            bos_token_id=1, eos_token_id=2)
    ids = _ids()
    return _Call(m, ("input_ids", "attention_mask"), ("logits",), use_cache=False), (ids, torch.ones_like(ids))


def bert():
    return _encoder("BertModel", "BertConfig")


def distilbert():
    m = _hf("DistilBertModel", "DistilBertConfig", vocab_size=VOCAB, dim=HIDDEN, n_layers=2, n_heads=4,
            hidden_dim=64, max_position_embeddings=64)
    return _Call(m, ("input_ids", "attention_mask"), ("last_hidden_state",)), (_ids(), _padded_mask())


def roberta():
    return _encoder("RobertaModel", "RobertaConfig", pad_token_id=1)


def albert():
    return _encoder("AlbertModel", "AlbertConfig", embedding_size=16)


def electra():
    return _encoder("ElectraModel", "ElectraConfig", embedding_size=16)


# ---------------------------------------------------------------------- text: seq2seq

def t5():
    return _seq2seq("T5ForConditionalGeneration", "T5Config", vocab_size=VOCAB, d_model=HIDDEN, d_kv=8, d_ff=64,
                    num_layers=2, num_decoder_layers=2, num_heads=4, decoder_start_token_id=0)


def bart():
    return _seq2seq("BartForConditionalGeneration", "BartConfig", vocab_size=VOCAB, d_model=HIDDEN,
                    encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                    encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64)


# ---------------------------------------------------------------------- text: decoders

def llama():
    return _causal("LlamaForCausalLM", "LlamaConfig", num_key_value_heads=2)


def mistral():
    return _causal("MistralForCausalLM", "MistralConfig", num_key_value_heads=2, sliding_window=4)


def qwen2():
    return _causal("Qwen2ForCausalLM", "Qwen2Config", num_key_value_heads=2)


def qwen3():
    return _causal("Qwen3ForCausalLM", "Qwen3Config", num_key_value_heads=2, head_dim=8)


def phi3():
    return _causal("Phi3ForCausalLM", "Phi3Config", num_key_value_heads=2, pad_token_id=0, bos_token_id=1,
                   eos_token_id=2)


def gemma():
    return _causal("GemmaForCausalLM", "GemmaConfig", num_key_value_heads=1, head_dim=8)


def gemma2():
    return _causal("Gemma2ForCausalLM", "Gemma2Config", num_key_value_heads=2, head_dim=8, sliding_window=4)


def mixtral():
    return _causal("MixtralForCausalLM", "MixtralConfig", num_key_value_heads=2, num_local_experts=4,
                   num_experts_per_tok=2)


def qwen_moe():
    return _causal("Qwen2MoeForCausalLM", "Qwen2MoeConfig", num_key_value_heads=2, num_experts=4,
                   num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=32)


def qwen3_moe():
    return _causal("Qwen3MoeForCausalLM", "Qwen3MoeConfig", num_key_value_heads=2, head_dim=8, num_experts=4,
                   num_experts_per_tok=2, moe_intermediate_size=32)


def falcon():
    return _causal("FalconForCausalLM", "FalconConfig", num_kv_heads=4, new_decoder_architecture=False)


def gpt_neox():
    return _causal("GPTNeoXForCausalLM", "GPTNeoXConfig", rotary_pct=0.5)


def opt():
    m = _hf("OPTForCausalLM", "OPTConfig", vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2,
            num_attention_heads=4, ffn_dim=64, max_position_embeddings=64, word_embed_proj_dim=HIDDEN)
    ids = _ids()
    return _Call(m, ("input_ids", "attention_mask"), ("logits",), use_cache=False), (ids, _padded_mask())


# ---------------------------------------------------------------------- vision

def vit():
    return _vision("ViTModel", "ViTConfig", image_size=32, patch_size=8, hidden_size=HIDDEN, num_hidden_layers=2,
                   num_attention_heads=4, intermediate_size=64)


def deit():
    return _vision("DeiTModel", "DeiTConfig", image_size=32, patch_size=8, hidden_size=HIDDEN, num_hidden_layers=2,
                   num_attention_heads=4, intermediate_size=64)


def swin():
    return _vision("SwinModel", "SwinConfig", image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                   num_heads=[2, 4], window_size=4)


def convnext():
    return _vision("ConvNextModel", "ConvNextConfig", num_stages=2, hidden_sizes=[16, 32], depths=[1, 1])


def resnet():
    return _vision("ResNetModel", "ResNetConfig", embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1],
                   layer_type="basic", field="pooler_output")


def _he_init(model: nn.Module) -> nn.Module:
    """He-normal conv weights and varied batch-norm statistics: with the default init (std 0.02)
    EfficientNet's output shrinks to ~1e-23, which any answer would match."""
    torch.manual_seed(SEED)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                fan_in = m.weight[0].numel()
                m.weight.normal_(0.0, (2.0 / fan_in) ** 0.5)
    return _randomise_bn(model)


def efficientnet():
    model, inputs = _vision("EfficientNetModel", "EfficientNetConfig", image_size=32, width_coefficient=0.25,
                   depth_coefficient=0.2, kernel_sizes=[3, 5], in_channels=[32, 16], out_channels=[16, 24],
                   strides=[1, 2], num_block_repeats=[1, 1], expand_ratios=[1, 6],
                   hidden_dim=320,  # the head conv's width: round_filters(1280) at width 0.25
                   field="pooler_output")
    _he_init(model.model)
    return model, inputs


def clip():
    import transformers
    torch.manual_seed(SEED)
    text = dict(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, max_position_embeddings=16, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    vision = dict(image_size=32, patch_size=8, hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4)
    config = transformers.CLIPConfig(text_config=text, vision_config=vision, projection_dim=16)
    config._attn_implementation = "eager"
    m = transformers.CLIPModel(config).eval()
    return (_Call(m, ("input_ids", "attention_mask", "pixel_values"), ("logits_per_image",)),
            (_ids(), _padded_mask(), _image()))


# ---------------------------------------------------------------------- audio

def whisper():
    m = _hf("WhisperModel", "WhisperConfig", vocab_size=VOCAB, num_mel_bins=16, d_model=HIDDEN, encoder_layers=2,
            decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
            decoder_ffn_dim=64, max_source_positions=16, max_target_positions=32,
            pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    feats = torch.randn(BATCH, 16, 32, generator=_gen(4))
    return (_Call(m, ("input_features", "decoder_input_ids"), ("last_hidden_state",), use_cache=False),
            (feats, _ids(6, seed=3)))


def wav2vec2():
    m = _hf("Wav2Vec2Model", "Wav2Vec2Config", hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, feat_extract_norm="group")
    audio = torch.randn(BATCH, 400, generator=_gen(5))
    return _Call(m, ("input_values",), ("last_hidden_state",)), (audio,)


# ---------------------------------------------------------------------- plain torch.nn

class _SE(nn.Module):
    def __init__(self, c: int, r: int = 4):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, c // r, 1), nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(s))))


class _InvertedResidual(nn.Module):
    """MobileNetV3's block: 1x1 expand, depthwise kxk, squeeze-excite, 1x1 project, residual."""

    def __init__(self, cin: int, exp: int, cout: int, k: int, stride: int, se: bool, act):
        super().__init__()
        layers = [nn.Conv2d(cin, exp, 1, bias=False), nn.BatchNorm2d(exp), act(),
                  nn.Conv2d(exp, exp, k, stride, k // 2, groups=exp, bias=False), nn.BatchNorm2d(exp), act()]
        if se:
            layers.append(_SE(exp))
        layers += [nn.Conv2d(exp, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


def _randomise_bn(model: nn.Module) -> nn.Module:
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def mobilenetv3():
    """MobileNetV3-Small's layout, narrow: hardswish stem, inverted residuals with SE, head."""
    torch.manual_seed(SEED)
    hs, relu = nn.Hardswish, nn.ReLU
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), hs(),
        _InvertedResidual(16, 16, 16, 3, 2, True, relu),
        _InvertedResidual(16, 48, 24, 3, 2, False, relu),
        _InvertedResidual(24, 64, 24, 5, 1, True, hs),
        nn.Conv2d(24, 64, 1, bias=False), nn.BatchNorm2d(64), hs(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 32), hs(), nn.Linear(32, 10))
    return _randomise_bn(model), (_image(),)


class UNet(nn.Module):
    """A two-level UNet (as in diffusion and segmentation models): conv + GroupNorm + SiLU blocks,
    strided downsampling, ConvTranspose upsampling, skip connections by concatenation."""

    def __init__(self, c: int = 8):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(4, cout), nn.SiLU(),
                                 nn.Conv2d(cout, cout, 3, padding=1), nn.GroupNorm(4, cout), nn.SiLU())

        self.enc1, self.enc2 = block(3, c), block(c, 2 * c)
        self.down1, self.down2 = nn.Conv2d(c, c, 3, 2, 1), nn.Conv2d(2 * c, 2 * c, 3, 2, 1)
        self.mid = block(2 * c, 4 * c)
        self.up2, self.dec2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2), block(4 * c, 2 * c)
        self.up1, self.dec1 = nn.ConvTranspose2d(2 * c, c, 2, 2), block(2 * c, c)
        self.out = nn.Conv2d(c, 3, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.down1(e1))
        m = self.mid(self.down2(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1)


def unet():
    torch.manual_seed(SEED)
    return UNet().eval(), (_image(size=16),)


class RecurrentLM(nn.Module):
    """Embedding -> 2-layer LSTM or GRU (optionally bidirectional) -> linear over the vocabulary."""

    def __init__(self, cell: str, bidirectional: bool = False):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HIDDEN)
        self.rnn = getattr(nn, cell)(HIDDEN, HIDDEN, num_layers=2, batch_first=True, bidirectional=bidirectional)
        self.head = nn.Linear(HIDDEN * (2 if bidirectional else 1), VOCAB)

    def forward(self, ids):
        y, _ = self.rnn(self.emb(ids))
        return self.head(y)


def _recurrent(cell: str, bidirectional: bool = False):
    torch.manual_seed(SEED)
    return RecurrentLM(cell, bidirectional).eval(), (_ids(),)


def lstm():
    return _recurrent("LSTM")


def gru():
    return _recurrent("GRU")


def bilstm():
    return _recurrent("LSTM", bidirectional=True)


@dataclass(frozen=True)
class Arch:
    name: str
    build: Callable[[], tuple[nn.Module, tuple[torch.Tensor, ...]]]


ARCHS = [Arch(f.__name__.replace("_", "-"), f) for f in (
    gpt2, bert, distilbert, roberta, albert, electra, t5, bart, llama, mistral, qwen2, qwen3, phi3, gemma,
    gemma2, mixtral, qwen_moe, qwen3_moe, falcon, gpt_neox, opt, vit, deit, swin, convnext, clip, whisper, wav2vec2,
    resnet, mobilenetv3, efficientnet, unet, lstm, gru, bilstm)]
BY_NAME = {a.name: a for a in ARCHS}
