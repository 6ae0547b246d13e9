"""The calibration set's models, built from their public architectures with seeded random
weights (the weights do not change timing), exported once to ONNX and cached.

- encoders from `transformers` configs written out by hand from the published hyper-parameters
  (nothing downloads): ALBERT-base-v2, DistilBERT-base-uncased, ELECTRA-base-discriminator,
  RoBERTa-large, each with its sequence-classification head (2 labels), eager attention;
- ViT-base-patch16-224 (image classification, 1000 classes);
- ResNet-18/50 and VGG-16 in plain PyTorch (torchvision's layer shapes: He et al. 2015,
  Simonyan & Zisserman 2014), BatchNorm in eval mode.

Every model is exported with a symbolic batch axis (the TorchScript exporter, opset 17), so one
file serves every batch (`trnsim run --batch N`). The cache directory is $TRNSIM_CALIB_CACHE,
else `out/calibration-cache` in the repository; a file is rebuilt when EXPORT_VERSION changes.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
EXPORT_VERSION = 1  # bump when an architecture or the export options change
SEQ = 128


def cache_dir() -> Path:
    d = Path(os.environ.get("TRNSIM_CALIB_CACHE", ROOT / "out" / "calibration-cache"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _torch():
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch
    return torch


# --- encoders ---------------------------------------------------------------------------------

def _encoder_config(name: str):
    import transformers as tf
    common = dict(attn_implementation="eager", num_labels=2)
    if name == "albert-base-v2":  # albert-base-v2/config.json
        return tf.AlbertConfig(vocab_size=30000, embedding_size=128, hidden_size=768,
                               num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                               hidden_act="gelu_new", max_position_embeddings=512,
                               type_vocab_size=2, **common)
    if name == "distilbert-base-uncased":  # distilbert-base-uncased/config.json
        return tf.DistilBertConfig(vocab_size=30522, dim=768, n_layers=6, n_heads=12,
                                   hidden_dim=3072, activation="gelu",
                                   max_position_embeddings=512, **common)
    if name == "google/electra-base-discriminator":  # its config.json
        return tf.ElectraConfig(vocab_size=30522, embedding_size=768, hidden_size=768,
                                num_hidden_layers=12, num_attention_heads=12,
                                intermediate_size=3072, hidden_act="gelu",
                                max_position_embeddings=512, type_vocab_size=2, **common)
    if name == "roberta-large":  # roberta-large/config.json
        return tf.RobertaConfig(vocab_size=50265, hidden_size=1024, num_hidden_layers=24,
                                num_attention_heads=16, intermediate_size=4096, hidden_act="gelu",
                                max_position_embeddings=514, type_vocab_size=1,
                                pad_token_id=1, **common)
    if name == "bert-base-uncased":  # bert-base-uncased/config.json (benchmarks, not calibrated)
        return tf.BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                             num_attention_heads=12, intermediate_size=3072, hidden_act="gelu",
                             max_position_embeddings=512, type_vocab_size=2, **common)
    raise KeyError(name)


def _encoder_module(name: str):
    torch = _torch()
    import transformers as tf
    cfg = _encoder_config(name)
    cls = {"albert-base-v2": tf.AlbertForSequenceClassification,
           "distilbert-base-uncased": tf.DistilBertForSequenceClassification,
           "google/electra-base-discriminator": tf.ElectraForSequenceClassification,
           "roberta-large": tf.RobertaForSequenceClassification,
           "bert-base-uncased": tf.BertForSequenceClassification}[name]
    torch.manual_seed(0)
    model = cls(cfg).eval()

    class Logits(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m
            # RoBERTa numbers positions from padding_idx + 1 with a CumSum over the mask; with
            # every token real that is arange(2, seq + 2), passed as a constant.
            self.register_buffer("pos", torch.arange(SEQ).unsqueeze(0) + 2, persistent=False)

        def forward(self, input_ids, attention_mask):
            kw = {"position_ids": self.pos.expand_as(input_ids)} if name == "roberta-large" else {}
            return self.m(input_ids=input_ids, attention_mask=attention_mask, **kw).logits

    ids = torch.randint(0, 1000, (1, SEQ))
    return Logits(model).eval(), (ids, torch.ones_like(ids)), ["input_ids", "attention_mask"]


# --- vision -----------------------------------------------------------------------------------

def _resnet(depth: int):
    torch = _torch()
    nn = torch.nn

    class Basic(nn.Module):
        expansion = 1

        def __init__(self, cin, c, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(c)
            self.c2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(c)
            self.down = None
            if stride != 1 or cin != c:
                self.down = nn.Sequential(nn.Conv2d(cin, c, 1, stride, bias=False), nn.BatchNorm2d(c))

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, c, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, c, 1, bias=False)
            self.b1 = nn.BatchNorm2d(c)
            self.c2 = nn.Conv2d(c, c, 3, stride, 1, bias=False)
            self.b2 = nn.BatchNorm2d(c)
            self.c3 = nn.Conv2d(c, 4 * c, 1, bias=False)
            self.b3 = nn.BatchNorm2d(4 * c)
            self.down = None
            if stride != 1 or cin != 4 * c:
                self.down = nn.Sequential(nn.Conv2d(cin, 4 * c, 1, stride, bias=False),
                                          nn.BatchNorm2d(4 * c))

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            y = torch.relu(self.b2(self.c2(y)))
            y = self.b3(self.c3(y))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    block, counts = {18: (Basic, [2, 2, 2, 2]), 50: (Bottleneck, [3, 4, 6, 3])}[depth]
    layers, cin = [], 64
    for i, (c, n) in enumerate(zip([64, 128, 256, 512], counts)):
        for j in range(n):
            layers.append(block(cin, c, 2 if (j == 0 and i > 0) else 1))
            cin = c * block.expansion
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                         nn.MaxPool2d(3, 2, 1), *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(cin, 1000))


def _vgg16():
    nn = _torch().nn
    layers, cin = [], 3
    for v in [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(cin, v, 3, padding=1), nn.ReLU()]
            cin = v
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(512 * 7 * 7, 4096), nn.ReLU(),
                         nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1000))


def _vit():
    torch = _torch()
    import transformers as tf
    cfg = tf.ViTConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                       intermediate_size=3072, hidden_act="gelu", image_size=224, patch_size=16,
                       num_channels=3, num_labels=1000, attn_implementation="eager")
    torch.manual_seed(0)
    m = tf.ViTForImageClassification(cfg).eval()

    class Logits(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, pixel_values):
            return self.m(pixel_values=pixel_values).logits

    return Logits(m).eval()


def _vision_module(name: str):
    torch = _torch()
    torch.manual_seed(0)
    build: dict[str, Callable] = {"resnet18": lambda: _resnet(18), "resnet50": lambda: _resnet(50),
                                  "vgg16": _vgg16, "google/vit-base-patch16-224": _vit}
    m = build[name]().eval()
    return m, (torch.randn(1, 3, 224, 224),), ["pixel_values"]


ENCODERS = ("albert-base-v2", "distilbert-base-uncased", "google/electra-base-discriminator",
            "roberta-large")
EXTRA = ("bert-base-uncased",)  # used by bench/bert_timing.py
VISION = ("resnet18", "resnet50", "vgg16", "google/vit-base-patch16-224")


def onnx_path(name: str) -> Path:
    """The cached ONNX file of `name` (exported now if missing)."""
    path = cache_dir() / f"{name.replace('/', '_')}-v{EXPORT_VERSION}.onnx"
    if path.exists():
        return path
    import warnings
    torch = _torch()
    module, inputs, names = (_encoder_module if name in ENCODERS + EXTRA else _vision_module)(name)
    tmp = path.with_suffix(".tmp")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, inputs, str(tmp), dynamo=False, opset_version=17,
                          input_names=names, output_names=["logits"], do_constant_folding=True,
                          dynamic_axes={n: {0: "batch"} for n in names + ["logits"]})
    tmp.rename(path)
    return path


if __name__ == "__main__":
    for n in sys.argv[1:] or ENCODERS + VISION:
        print(onnx_path(n))
