"""Tensor-parallel execution of an ONNX model across the chips of a simulated system.

    outs, report = trnsim.run_tensor_parallel("llama.onnx", system="trn2.48xlarge", tp=4,
                                              inputs={"input_ids": ids})
    report["time_s"], report["communication_share"], report["all_reduces"]

The compiler splits the model Megatron-style (column-parallel Q/K/V and MLP up/gate MatMuls,
row-parallel attention output and MLP down MatMuls, one all-reduce after each row-parallel
MatMul; a vocabulary-parallel LM head whose logits are all-gathered); every rank's shard runs
on its own simulated chip and the all-reduces and all-gathers run on the system's simulated
fabric, in the dtype the activations are held in (fp32 unless the model's tensors are
fp16/bf16). See docs/tensor-parallel.md. Errors: trnsim.ShapeError (a split
dimension such as the heads does not divide by tp), trnsim.UnsupportedError (nothing to
split), trnsim.ConfigError (tp larger than the system).
"""
from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from trnsim import _core
from trnsim.compiler import _model_source

__all__ = ["run_tensor_parallel"]

_MODES = ("functional", "timing")


def run_tensor_parallel(model: Any, system: str = "trn2.48xlarge", tp: int = 16, dtype: str = "fp32",
                        mode: str = "functional", inputs: Optional[Mapping[str, Any]] = None,
                        batch: Optional[int] = None, dims: Optional[Mapping[str, int]] = None,
                        algorithm: str = "auto", seed: int = 0, lnc: int = 0) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
    """Runs ``model`` (a path, ONNX bytes or an onnx.ModelProto) split across ``tp`` logical
    NeuronCores of ``system`` (one rank per logical core of ``lnc`` physical cores; 0: the
    chip's default, 2 on trn2/trn3). Returns (outputs, report): outputs maps each graph output to a float32 numpy
    array (rank 0's; every rank holds the same after the last all-reduce; empty in timing
    mode), report is the dict `trnsim run --tp N --json` prints (time_s, compute_time_s,
    communication_time_s, exposed_communication_time_s, communication_share, all_reduces,
    all_gathers (each with op, dtype, bytes, start_s, time_s, algorithm), vocab_parallel, ops).
    ``inputs`` maps input names to arrays (integers as their values); in functional mode
    without inputs, seeded random inputs are used (``seed``)."""
    if mode not in _MODES:
        raise _core.UnsupportedError(f"unsupported: mode '{mode}' (expected functional or timing)")
    src, is_path = _model_source(model)
    flat, shapes = {}, {}
    for name, value in (inputs or {}).items():
        a = np.asarray(value)
        shapes[name] = [int(d) for d in a.shape]
        flat[name] = np.ascontiguousarray(a, dtype=np.float32).reshape(-1)
    outs, report = _core.tensor_parallel.run(src, is_path, system, int(tp), dtype, mode == "timing", flat, shapes,
                                             batch, dict(dims or {}), algorithm, int(seed), int(lnc))
    return {n: np.asarray(v, dtype=np.float32).reshape(shape) for n, (shape, v) in outs.items()}, json.loads(report)
