"""One CompiledModel run with a sequence of input shapes (symbolic batch and sequence axes):
each run must match onnxruntime, whatever ran before it (the per-shape program cache), under
several chip / core configurations, and with compile_onnx(batch=N) / dims={...} given up front.

    PYTHONPATH=python .venv/bin/python fuzz/config_diff/reshape_runs.py
"""
import math
import sys
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "pattern_pairs"))
import onnx  # noqa: E402
from onnx import helper, TensorProto  # noqa: E402
import trnsim  # noqa: E402
from generate import B, _attention  # noqa: E402
from run import compare, ort_run  # noqa: E402


def model(kind, E=64, H=4, seed=0):
    b = B(seed)
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", E]))
    x = "x"
    if kind == "mlp":
        h = b.op("Relu", [b.op("Add", [b.op("MatMul", [b.ln(x, E), b.w(E, 4 * E)]), b.w(4 * E, scale=0.1)])])
        b.out(b.op("Add", [b.op("MatMul", [h, b.w(4 * E, E)]), x]))
    else:
        D = E // H
        t = b.ln(x, E)
        ys = [b.op("MatMul", [t, b.w(E, E)]) for _ in range(3)]
        q = b.op("Transpose", [b.op("Reshape", [ys[0], b.ints([0, 0, H, D])])], perm=[0, 2, 1, 3])
        k = b.op("Transpose", [b.op("Reshape", [ys[1], b.ints([0, 0, H, D])])], perm=[0, 2, 3, 1])
        v = b.op("Transpose", [b.op("Reshape", [ys[2], b.ints([0, 0, H, D])])], perm=[0, 2, 1, 3])
        o = _attention(b, q, k, v, scale=("div", math.sqrt(D)), out_perm=[0, 2, 1, 3])
        o = b.op("Reshape", [o, b.ints([0, 0, E])])
        b.out(b.op("Add", [b.op("MatMul", [o, b.w(E, E)]), x]))
    return b.model().SerializeToString()


SHAPES = [(1, 129), (3, 7), (2, 300), (1, 1), (5, 130), (1, 129)]
CONFIGS = [dict(chip="trn1", cores=1), dict(chip="trn2"), dict(chip="trn2", cores=3, lnc=1), dict(chip="inf2"),
           dict(chip="trn3", dtype="bf16")]


def main():
    bad = total = 0
    for kind in ("mlp", "attn"):
        data = model(kind)
        rng = np.random.default_rng(1)
        xs = [rng.standard_normal((bt, s, 64)).astype(np.float32) for bt, s in SHAPES]
        refs = [ort_run(data, {"x": x}) for x in xs]
        for cfg in CONFIGS:
            rel = 0.2 if cfg.get("dtype") == "bf16" else 1e-3
            variants = [("one model, shapes in turn", None)] + [(f"batch={bt}, dims seq={s}", (bt, s)) for bt, s in SHAPES[:3]]
            for name, fixed in variants:
                cm = None if fixed is None else trnsim.compile_onnx(data, batch=fixed[0], dims={"seq": fixed[1]}, **cfg)
                if cm is None:
                    cm = trnsim.compile_onnx(data, **cfg)
                for (bt, s), x, e in zip(SHAPES, xs, refs):
                    if fixed is not None and (bt, s) != fixed:
                        continue
                    total += 1
                    try:
                        got = cm.run({"x": x})
                        d = compare(got, e, rel, cfg.get("dtype", "fp32") != "fp32")
                    except trnsim.TrnsimError as err:
                        d = [f"{type(err).__name__}: {err}"]
                    if d:
                        bad += 1
                        print(f"WRONG {kind} {cfg} [{name}] x{list(x.shape)}: {'; '.join(d)[:300]}", flush=True)
    print(f"reshape_runs: {total} runs, {bad} wrong")


if __name__ == "__main__":
    main()
