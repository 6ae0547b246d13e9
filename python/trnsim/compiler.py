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
from trnsim.api_args import checked

__all__ = ["compile_onnx", "CompiledModel", "supported_ops", "load_compiled"]

_c = _core.compiler

_NP_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "f64": np.float64, "i64": np.int64,
             "i32": np.int32, "i16": np.int16, "i8": np.int8, "u64": np.uint64, "u32": np.uint32,
             "u16": np.uint16, "u8": np.uint8, "bool": np.bool_}
_MODES = ("functional", "timing")
try:  # the narrow float types (fp8 e4m3fn / e5m2, fp4 e2m1); ml_dtypes comes with onnx
    import ml_dtypes as _mld
    _NP_TYPES.update({"f8e4m3fn": _mld.float8_e4m3fn, "f8e5m2": _mld.float8_e5m2, "f4e2m1": _mld.float4_e2m1fn,
                      "i4": _mld.int4, "u4": _mld.uint4, "i2": _mld.int2, "u2": _mld.uint2})
except ImportError:  # pragma: no cover
    pass

# Value specialisation: a small graph input that reaches a shape operand (Reshape's shape,
# Slice's starts/ends/axes/steps, Reduce*/Squeeze/Unsqueeze axes, Pad's pads, Expand's shape,
# ConstantOfShape, Range, Resize's scales, ...) is bound to its run-time value as a constant,
# and the program is compiled (and cached) per (input shapes, values of those inputs).
_SPEC_MAX_ELEMS = 64
_SPEC_ELEM_TYPES = {6: np.int32, 7: np.int64, 1: np.float32, 11: np.float64, 9: np.bool_}  # ONNX type -> numpy (bool: If/Loop conditions, NonZero masks)


def _model_source(model: Any):
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), False
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model).encode(), True
    if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        return model.SerializeToString(), False
    raise _core.ConfigError(f"model must be a path, the serialized ONNX bytes or an onnx.ModelProto, not {type(model).__name__}")


