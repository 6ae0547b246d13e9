"""trnsim convert figures (docs/convert.md): size, accuracy and time of each quantisation format
and of 4:16 sparsity on all-MiniLM-L6-v2 (4 sentences x 32 tokens, calibrated on those inputs),
a CNN's conv weights (tiny ResNet-18 at width 32), one large MatMul ([1024, 2048] @
[2048, 2048]) where TensorE's sparse rate (Trn2) and MX rate (Trn3) show end to end, and a
decode-sized one ([128, 4096] @ [4096, 4096]) for weight-only MX.

    PYTHONPATH=python .venv/bin/python bench/convert_models.py [--json] [--only minilm|cnn|matmul|mx]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import trnsim  # noqa: E402

MINILM_CASES = [
    dict(quantize="int8", per_channel=True), dict(quantize="int8", per_channel=False), dict(quantize="fp8", per_channel=True),
    dict(quantize="int8", per_channel=True, activations=True), dict(quantize="mxfp8", chip="trn3"),
    dict(quantize="mxfp4", chip="trn3"), dict(quantize="mxfp8", chip="trn3", activations="mxfp8"),
    dict(quantize="mxfp4", chip="trn3", activations="mxfp4"), dict(quantize="mxfp4", chip="trn3", activations="mxfp8"),
    dict(sparsity="4:16", dtype="bf16"),
    # Trainium3 with bf16 activations: bf16 weights, weight-only MX (dequantised once per load),
    # weight+activation MX (TensorE's MX rate)
    dict(quantize="bf16", chip="trn3", dtype="bf16"), dict(quantize="mxfp8", chip="trn3", dtype="bf16"),
    dict(quantize="mxfp4", chip="trn3", dtype="bf16"), dict(quantize="mxfp8", chip="trn3", dtype="bf16", activations="mxfp8"),
    dict(quantize="mxfp4", chip="trn2", dtype="bf16"),  # no MX on Trainium2: dequantised at conversion (a warning)
]
# Conv weights (implicit GEMM): int8/fp8 per output channel, MX along the contraction.
CNN_CASES = [dict(quantize="int8", chip="trn2"), dict(quantize="fp8", chip="trn2"), dict(quantize="mxfp8", chip="trn3"),
             dict(quantize="mxfp4", chip="trn3")]
# One large MatMul on Trainium3: the MX matmul's rate end to end (bf16 policy for the A rows).
MX_MATMUL_CASES = [dict(quantize="bf16", dtype="bf16", chip="trn3"), dict(quantize="mxfp8", dtype="bf16", chip="trn3"),
                   dict(quantize="mxfp4", dtype="bf16", chip="trn3"),
                   dict(quantize="mxfp8", activations="mxfp8", dtype="bf16", chip="trn3"),
                   dict(quantize="mxfp4", activations="mxfp4", dtype="bf16", chip="trn3")]


def _minilm(tmp):
    from trnsim import models
    tokenizer, embedder = models.minilm_embedder()
    ids, mask, tt = models.minilm_inputs(tokenizer, models.MINILM_SENTENCES, seq_len=32)
    feeds = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": tt.numpy()}
    path = models.export(embedder, (ids, mask, tt), os.path.join(tmp, "minilm.onnx"), list(feeds), ["embedding"])
    return path, feeds


def _cnn(tmp):
    """tiny_resnet at width 32 (ResNet-18's layout, channels 32..256) on one 3x64x64 image."""
    from trnsim import models
    import torch
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32))
    path = models.export(models.tiny_resnet(width=32), (x,), os.path.join(tmp, "resnet.onnx"), ["x"], ["logits"])
    return path, {"x": x.numpy()}


def _matmul(tmp, m=1024, k=2048, n=2048):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = (np.random.default_rng(0).standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], "matmul",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [numpy_helper.from_array(w, "W")])
    path = os.path.join(tmp, "matmul.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _row(model, case, r):
    return {"model": model, **case, "min_cosine": r["min_cosine"], "weight_size_ratio": r["weight_size_ratio"],
            "file_size_ratio": r["file_size_ratio"], "time_s": r["time_s"], "fp32_time_s": r["fp32_time_s"],
            "time_saved_s": r["time_saved_s"], "weight_bytes": r["weight_bytes"], "fp32_weight_bytes": r["fp32_weight_bytes"],
            "file_bytes": r["file_bytes"], "mx_matmuls": r["changes"]["mx_matmuls"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--only", choices=["minilm", "cnn", "matmul", "mx"])
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "minilm"):
            path, feeds = _minilm(tmp)
            for case in MINILM_CASES:
                rows.append(_row("all-MiniLM-L6-v2", case, trnsim.convert(path, os.path.join(tmp, "m.tpg"), calibrate=feeds, **case)))
        if args.only in (None, "cnn"):
            path, feeds = _cnn(tmp)
            for case in CNN_CASES:
                rows.append(_row("tiny ResNet-18 (w32)", case, trnsim.convert(path, os.path.join(tmp, "c.tpg"), calibrate=feeds, **case)))
        if args.only in (None, "mx"):
            path = _matmul(tmp)
            for case in MX_MATMUL_CASES:
                rows.append(_row("MatMul 1024x2048x2048", case, trnsim.convert(path, os.path.join(tmp, "x.tpg"), **case)))
            # 128 rows of a 4096 x 4096 weight (a decode step's projection): the weight's bytes dominate
            path = _matmul(tmp, m=128, k=4096, n=4096)
            for case in MX_MATMUL_CASES[:4]:
                rows.append(_row("MatMul 128x4096x4096", case, trnsim.convert(path, os.path.join(tmp, "x.tpg"), **case)))
        if args.only in (None, "matmul"):
            case = dict(sparsity="4:16", dtype="bf16", chip="trn2")
            rows.append(_row("MatMul 1024x2048x2048", case, trnsim.convert(_matmul(tmp), os.path.join(tmp, "s.tpg"), **case)))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        opts = " ".join(f"{k}={v}" for k, v in r.items() if k in ("quantize", "per_channel", "activations", "sparsity", "chip", "dtype"))
        print(f"{r['model']:<22} {opts:<45} cos {r['min_cosine']:.5f}  weights {100 * r['weight_size_ratio']:5.1f}%  "
              f"file {100 * r['file_size_ratio']:5.1f}%  time {r['time_s'] * 1e6:8.1f} us (fp32 {r['fp32_time_s'] * 1e6:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
