"""Model conversion: quantised weights (fp16, bf16, fp8, int8, mxfp8, mxfp4) and/or 4:16
structured sparsity, compiled for a chip and saved as a program that ``trnsim run FILE`` and
``trnsim.load_compiled`` run.

    r = trnsim.convert("model.onnx", "model.tpg", quantize="int8", chip="trn2")
    r["weight_size_ratio"], r["min_cosine"], r["time_saved_s"]

The report is measured, not estimated: the fp32 model and the converted one are compiled for
the same chip and dtype policy and run functionally on the calibration inputs (an .npz path or
a dict of arrays) or, without them, on seeded random inputs (the report says which). See
docs/convert.md.
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Mapping, Optional, Union

import numpy as np

from trnsim import _core

__all__ = ["convert"]


def convert(model: Union[str, os.PathLike], output: Union[str, os.PathLike, None] = None, *, quantize: Optional[str] = None,
            chip: str = "trn2", dtype: str = "fp32", calibrate: Union[str, os.PathLike, Mapping[str, Any], None] = None,
            per_channel: bool = True, activations: Union[bool, str] = False, sparsity: Optional[str] = None, batch: int = 1,
            dims: Optional[Mapping[str, int]] = None, seed: int = 0) -> dict:
    """Converts an ONNX file; writes the program to ``output`` (when given); returns the report
    (the JSON of ``trnsim convert --json``). ``activations``: True quantises MatMul inputs for
    int8/fp8 weights (calibrated ranges); "mxfp8" or "mxfp4" with MX weights quantises them to MX
    on chip and runs TensorE's MX matmul (Trainium3)."""
    with tempfile.TemporaryDirectory() as tmp:
        cal = ""
        if isinstance(calibrate, Mapping):
            cal = os.path.join(tmp, "calibrate.npz")
            np.savez(cal, **{k: np.asarray(v) for k, v in calibrate.items()})
        elif calibrate is not None:
            cal = os.fspath(calibrate)
        text = _core.convert.convert(os.fspath(model), os.fspath(output) if output else "", chip, dtype, quantize or "",
                                     cal, per_channel, "on" if activations is True else (activations or ""), sparsity or "", batch, dict(dims or {}), seed)
    report = json.loads(text)
    if isinstance(calibrate, Mapping):
        report["inputs"] = "calibration arrays passed as a dict"
    return report
