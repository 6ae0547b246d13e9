"""ONNX models on a simulated chip: import, compile (named passes, lowering to kernels), run.

    m = trnsim.compile_onnx("model.onnx", chip="trn2", dtype="bf16")
    out = m.run({"input_ids": ids})          # dict name -> numpy array
    m.report["time_s"], m.report["ops"]       # latency and per-op breakdown of that run
    print(m.dump_ir())                        # the IR after every compiler pass

The compiler is C++ (trnsim._core.compiler); this module converts arrays and keeps one
compiled program per set of input shapes: symbolic axes are bound at compile time (``batch``
for leading symbolic axes, 1 for others), and a ``run`` with other shapes compiles again for
those shapes. Every tensor is computed as fp32 on the chip (integers exactly up to 2**24).
Errors: trnsim.UnsupportedError ("unsupported: op X (attribute Y) at node 'n'"),
trnsim.ShapeError, trnsim.TrnsimError.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from trnsim import _core

__all__ = ["compile_onnx", "CompiledModel", "supported_ops"]

_c = _core.compiler

_NP_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "f64": np.float64, "i64": np.int64,
             "i32": np.int32, "i16": np.int16, "i8": np.int8, "u64": np.uint64, "u32": np.uint32,
             "u16": np.uint16, "u8": np.uint8, "bool": np.bool_}
_MODES = ("functional", "timing")


def _model_source(model: Any):
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), False
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model).encode(), True
    if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        return model.SerializeToString(), False
    raise TypeError(f"model must be a path, the serialized ONNX bytes or an onnx.ModelProto, not {type(model).__name__}")


class CompiledModel:
    """A model compiled for one chip and dtype policy. See the module docstring."""

    def __init__(self, model: Any, chip: str = "trn2", dtype: str = "fp32", mode: str = "functional",
                 batch: Optional[int] = None, dims: Optional[Mapping[str, int]] = None):
        if mode not in _MODES:
            raise _core.UnsupportedError(f"unsupported: mode '{mode}' (expected functional or timing)")
        self._src, self._is_path = _model_source(model)
        self.chip, self.dtype, self.mode, self.batch = chip, dtype, mode, batch
        self._dims = dict(dims or {})
        self._cache: Dict[tuple, Any] = {}
        self._c = self._compile({})
        self._last = self._c
        self.report: Dict[str, Any] = {"compile_time_s": self._c.compile_time_s}

    def _compile(self, shapes: Mapping[str, Sequence[int]]):
        key = tuple(sorted((k, tuple(v)) for k, v in shapes.items()))
        if key not in self._cache:
            self._cache[key] = _c.compile_onnx(self._src, self._is_path, self.chip, self.dtype, self.batch, self._dims,
                                               {k: list(v) for k, v in shapes.items()}, True)
        return self._cache[key]

    @property
    def input_names(self) -> List[str]:
        return list(self._c.input_names)

    @property
    def output_names(self) -> List[str]:
        return list(self._c.output_names)

    @property
    def input_shapes(self) -> Dict[str, tuple]:
        s = self._c.shapes
        return {n: tuple(s[n]) for n in self._c.input_names}

    @property
    def output_shapes(self) -> Dict[str, tuple]:
        s = self._last.shapes
        return {n: tuple(s[n]) for n in self._last.output_names}

    def dump_ir(self) -> str:
        """The IR after every compiler pass, each under its pass name."""
        return self._last.dump_ir()

    def run(self, inputs: Union[Mapping[str, Any], Sequence[Any]], mode: Optional[str] = None) -> Dict[str, np.ndarray]:
        """One forward pass. Functional mode returns {output name: array}; timing mode returns {}.
        Either way ``self.report`` describes the run."""
        mode = mode or self.mode
        if mode not in _MODES:
            raise _core.UnsupportedError(f"unsupported: mode '{mode}' (expected functional or timing)")
        names = self.input_names
        if not isinstance(inputs, Mapping):
            inputs = list(inputs)
            if len(inputs) != len(names):
                raise _core.ShapeError(f"{len(inputs)} inputs given, the model takes {len(names)}: {names}")
            inputs = dict(zip(names, inputs))
        unknown = set(inputs) - set(names)
        if unknown:
            raise _core.ShapeError(f"unknown inputs {sorted(unknown)}; the model takes {names}")
        arrays = {n: np.asarray(inputs[n]) for n in names if n in inputs}
        if mode == "functional":
            missing = [n for n in names if n not in arrays]
            if missing:
                raise _core.ShapeError(f"inputs {missing} are missing")
        shapes = {n: list(a.shape) for n, a in arrays.items()}
        c = self._c if all(tuple(v) == tuple(self._c.shapes[n]) for n, v in shapes.items()) else self._compile(shapes)
        self._last = c
        flat = {}
        if mode == "functional":
            for n, a in arrays.items():
                if a.dtype.kind in "iub" and a.size and np.abs(a.astype(np.int64)).max() > 2**24:
                    raise _core.UnsupportedError(f"unsupported: input '{n}' has integers beyond 2**24 (held as fp32 on the chip)")
                flat[n] = np.ascontiguousarray(a, dtype=np.float32).reshape(-1)
        raw = c.run(flat, mode == "timing")
        self.report = json.loads(c.report_json())
        types = c.output_types
        out = {}
        for n in c.output_names:
            if n not in raw:
                continue
            shape, data = raw[n]
            t = _NP_TYPES.get(types[n], np.float32)
            v = np.asarray(data).reshape(tuple(shape))
            if np.issubdtype(t, np.integer):
                v = np.rint(v).astype(t)
            elif t is np.bool_:
                v = v != 0
            else:
                v = v.astype(t)
            out[n] = v
        return out


def supported_ops() -> List[str]:
    """The ONNX ops (default domain) that the importer accepts; each folds or lowers to kernels,
    with the run-time limits listed in docs/compiler.md."""
    return list(_c.supported_ops())


def compile_onnx(model: Any, chip: str = "trn2", dtype: str = "fp32", mode: str = "functional",
                 batch: Optional[int] = None, dims: Optional[Mapping[str, int]] = None) -> CompiledModel:
    """Imports and compiles an ONNX model (path, serialized bytes or onnx.ModelProto) for a chip
    preset (trn1, inf2, trn2, trn3) or chip YAML file. dtype: fp32 | bf16 (bf16 matmul inputs,
    fp32 accumulation) | fp8. batch: size of symbolic leading axes; dims: other symbolic axes."""
    return CompiledModel(model, chip=chip, dtype=dtype, mode=mode, batch=batch, dims=dims)
