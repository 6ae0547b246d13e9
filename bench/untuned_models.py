"""Models nobody tuned for (issue 4): the nine CNN graphs that ship inside the onnx wheel
(onnx/backend/test/data/light/light_*.onnx: AlexNet, DenseNet-121, Inception v1/v2, ResNet-50,
ShuffleNet, SqueezeNet, VGG-19, ZFNet-512 at 1x3x224x224) through trnsim's compiler in
functional mode with the fp32 policy on trn2, each output compared with onnxruntime on the same
seeded input (python/trnsim/run_check.py: the inputs, the comparison and its tolerances).

The "light" files hold every weight as a ConstantOfShape of 0.02, which makes many outputs
nearly uniform (a softmax of identical logits). --weights random replaces each such weight by
seeded random values scaled to keep activations in range (He-scaled Conv/Gemm weights;
BatchNormalization scale in [0.2, 0.6), variance in [0.5, 1.5), mean, bias and the Conv/Gemm
biases in [-0.1, 0.1)) and adds the logits (the final
Softmax's input) as an output, so the check sees varied values through every layer even where
the softmax saturates; both variants are real models for the compiler.

Per model: result (match: for every output, max |trnsim - onnxruntime| / max |onnxruntime|
< 1e-4; "unsupported" when the compiler refuses it with the op named; FAIL otherwise), that
largest error, the simulation's wall seconds (functional run, compile excluded),
onnxruntime's wall seconds (session creation and one run) and the simulated latency. The
--json rows also say whether each output met run_check.py's elementwise fp32 tolerance
(|d| <= 1e-4 + 1e-3 |ref|), which near-zero entries of large logits can miss by summation
order alone.

    python bench/untuned_models.py [--models alexnet,resnet50] [--weights light|random] [--json]

Exit status 1 if a model neither matches nor is refused with an op named.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
          "shufflenet", "squeezenet", "vgg19", "zfnet512")
# Pass criterion, as a fraction of the output's max |x| (softmax probabilities and logits:
# their tiny entries make an elementwise relative error meaningless).
REL_TO_MAX_TOL = 1e-4


def light_dir() -> Path:
    import onnx
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def load_model(name: str, weights: str = "light", seed: int = 0) -> bytes:
    """The model's bytes; weights="random" swaps ConstantOfShape weights for seeded values."""
    import onnx
    from onnx import numpy_helper
    path = light_dir() / f"light_{name}.onnx"
    m = onnx.load(str(path))
    if weights == "light":
        return m.SerializeToString()
    rng = np.random.default_rng(seed)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    # The role of each 1-D parameter: BatchNormalization input 1..4 (scale, bias, mean, var).
    bn_role = {}
    for n in m.graph.node:
        if n.op_type == "BatchNormalization":
            for k, name in enumerate(n.input[1:5], start=1):
                bn_role[name] = k
    keep = []
    for n in m.graph.node:
        if n.op_type != "ConstantOfShape" or n.input[0] not in inits:
            keep.append(n)
            continue
        shape = [int(d) for d in inits[n.input[0]]]
        role = bn_role.get(n.output[0])
        if len(shape) >= 2:  # Conv [M, C, k...] or Gemm [N, K] weight: He scaling keeps |x| ~ 1
            fan_in = int(np.prod(shape[1:]))
            v = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        elif role == 4:  # variance: positive
            v = rng.uniform(0.5, 1.5, size=shape)
        elif role == 1:  # scale: below 1, so residual sums do not grow without bound
            v = rng.uniform(0.2, 0.6, size=shape)
        else:  # BatchNormalization bias and mean, Conv/Gemm biases
            v = rng.uniform(-0.1, 0.1, size=shape)
        m.graph.initializer.append(numpy_helper.from_array(v.astype(np.float32), n.output[0]))
    del m.graph.node[:]
    m.graph.node.extend(keep)
    # The logits (the final Softmax's input) become an output too: random weights can drive the
    # softmax to an exact one-hot, which would hide errors in everything before it.
    soft = [n for n in m.graph.node if n.op_type == "Softmax"]
    if soft and soft[-1].input[0] not in {o.name for o in m.graph.output}:
        m.graph.output.append(onnx.helper.make_tensor_value_info(soft[-1].input[0], onnx.TensorProto.FLOAT, None))
    return m.SerializeToString()


