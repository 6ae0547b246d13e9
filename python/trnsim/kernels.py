"""Kernels on a simulated NeuronCore: the kernel library by name, a tile-level kernel builder
mirroring the C++ one (kernels/kernel_builder.h), and running built programs.

``kernel()`` gives the same numbers as ``trnsim kernel --json`` (one C++ code path): a dict with
``time_s``, ``tflops``, ``bandwidth_gbps``, ``hbm_bytes``, per-unit utilisation, the reference
check and, in functional mode, the outputs as numpy arrays. Shapes are keyword arguments named
as on the command line, with underscores (``head_dim=64``)::

    r = trnsim.kernel("softmax", chip="trn2", rows=512, cols=1024, dtype="bf16")
    r["time_s"], r["check"]["y"]["max_abs_error"], r["outputs"]["y"].shape

Writing a kernel::

    kb = trnsim.KernelBuilder("trn2")
    a = kb.hbm_input("a", [128, 512], "fp32")
    out = kb.hbm_output("out", [128, 512], "fp32")
    t = kb.sbuf_tile([128, 512], "fp32")
    kb.load(t, a[0:128, 0:512])
    kb.activation(t, t, "exp")
    kb.store(out[0:128, 0:512], t)
    res = trnsim.run(kb.build(), inputs={"a": np.ones((128, 512), np.float32)})

Bad input raises ``trnsim.ShapeError`` / ``trnsim.UnsupportedError`` (ValueError subclasses)
naming the parameter and its limit.
"""
from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Union

import numpy as np

from trnsim import _core
from trnsim.api_args import checked

__all__ = ["kernel", "kernel_list", "run", "KernelBuilder", "Program", "View", "Tile", "Tensor"]

_k = _core.kernels
KernelBuilder = _k.KernelBuilder
Program = _k.Program
View = _k.View
Tile = _k.Tile
Tensor = _k.Tensor


def _view_getitem(self: View, key: Any) -> View:
    """``t[0:128, 256:512]``: one slice (or index) per axis, partition axis first; missing
    trailing axes are whole. Steps are not supported (use an access pattern reshape)."""
    if not isinstance(key, tuple):
        key = (key,)
    shape = self.shape
    if len(key) > len(shape):
        raise IndexError(f"{len(key)} indices for a view of shape {shape}")
    ranges = []
    for axis, k in enumerate(key):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise IndexError("view slices take no step")
            b, e, _ = k.indices(shape[axis])
        else:
            b = int(k) + (shape[axis] if int(k) < 0 else 0)
            e = b + 1
        ranges.append((b, e))
    return self.slice(ranges)


View.__getitem__ = _view_getitem


def kernel_list() -> list[dict]:
    """The library: name, description, parameters (kind, default, limits) and dtypes of each."""
    return json.loads(_k.registry_json())


def _flat_inputs(inputs: Optional[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    return {n: np.ascontiguousarray(v, dtype=np.float32).ravel() for n, v in (inputs or {}).items()}


def _with_outputs(summary_json: str, outputs) -> dict:
    d = json.loads(summary_json)
    if outputs:
        d["outputs"] = {name: arr.reshape(shape) for name, shape, arr in outputs}
    return d


def _param(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, str):
        return v
    raise _core.ConfigError(f"kernel parameters are integers, booleans or strings, got {type(v).__name__}")


@checked
def kernel(name: str, chip: Union[str, "os.PathLike[str]"] = "trn2", timing_only: bool = False,
           trace: Union[None, str, "os.PathLike[str]"] = None, dtype: Optional[str] = None, *,
           functional: Optional[bool] = None, seed: int = 0,
           inputs: Optional[Mapping[str, Any]] = None, **shape: Any) -> dict:
    """Runs library kernel ``name`` on ``chip`` (preset or YAML path) and returns its summary.

    By default small shapes run functionally (seeded random inputs, or ``inputs`` given as
    arrays, checked against the kernel's double-precision reference) and large ones timing
    only; ``timing_only=True`` or ``functional=True`` force one. ``trace`` writes a Perfetto
    trace there. In functional mode the dict has ``outputs`` (numpy arrays) and ``check``.
    """
    if timing_only and functional:
        raise _core.ConfigError("trnsim.kernel: timing_only and functional exclude each other")
    mode = "timing" if timing_only else "functional" if functional else "auto"
    params = {k: _param(v) for k, v in shape.items()}
    chip_ref = os.fspath(chip)
    if isinstance(chip, os.PathLike) and "/" not in chip_ref:
        chip_ref = os.path.join(".", chip_ref)
    out_json, outputs = _k.run_kernel(name, chip_ref, params, dtype or "", mode,
                                      os.fspath(trace) if trace is not None else "", int(seed),
                                      _flat_inputs(inputs))
    return _with_outputs(out_json, outputs)


@checked
def run(program: Program, inputs: Optional[Mapping[str, Any]] = None, timing_only: bool = False,
        trace: Union[None, str, "os.PathLike[str]"] = None) -> dict:
    """Runs a program built with ``KernelBuilder`` on the chip it was built for; returns the
    summary dict with ``outputs`` (numpy arrays, functional mode)."""
    out_json, outputs = _k.run_program(program, _flat_inputs(inputs), bool(timing_only),
                                       os.fspath(trace) if trace is not None else "")
    return _with_outputs(out_json, outputs)
