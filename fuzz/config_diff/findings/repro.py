"""Reproduces fuzz/config_diff/FINDINGS.md's findings (numbers printed, exit 0 either way).

    PYTHONPATH=python .venv/bin/python fuzz/config_diff/findings/repro.py
"""
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import trnsim  # noqa: E402

HERE = Path(__file__).resolve().parent


def inputs(path):
    m = onnx.load(path)
    rng = np.random.default_rng(0)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32) for i in m.graph.input}


def ref(path, x):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, x)))


def converted(path, x, **kw):
    with tempfile.TemporaryDirectory() as td:
        t = os.path.join(td, "p.tpg")
        rep = trnsim.convert(str(path), t, **kw)
        return rep, trnsim.load_compiled(t).run(x)


def show(tag, got, exp):
    for k, e in exp.items():
        g = got[k]
        print(f"  {tag:28s} {k}: NaN {int(np.isnan(g).sum())}/{g.size}, max|err| {np.nanmax(np.abs(g - e)):.4g}, "
              f"rel L2 {np.linalg.norm(np.nan_to_num(g - e, nan=0)) / np.linalg.norm(e):.3g}; y[0,0,:3] {g.reshape(-1)[:3]} vs {e.reshape(-1)[:3]}")


# 1. quantized-ln-prologue
p = HERE / "quantized-ln-prologue.onnx"
x = inputs(p)
e = ref(p, x)
print("1. quantized-ln-prologue: y = LayerNorm(x[1,4,8], scale != 1) @ W[8,8]")
show("compile_onnx fp32 trn2", trnsim.compile_onnx(str(p), chip="trn2").run(x), e)
for q in ("bf16", "int8", "fp8"):
    rep, got = converted(p, x, quantize=q, chip="trn2")
    show(f"convert --quantize {q}", got, e)
    print(f"  {'':28s} convert's own accuracy report: {rep['accuracy']['y']}")

# 2. flat-operand-batch1
p = HERE / "flat-operand-batch1.onnx"
x = inputs(p)
e = ref(p, x)
print("2. flat-operand-batch1: y = a[1,4,32] @ W[32,32] + x[1,4,32]")
show("compile_onnx fp32 trn3", trnsim.compile_onnx(str(p), chip="trn3").run(x), e)
m2 = onnx.load(p)  # the sibling: batch 2
for v in list(m2.graph.input) + list(m2.graph.output):
    v.type.tensor_type.shape.dim[0].dim_value = 2
with tempfile.TemporaryDirectory() as td:
    p2 = Path(td) / "batch2.onnx"
    onnx.save(m2, p2)
    x2 = inputs(p2)
    e2 = ref(p2, x2)
    for kw in (dict(quantize="mxfp8", chip="trn3"), dict(quantize="mxfp8", activations="mxfp8", chip="trn3"),
               dict(sparsity="4:16", dtype="bf16", chip="trn2")):
        for tag, path, xx, ee in (("batch 1", p, x, e), ("batch 2", p2, x2, e2)):
            try:
                rep, got = converted(path, xx, **kw)
                print(f"  convert {kw} {tag}: runs, convert's accuracy {rep['accuracy']['y']}")
            except trnsim.TrnsimError as err:
                print(f"  convert {kw} {tag}: {type(err).__name__}: {err}")

# 3. moving-free-256
p = HERE / "moving-free-256.onnx"
chip = str(HERE / "trn2-moving-free-256.yaml")
x = inputs(p)
e = ref(p, x)
print("3. moving-free-256: y = x[4,64] @ W[64,600] on trn2 with tensor.max_moving_free: 256")
for kw in (dict(chip="trn2", cores=1), dict(chip=chip, cores=0), dict(chip=chip, cores=1)):
    try:
        show(f"cores={kw['cores']} {Path(kw['chip']).name}", trnsim.compile_onnx(str(p), **kw).run(x), e)
    except trnsim.TrnsimError as err:
        print(f"  cores={kw['cores']} {Path(kw['chip']).name}: {type(err).__name__}: {err}")

# 4. pool-window-wide-row
p = HERE / "pool-window-wide-row.onnx"
x = inputs(p)
e = ref(p, x)
print("4. pool-window-wide-row: MaxPool(x[1,1,5,600], 5x5, pads 2); width 500 runs")
for kw in (dict(chip="trn2"), dict(chip="trn1", cores=1)):
    try:
        show(f"{kw}", trnsim.compile_onnx(str(p), **kw).run(x), e)
    except trnsim.TrnsimError as err:
        print(f"  {kw}: {type(err).__name__}: {err}")