def check_model(name: str, weights: str = "light", chip: str = "trn2", seed: int = 0,
                mode: str = "functional") -> dict[str, Any]:
    """Compile and run one light model; compare with onnxruntime in functional mode."""
    import trnsim
    from trnsim import run_check
    data = load_model(name, weights, seed)
    row: dict[str, Any] = {"model": name, "weights": weights, "mode": mode}
    t0 = time.perf_counter()
    try:
        cm = trnsim.compile_onnx(data, chip=chip, dtype="fp32", mode=mode)
        row["compile_wall_s"] = time.perf_counter() - t0
        feeds = run_check.make_inputs(run_check.model_inputs(data), seed)
        t0 = time.perf_counter()
        outs = cm.run(feeds if mode == "functional" else {})
        row["sim_wall_s"] = time.perf_counter() - t0
        row["simulated_time_s"] = float(cm.report["time_s"])
    except trnsim.UnsupportedError as e:
        row.update(result="unsupported", detail=str(e))
        return row
    except trnsim.TrnsimError as e:
        row.update(result="FAIL", detail=f"{type(e).__name__}: {e}")
        return row
    if mode != "functional":
        row["result"] = "timing-only"
        return row
    t0 = time.perf_counter()
    ref = run_check.run_onnxruntime(data, feeds)
    row["onnxruntime_wall_s"] = time.perf_counter() - t0
    worst = 0.0
    ok = True
    for out_name, r in ref.items():
        c = run_check.compare(out_name, outs[out_name], r, "fp32")
        worst = max(worst, c.max_abs_over_max)
        ok &= c.max_abs_over_max < REL_TO_MAX_TOL
        row.setdefault("outputs", []).append({"name": out_name, "shape": c.shape, "max_abs": c.max_abs,
                                              "max_abs_over_max": c.max_abs_over_max, "cosine": c.cosine,
                                              "ref_max_abs_value": float(np.max(np.abs(r))) if r.size else 0.0,
                                              "passed_fp32_tolerance": c.passed})
    row["max_abs_over_max"] = worst
    row["result"] = "match" if ok else "FAIL"
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ", ".join(MODELS))
    ap.add_argument("--weights", default="light", choices=["light", "random"])
    ap.add_argument("--chip", default="trn2")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    if not args.json:
        print(f"light models, weights={args.weights}, chip={args.chip}, fp32 policy; match = max|err|/max|ref| < "
              f"{REL_TO_MAX_TOL:g} on every output; load average {os.getloadavg()[0]:.1f}")
        print(f"{'model':<14} {'result':<12} {'err/max':>10} {'sim s':>9} {'ort s':>9} {'sim ms':>9}")
    for name in args.models.split(","):
        rows.append(check_model(name.strip(), args.weights, args.chip, args.seed))
        if not args.json:
            r = rows[-1]
            print(f"{r['model']:<14} {r['result']:<12} "
                  f"{r.get('max_abs_over_max', float('nan')):>10.2e} "
                  f"{r.get('sim_wall_s', float('nan')):>9.2f} {r.get('onnxruntime_wall_s', float('nan')):>9.3f} "
                  f"{r.get('simulated_time_s', float('nan')) * 1e3:>9.3f}"
                  + (f"  {r['detail']}" if "detail" in r else ""), flush=True)
    bad = [r for r in rows if r["result"] == "FAIL"]
    if args.json:
        print(json.dumps({"tolerance_max_abs_over_max": REL_TO_MAX_TOL, "weights": args.weights,
                          "chip": args.chip, "policy": "fp32", "load_average": os.getloadavg()[0],
                          "models": rows}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
