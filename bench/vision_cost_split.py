"""Where the CNN calibration rows spend their simulated time, and what the published rows imply
(issue 10, vision round 4; docs/calibration.md, "Vision round 4").

1. Per-op shares of ResNet-18, ResNet-50 and VGG-16 (inf2, bf16, one core, batch 1 and 8) summed
   by layer type: stem (the first conv, its Pad and the max-pool after it), 3x3 convs, 1x1 convs,
   the rest (pools, classifier).
2. One scale factor per layer type, fitted by least squares to the four published ResNet rows
   (per-request time: p50 x copies / in-flight, two copies on inf2.xlarge), and the VGG-16 rows
   that those factors would predict: a cost that belongs to a layer type must fit all three.
3. The rows again on the inf2 preset with one DMA constant changed (per-engine bandwidth x2,
   fixed cost per transfer / 10): which model is bound by what.

    TRNSIM_CALIB_CACHE=... PYTHONPATH=python .venv/bin/python bench/vision_cost_split.py
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_models  # noqa: E402
import simulate_row  # noqa: E402

PRESET = Path(__file__).resolve().parents[1] / "configs" / "chips" / "inf2.yaml"
MODELS = ["resnet18", "resnet50", "vgg16"]
TYPES = ["stem", "3x3", "1x1", "rest"]
COPIES = 2  # inf2.xlarge: one model copy per NeuronCore
# (label, YAML field, value): one changed DMA constant per variant.
VARIANTS = [("inf2", None, None), ("dma bandwidth x2", "bandwidth_per_engine", "34 GB/s"),
            ("dma fixed / 10", "fixed_overhead", "130 ns")]


def layer_types(onnx_file: Path) -> dict[str, str]:
    """Conv node name -> layer type (the first conv and what runs before its successor is the stem)."""
    m = onnx.load(str(onnx_file), load_external_data=False)
    out, first = {}, True
    for n in m.graph.node:
        if n.op_type != "Conv":
            continue
        k = next((list(a.ints) for a in n.attribute if a.name == "kernel_shape"), [1, 1])
        out[n.name] = "stem" if first else ("1x1" if k == [1, 1] else "3x3")
        first = False
    return out


def split(report: dict, types: dict[str, str]) -> dict[str, float]:
    """Per-op shares (us) by layer type; Pad and MaxPool before the first 3x3/1x1 count as stem."""
    out = dict.fromkeys(TYPES, 0.0)
    body = False
    for op in report["ops"]:
        base = op["name"].removesuffix(".pad")
        t = types.get(base)
        if t in ("3x3", "1x1"):
            body = True
        kind = t if t else ("rest" if body else "stem")
        out[kind] += op["time_s"] * 1e6
    return out


def published() -> dict[tuple[str, int], tuple[float, int]]:
    return {(r["model"], int(r["batch"])): (float(r["p50_ms"]), simulate_row.in_flight_of(r))
            for r in simulate_row.read_csv("vision.csv") if r["model"] in MODELS}


def variant_chip(field: str | None, value: str | None, tmp: Path, i: int) -> str:
    if field is None:
        return "inf2"
    text, n = re.subn(rf"^(\s*{field}:)\s*[^#\n]+", rf"\1 {value}  ", PRESET.read_text(), count=1, flags=re.M)
    if n != 1:
        raise ValueError(f"{PRESET}: no field {field!r}")
    path = tmp / f"inf2_variant{i}.yaml"
    path.write_text(re.sub(r"^name: inf2", f"name: inf2-variant{i}", text, flags=re.M))
    return str(path)


def main() -> None:
    pub = published()
    rows = {}
    print("## Per-op shares by layer type (us per request, inf2, bf16, one core)\n")
    print("| model | batch | " + " | ".join(TYPES) + " | simulated | published |")
    print("|---|---|" + "---|" * (len(TYPES) + 2))
    for model in MODELS:
        onnx_file = published_models.onnx_path(model)
        types = layer_types(onnx_file)
        for batch in (1, 8):
            s = split(simulate_row.simulate(onnx_file, "inf2", batch), types)
            p50, n = pub[(model, batch)]
            target = p50 * 1e3 * min(1.0, COPIES / n)  # per-request time of the published run
            rows[(model, batch)] = (s, target)
            print(f"| {model} | {batch} | " + " | ".join(f"{s[t]:.1f}" for t in TYPES) + f" | {sum(s.values()):.1f} | {target:.1f} |")
    fit_types = ["stem", "3x3", "1x1"]
    keys = [(m, b) for m in ("resnet18", "resnet50") for b in (1, 8)]
    a = np.array([[rows[k][0][t] for t in fit_types] for k in keys])
    y = np.array([rows[k][1] - rows[k][0]["rest"] for k in keys])
    f = np.linalg.lstsq(a, y, rcond=None)[0]
    print("\n## Scale factors fitted to the four ResNet rows (rest unscaled)\n")
    print("| " + " | ".join(fit_types) + " |\n|" + "---|" * len(fit_types))
    print("| " + " | ".join(f"{x:.2f}" for x in f) + " |\n")
    print("| row | published us | simulated us | with the factors | error |\n|---|---|---|---|---|")
    for k in keys + [("vgg16", 1), ("vgg16", 8)]:
        s, target = rows[k]
        pred = sum(s[t] * x for t, x in zip(fit_types, f)) + s["rest"]
        print(f"| {k[0]} b{k[1]} | {target:.1f} | {sum(s.values()):.1f} | {pred:.1f} | {pred / target - 1:+.1%} |")
    print("\n## p50 (ms) of the calibration rows with one DMA constant changed\n")
    with tempfile.TemporaryDirectory() as d:
        chips = [(label, variant_chip(k, v, Path(d), i)) for i, (label, k, v) in enumerate(VARIANTS)]
        print("| model | batch | in-flight | " + " | ".join(label for label, _ in chips) + " |")
        print("|---|---|---|" + "---|" * len(chips))
        for model in MODELS:
            for batch in (1, 8):
                n = pub[(model, batch)][1]
                onnx_file = published_models.onnx_path(model)
                p50 = [simulate_row.simulate(onnx_file, chip, batch, extra=("--in-flight", str(n)))["load"]["p50_latency_s"] * 1e3
                       for _, chip in chips]
                print(f"| {model} | {batch} | {n} | " + " | ".join(f"{x:.4f}" for x in p50) + " |")


if __name__ == "__main__":
    main()