class CompiledModel:
    """A model compiled for one chip and dtype policy. See the module docstring."""

    def __init__(self, model: Any, chip: str = "trn2", dtype: str = "fp32", mode: str = "functional",
                 batch: Optional[int] = None, dims: Optional[Mapping[str, int]] = None, cores: int = 0, lnc: int = 0,
                 overlap: bool = True):
        if mode not in _MODES:
            raise _core.UnsupportedError(f"unsupported: mode '{mode}' (expected functional or timing)")
        self._src, self._is_path = _model_source(model)
        self.chip, self.dtype, self.mode, self.batch = chip, dtype, mode, batch
        self.cores, self.lnc = int(cores), int(lnc)  # logical NeuronCores, and their size (0: the chip's)
        self.overlap = bool(overlap)  # False: nodes one after another (no cross-node dependencies)
        self._dims = dict(dims or {})
        self._cache: Dict[tuple, Any] = {}
        self._spec: List[str] = []  # graph inputs specialised on their values
        self._proto = None
        self._all_inputs: Optional[List[str]] = None
        try:
            self._c = self._compile({})[0]
        except _core.UnsupportedError:
            if not self._spec:  # _compile noted the inputs to specialise on, if any
                raise
            self._c = None  # compiled at the first run, once the values are known
        except _core.ShapeError:
            # Free input axes default to 1 (or batch / dims) until a run brings real shapes; a
            # model that cannot take 1 there (a 2 x 2 pooling window over a 1 x 1 image) is
            # compiled at its first run instead. A model without free axes has no such excuse.
            if not self._has_free_axes():
                raise
            self._c = None
        self._last = self._c
        self._last_spec: Dict[str, Any] = {}
        self._report: Dict[str, Any] = {"compile_time_s": self._c.compile_time_s if self._c else 0.0}
        self._report_src: Optional[tuple] = None

    @classmethod
    def _from_compiled(cls, c, mode: str = "functional") -> "CompiledModel":
        """A model around a program loaded from a file (load_compiled): no ONNX source, so it
        runs only with the input shapes it was compiled for."""
        if mode not in _MODES:
            raise _core.UnsupportedError(f"unsupported: mode '{mode}' (expected functional or timing)")
        self = cls.__new__(cls)
        self._src, self._is_path, self._proto, self._all_inputs = None, False, None, None
        self.chip, self.dtype, self.mode, self.batch = c.chip, c.dtype, mode, None
        self._dims, self._cache, self._spec = {}, {}, []
        self.overlap = True
        self._c = self._last = c
        self._last_spec = {}
        self._report = {"compile_time_s": c.compile_time_s}
        self._report_src = None
        return self

    @property
    def report(self) -> Dict[str, Any]:
        """The last run's report (latency, per-op breakdown, engines, HBM), as `trnsim run
        --json` prints it. Built from the run's JSON when first read: parsing it on every run
        cost a model's forward more than some of its kernels."""
        if self._report_src is not None:
            c, spec_vals = self._report_src
            self._report = json.loads(c.report_json())
            if spec_vals:
                self._report["specialized_inputs"] = spec_vals
            self._report_src = None
        return self._report

    def under_load(self, in_flight: int) -> Dict[str, Any]:
        """The last timing run under a closed-loop load, as `trnsim run --in-flight N` reports it
        (its JSON ``load`` object): ``in_flight`` requests kept in flight, round-robin over the
        model copies that fit on the chip (one per ``cores`` logical cores); requests on one copy
        run one after another. p50/p99/mean latency in s and inferences per second."""
        if isinstance(in_flight, bool) or not isinstance(in_flight, (int, np.integer)):
            raise _core.ConfigError(f"in_flight {in_flight!r}: expected a positive integer count of requests")
        rep = self.report
        if "time_s" not in rep:
            raise _core.ConfigError("under_load needs a run first: its execution time is the simulated run's")
        if self._src is None:
            raise _core.UnsupportedError("unsupported: under_load of a loaded program (its cores per copy are not recorded)")
        c = self._last or self._c
        batch, host_s = 1, 0.0
        if c is not None and c.input_names:
            shape = c.shapes[c.input_names[0]]
            batch = shape[0] if shape and shape[0] > 0 else 1
            host_s = c.host_io_s()  # the inputs in and outputs out over the host link, as `run` counts them
        return json.loads(_core.load.in_flight(self.chip, self.cores, self.lnc, rep["time_s"], batch, int(in_flight), host_s))

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the program of the last run (the first compile before any run) to ``path``;
        trnsim.load_compiled(path) and `trnsim run path` read it back."""
        c = self._last or self._c
        if c is None:
            raise _core.ShapeError(f"nothing compiled yet: the program is specialised on the values of inputs {self._spec}; run it first")
        c.save(os.fspath(path))

    def _model_proto(self):
        if self._proto is None:
            import onnx  # only needed for value specialisation
            self._proto = onnx.load(self._src.decode()) if self._is_path else onnx.load_from_string(self._src)
        return self._proto

    def _graph_inputs(self):
        """The model's graph inputs that are not initializers (onnx ValueInfoProtos)."""
        g = self._model_proto().graph
        inits = {t.name for t in g.initializer}
        return [i for i in g.input if i.name not in inits]

    def _input_types(self) -> Dict[str, int]:
        """ONNX element type of each graph input."""
        return {i.name: i.type.tensor_type.elem_type for i in self._graph_inputs()}

    def _has_free_axes(self) -> bool:
        """Whether any graph input has a symbolic axis that neither batch nor dims sets."""
        try:
            inputs = self._graph_inputs()
        except Exception:  # onnx missing or the model does not parse: keep the original error
            return False
        for i in inputs:
            for k, d in enumerate(i.type.tensor_type.shape.dim):
                if d.HasField("dim_value"):
                    continue
                if f"{i.name}[{k}]" in self._dims or d.dim_param in self._dims or (k == 0 and self.batch):
                    continue
                return True
        return False

    def _note_specialisation(self, e: Exception) -> bool:
        """Adds the small integer graph inputs among the tensors a ConstantRequiredError names
        to the specialised set; False when it names none (or is another refusal)."""
        if not isinstance(e, _core.ConstantRequiredError):
            return False
        try:
            inputs = self._graph_inputs()
        except Exception:  # onnx missing or the model does not parse: keep the original error
            return False
        cands = {i.name for i in inputs if i.type.tensor_type.elem_type in _SPEC_ELEM_TYPES and i.name not in self._spec}
        names = list(dict.fromkeys(t for t in e.tensors if t in cands))
        if not names:
            return False
        if self._all_inputs is None:
            self._all_inputs = [i.name for i in inputs]
        self._spec.extend(names)
        return True

    def _compile(self, shapes: Mapping[str, Sequence[int]], values: Optional[Mapping[str, np.ndarray]] = None):
        values = values or {}
        while True:
            vals = {n: values[n] for n in self._spec if n in values}
            key = (tuple(sorted((k, tuple(v)) for k, v in shapes.items())),
                   tuple(sorted((k, str(v.dtype), v.shape, v.tobytes()) for k, v in vals.items())))
            if key in self._cache:
                return self._cache[key]
            missing = [n for n in self._spec if n not in values]
            if missing:
                raise _core.ShapeError(f"inputs {missing} are missing: the program is specialised on their values")
            if self._src is None:
                want = {n: tuple(v) for n, v in self._c.shapes.items() if n in self._c.input_names}
                raise _core.ShapeError(f"a loaded program runs only with the input shapes it was compiled for: {want}")
            src, is_path = self._src, self._is_path
            if vals:
                import onnx
                from onnx import numpy_helper
                p = onnx.ModelProto()
                p.CopyFrom(self._model_proto())
                types = self._input_types()
                for n, v in vals.items():
                    dt = _SPEC_ELEM_TYPES[types[n]]
                    p.graph.initializer.append(numpy_helper.from_array(np.asarray(v, dtype=dt), n))
                src, is_path = p.SerializeToString(), False
            try:
                c = _c.compile_onnx(src, is_path, self.chip, self.dtype, self.batch, self._dims,
                                    {k: list(v) for k, v in shapes.items() if k not in vals}, True,
                                    self.cores, self.lnc, self.mode == "timing", self.overlap)
            except _core.UnsupportedError as e:
                if self._note_specialisation(e) and all(n in values for n in self._spec):
                    continue  # another input to specialise on: compile again with it bound
                raise
            self._cache[key] = (c, {n: np.asarray(v).tolist() for n, v in vals.items()})
            return self._cache[key]

    @property
    def input_names(self) -> List[str]:
        if self._all_inputs is not None:
            return list(self._all_inputs)
        if self._c is None:  # compiled at the first run: the model's own list
            return [i.name for i in self._graph_inputs()]
        return list(self._c.input_names)

    @property
    def output_names(self) -> List[str]:
        c = self._c or self._last
        if c is None:
            raise _core.ShapeError("the output names are known after the first run")
        return list(c.output_names)

    @property
    def input_shapes(self) -> Dict[str, tuple]:
        c = self._c or self._last
        if c is None:
            why = (f"the program is specialised on the values of inputs {self._spec}" if self._spec
                   else "the model's free input axes are bound by the first run's inputs")
            raise _core.ShapeError(f"the input shapes are known after the first run: {why}")
        s = c.shapes
        return {n: tuple(s[n]) for n in c.input_names}

    @property
    def specialized_inputs(self) -> List[str]:
        """Graph inputs whose values the program is specialised on (compiled as constants)."""
        return list(self._spec)

    @property
    def output_shapes(self) -> Dict[str, tuple]:
        if self._last is None:
            raise _core.ShapeError("the output shapes are known after the first run")
        s = self._last.shapes
        return {n: tuple(s[n]) for n in self._last.output_names}

    def dump_ir(self) -> str:
        """The IR after every compiler pass, each under its pass name."""
        if self._last is None:
            raise _core.ShapeError("nothing compiled yet: the program is specialised on the values of inputs "
                                   f"{self._spec}; run it first")
        ir = self._last.dump_ir()
        if self._last_spec:
            head = "".join(f"specialized input {n} = {v}\n" for n, v in self._last_spec.items())
            ir = head + ir
        return ir

    @checked
    def run(self, inputs: Union[Mapping[str, Any], Sequence[Any]], mode: Optional[str] = None, *,
            clock_scale: float = 1.0, power_cap: Optional[float] = None, power_cap_scope: str = "chip",
            system: Optional[str] = None) -> Dict[str, np.ndarray]:
        """One forward pass. Functional mode returns {output name: array}; timing mode returns {}.
        Either way ``self.report`` describes the run. ``clock_scale`` runs the engine clocks at that
        DVFS point (as ``trnsim run --clock-scale``); ``power_cap`` (W) throttles them until the
        run's average power fits it, per chip or, with ``power_cap_scope`` "instance" or "rack",
        per instance or rack of ``system`` (its hosts' and rack's power off first): the report
        then has ``power_cap``."""
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
            # A saved program specialised on an input's values (a Reshape's shape, Reduce axes)
            # holds them as constants: it takes that input no more (node tests after save/load).
            raise _core.ShapeError(f"unknown inputs {sorted(unknown)}; the model takes {names} (an input whose values "
                                   "the program was specialised on is a constant in it: leave it out)")
        arrays = {n: np.asarray(inputs[n]) for n in names if n in inputs}
        if mode == "functional":
            missing = [n for n in names if n not in arrays]
            if missing:
                raise _core.ShapeError(f"inputs {missing} are missing")
        shapes = {n: list(a.shape) for n, a in arrays.items()}
        if self._spec:
            types = self._input_types()
            for n in self._spec:
                want_int, want_bool = types.get(n) in (6, 7), types.get(n) == 9
                if n in arrays and ((arrays[n].dtype.kind == "b") != want_bool
                                    or (not want_bool and ((arrays[n].dtype.kind in "iu") != want_int or arrays[n].dtype.kind not in "iuf"))
                                    or arrays[n].size > _SPEC_MAX_ELEMS):
                    raise _core.UnsupportedError(f"unsupported: input '{n}' reaches a shape operand; it must be a small "
                                                 f"integer or float array (at most {_SPEC_MAX_ELEMS} elements)")
            c, spec_vals = self._compile(shapes, arrays)
        elif self._c is not None and all(tuple(v) == tuple(self._c.shapes[n]) for n, v in shapes.items()):
            c, spec_vals = self._c, {}
        else:
            c, spec_vals = self._compile(shapes, arrays)
        self._last, self._last_spec = c, spec_vals
        flat = {}
        if mode == "functional":
            for n, a in arrays.items():
                if n in spec_vals:
                    continue
                if a.dtype.kind in "iub" and a.size and np.abs(a.astype(np.int64)).max() > 2**24:
                    raise _core.UnsupportedError(f"unsupported: input '{n}' has integers beyond 2**24 (held as fp32 on the chip)")
                flat[n] = np.ascontiguousarray(a, dtype=np.float32).reshape(-1)
        raw = c.run(flat, mode == "timing", float(clock_scale), float(power_cap or 0), power_cap_scope, system or "")
        self._report_src = (c, spec_vals)
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


