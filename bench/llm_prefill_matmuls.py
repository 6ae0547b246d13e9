"""The four weight matmuls of one Llama-2-70B layer on one TP rank, timed by the compiler's
lowering in timing mode, at prompt sizes around the SBUF boundary of the activations.

Prints, per matmul and token count: time, TFLOP/s, HBM bytes and bandwidth, and how many times
the weight was read (HBM bytes minus the activation read once and the output written once,
over the weight's bytes). docs/llm.md (Calibration, round 4) reads these figures: the lowering
re-reads a streamed weight once per weight-stationary group of row tiles, the group sized by
the SBUF it has left.

    PYTHONPATH=python .venv/bin/python bench/llm_prefill_matmuls.py [--tokens 1024,2048,4096]
"""
from __future__ import annotations

import argparse
import math
import os
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

from trnsim.compiler import CompiledModel

HIDDEN, FFN, HEADS, KV_HEADS, HEAD_DIM = 8192, 28672, 64, 8, 128  # configs/models/llama-2-70b.json


def layer_matmuls(tp: int) -> dict[str, tuple[int, int]]:
    """(K, N) per rank as llm_layout.cpp shards them: heads padded up, KV heads replicated."""
    q = math.ceil(HEADS / tp)
    kv = KV_HEADS // tp if KV_HEADS % tp == 0 else 1
    ffn = math.ceil(FFN / tp)
    return {"qkv": (HIDDEN, (q + 2 * kv) * HEAD_DIM), "o": (q * HEAD_DIM, HIDDEN),
            "gate_up": (HIDDEN, 2 * ffn), "down": (ffn, HIDDEN)}


def time_matmul(chip: str, m: int, k: int, n: int) -> dict:
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                          [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [m, k]),
                           helper.make_tensor_value_info("w", TensorProto.BFLOAT16, [k, n])],
                          [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [m, n])])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mm.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
        c = CompiledModel(path, chip=chip, dtype="bf16", mode="timing", cores=1)
        c.run({"x": np.zeros((m, k), np.float32), "w": np.zeros((k, n), np.float32)})
        return c.report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", default="1024,2048,4096")
    a = ap.parse_args()
    for chip, tp in (("trn1", 32), ("inf2", 24)):
        for m in (int(t) for t in a.tokens.split(",")):
            total = 0.0
            for name, (k, n) in layer_matmuls(tp).items():
                r = time_matmul(chip, m, k, n)
                t, hbm = r["time_s"], r["hbm_bytes"]
                reads = (hbm - 2 * m * k - 2 * m * n) / (2 * k * n)
                total += t
                print(f"{chip} tp{tp} tokens {m:5d} {name:8s} [{m}x{k}]x[{k}x{n}] {t * 1e3:7.3f} ms "
                      f"{2 * m * k * n / t / 1e12:5.1f} TFLOP/s  HBM {hbm / 1e6:7.1f} MB {hbm / t / 1e9:4.0f} GB/s  "
                      f"weight read {reads:4.1f}x")
            print(f"{chip} tp{tp} tokens {m:5d} layer    {total * 1e3:7.3f} ms ({total / m * 1e6:.3f} us per token)")


if __name__ == "__main__":
    main()
