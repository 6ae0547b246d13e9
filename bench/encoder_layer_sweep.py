"""Per-layer time of BERT-base and BERT-large encoders (public configs, random weights, four
layers, symbolic batch and sequence axes) over sequence lengths and batches, one NeuronCore,
bf16, timing only: the models outside the calibration set that docs/calibration.md checks SBUF-
resident activations on. A layer's time is the mean of the per-op shares of layers 1 and 2.

    PYTHONPATH=python .venv/bin/python bench/encoder_layer_sweep.py [--chip inf2] [--before BIN]

--before runs a second `trnsim` binary (e.g. main's) on the same models for a before/after table.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {"bert-base": (768, 12, 3072), "bert-large": (1024, 16, 4096)}


def export(name: str, out: Path) -> Path:
    path = out / f"{name}-4l-dynseq.onnx"
    if path.exists():
        return path
    import warnings
    import torch
    import transformers as tf
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    h, heads, inter = CONFIGS[name]
    cfg = tf.BertConfig(vocab_size=30522, hidden_size=h, num_hidden_layers=4, num_attention_heads=heads,
                        intermediate_size=inter, hidden_act="gelu", max_position_embeddings=512,
                        attn_implementation="eager")
    model = tf.BertModel(cfg).eval()

    class Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids, mask):
            return self.m(input_ids=ids, attention_mask=mask).last_hidden_state

    ids = torch.randint(0, 1000, (1, 128))
    axes = {0: "batch", 1: "seq"}
    with torch.no_grad():
        torch.onnx.export(Hidden(model).eval(), (ids, torch.ones_like(ids)), str(path), input_names=["ids", "mask"],
                          output_names=["h"], dynamic_axes={"ids": axes, "mask": axes, "h": axes},
                          opset_version=17, dynamo=False)
    return path


def layer_us(binary: str, model: Path, chip: str, seq: int, batch: int) -> tuple[float, float]:
    out = subprocess.run([binary, "run", str(model), "--chip", chip, "--dtype", "bf16", "--timing-only", "--cores", "1",
                          "--batch", str(batch), "--dim", f"seq={seq}", "--json"], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    layer = sum(op["time_s"] for op in r["ops"] if "layer.1/" in op["name"] or "layer.2/" in op["name"]) / 2
    return r["time_s"] * 1e6, layer * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chip", default="inf2")
    ap.add_argument("--before", help="a second trnsim binary to compare with")
    ap.add_argument("--seq", type=int, nargs="+", default=[64, 128, 256, 384])
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 2, 4])
    a = ap.parse_args()
    out = Path(os.environ.get("TRNSIM_CALIB_CACHE", ROOT / "out" / "calibration-cache"))
    out.mkdir(parents=True, exist_ok=True)
    after = os.environ.get("TRNSIM_BIN", str(ROOT / "build" / "src" / "trnsim"))
    print("model       seq batch  " + ("before: 4 layers us, layer us  " if a.before else "") + "after: 4 layers us, layer us")
    for name in CONFIGS:
        path = export(name, out)
        for seq in a.seq:
            for b in a.batch:
                line = f"{name:11s} {seq:3d} {b:5d}  "
                if a.before:
                    t, l = layer_us(a.before, path, a.chip, seq, b)
                    line += f"{t:10.1f} {l:8.1f}             "
                t, l = layer_us(after, path, a.chip, seq, b)
                print(line + f"{t:10.1f} {l:8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