def load_compiled(path: Union[str, "os.PathLike[str]"], chip: Optional[str] = None, mode: str = "functional") -> CompiledModel:
    """Loads a program saved by CompiledModel.save or `trnsim compile -o`, for the chip it was
    compiled for (``chip``, if given, must be that chip with the same spec)."""
    return CompiledModel._from_compiled(_c.load_compiled(os.fspath(path), chip), mode)


def supported_ops() -> List[str]:
    """The ONNX ops (default domain) that the importer accepts; each folds or lowers to kernels,
    with the run-time limits listed in docs/compiler.md."""
    return list(_c.supported_ops())


@checked
def compile_onnx(model: Any, chip: str = "trn2", dtype: str = "fp32", mode: str = "functional",
                 batch: Optional[int] = None, dims: Optional[Mapping[str, int]] = None, cores: int = 0,
                 lnc: int = 0, overlap: bool = True) -> CompiledModel:
    """Imports and compiles an ONNX model (path, serialized bytes or onnx.ModelProto) for a chip
    preset (trn1, inf2, trn2, trn3) or chip YAML file. dtype: fp32 | bf16 (bf16 matmul inputs,
    fp32 accumulation) | fp8. batch: size of symbolic leading axes; dims: other symbolic axes.
    cores: logical NeuronCores to split each node across (0: all); lnc: physical cores per
    logical core (0: the chip's default, 2 on trn2/trn3), as `trnsim run --cores --lnc`.
    mode="timing" compiles without weight values (shapes and types only). overlap=False runs the
    nodes one after another (a barrier between nodes) instead of with per-instruction
    dependencies (runtime/dependency_link.h); the values are the same."""
    return CompiledModel(model, chip=chip, dtype=dtype, mode=mode, batch=batch, dims=dims, cores=cores, lnc=lnc,
                         overlap=overlap)
