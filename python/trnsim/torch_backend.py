"""PyTorch front end: ``torch.compile(model, backend="trnsim")`` and ``trnsim.trace``.

Both paths export the PyTorch graph to ONNX in memory (the TorchScript exporter, which handles
the FX graphs that TorchDynamo hands a backend) and compile it with ``trnsim.compile_onnx``, so a
PyTorch model and an ONNX file meet the same importer, passes and simulator. Compiled programs
are cached by input shapes and dtypes; a new shape compiles again.

Options (``torch.compile(..., options={...})`` or keyword arguments of ``trace``):
    chip   -- chip preset name ("trn1", "trn2", "trn3", ...), default "trn2"
    dtype  -- dtype policy: "fp32", "bf16" (bf16 with fp32 accumulation) or "fp8" (fp8 weights)
    mode   -- "functional" (numerics and timing) or "timing" (timing only; see below)
    batch  -- batch size override handed to compile_onnx, default None (the model's)
    opset  -- ONNX opset of the export, default 17

In timing mode the simulated chip computes no values, so the tensors returned to PyTorch come
from eager PyTorch on the CPU; the report holds the simulated time. This keeps a program that
was switched to ``backend="trnsim"`` runnable in both modes.

This module imports torch; ``import trnsim`` does not (it registers the backend only once
``torch._dynamo`` is imported, see trnsim/__init__.py).
"""
from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

try:
    import torch
except ImportError as _e:  # pragma: no cover - exercised only where torch is absent
    raise ImportError(
        "trnsim.torch_backend needs PyTorch: pip install -r requirements.txt (torch==2.13.0)"
    ) from _e

import trnsim

__all__ = ["trnsim_backend", "trace", "TracedModule", "export_onnx", "last_report", "register"]

_DTYPE_POLICIES = ("fp32", "bf16", "fp8")
_MODES = ("functional", "timing")
_DEFAULT_OPSET = 17


@dataclass(frozen=True)
class Options:
    chip: str = "trn2"
    dtype: str = "fp32"
    mode: str = "functional"
    batch: int | None = None
    opset: int = _DEFAULT_OPSET

    @staticmethod
    def from_dict(options: dict[str, Any] | None) -> "Options":
        options = dict(options or {})
        unknown = sorted(set(options) - {"chip", "dtype", "mode", "batch", "opset"})
        if unknown:
            raise ValueError(f"trnsim backend: unknown option(s) {unknown}; "
                             "expected chip, dtype, mode, batch, opset")
        opts = Options(**options)
        if opts.dtype not in _DTYPE_POLICIES:
            raise ValueError(f"trnsim backend: dtype={opts.dtype!r}; expected one of {_DTYPE_POLICIES}")
        if opts.mode not in _MODES:
            raise ValueError(f"trnsim backend: mode={opts.mode!r}; expected one of {_MODES}")
        return opts


def _compile_onnx() -> Callable[..., Any]:
    fn = getattr(trnsim, "compile_onnx", None)
    if fn is None:
        raise trnsim.TrnsimError("this trnsim build has no compile_onnx (the graph compiler is "
                                 "not built into trnsim._core); rebuild the extension")
    return fn


# ------------------------------------------------------------------------------------------
# torch <-> numpy


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        import ml_dtypes
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _to_torch(a: np.ndarray, like: torch.Tensor | None) -> torch.Tensor:
    a = np.asarray(a)
    if a.dtype.name == "bfloat16":  # ml_dtypes: torch cannot wrap it directly
        a = a.astype(np.float32)
    out = torch.from_numpy(np.ascontiguousarray(a))
    if like is not None:
        if out.dtype != like.dtype:
            out = out.to(like.dtype)
        if tuple(out.shape) != tuple(like.shape):
            raise trnsim.ShapeError(f"trnsim backend: the simulated output has shape "
                                    f"{tuple(out.shape)}, PyTorch's has {tuple(like.shape)}")
    return out


# ------------------------------------------------------------------------------------------
# ONNX export


def export_onnx(module: torch.nn.Module, example_inputs: Sequence[torch.Tensor],
                opset: int = _DEFAULT_OPSET) -> tuple[bytes, list[str]]:
    """Export ``module`` called on ``example_inputs`` to serialized ONNX; returns (bytes,
    input names). Parameters and buffers become initializers (constants)."""
    names = [f"input_{i}" for i in range(len(example_inputs))]
    buf = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the legacy-exporter deprecation and tracer notes
        try:
            torch.onnx.export(module, tuple(example_inputs), buf, dynamo=False,
                              opset_version=opset, input_names=names,
                              do_constant_folding=True)
        except Exception as e:  # the exporter's own errors name the aten op it lacks
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise trnsim.UnsupportedError(
                f"unsupported: the PyTorch graph could not be exported to ONNX "
                f"(opset {opset}): {msg}") from e
    return buf.getvalue(), names


def _structure(outputs: Any) -> tuple[list[torch.Tensor], Callable[[list[Any]], Any]]:
    """Flatten a module's outputs to a list of tensors, plus the function that rebuilds the
    original structure (tensor, tuple, list, dict, nested) from a list of leaves."""
    from torch.utils import _pytree as pytree
    leaves, spec = pytree.tree_flatten(outputs)
    for leaf in leaves:
        if not isinstance(leaf, torch.Tensor):
            raise trnsim.UnsupportedError(
                f"unsupported: model output of type {type(leaf).__name__} (trnsim returns tensors)")
    return leaves, lambda xs: pytree.tree_unflatten(list(xs), spec)


class _Program:
    """One compiled ONNX program for one set of input shapes."""

    def __init__(self, onnx_bytes: bytes, input_names: list[str], opts: Options,
                 reference_outputs: list[torch.Tensor]):
        self.onnx_bytes = onnx_bytes
        self.input_names = input_names
        self.opts = opts
        self.reference_outputs = reference_outputs
        self.compiled = _compile_onnx()(onnx_bytes, chip=opts.chip, dtype=opts.dtype,
                                        mode=opts.mode, batch=opts.batch)
        if len(self.compiled.output_names) != len(reference_outputs):
            raise trnsim.TrnsimError(
                f"trnsim backend: the compiled program has {len(self.compiled.output_names)} "
                f"outputs, the PyTorch graph {len(reference_outputs)}")

    @property
    def report(self) -> dict:
        return self.compiled.report

    def run(self, tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        feeds = {n: _to_numpy(t) for n, t in zip(self.input_names, tensors)}
        result = self.compiled.run(feeds)
        outs = [result[n] for n in self.compiled.output_names]
        return [_to_torch(a, ref) for a, ref in zip(outs, self.reference_outputs)]


def _key(args: Sequence[Any]) -> tuple:
    return tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else ("const", int(a))
                 for a in args)


_LAST_REPORT: dict | None = None


def last_report() -> dict | None:
    """The report of the program that ran last through ``backend="trnsim"`` (None before)."""
    return _LAST_REPORT


# ------------------------------------------------------------------------------------------
# torch.compile backend


class _BoundGraph(torch.nn.Module):
    """A Dynamo graph with its lifted parameters/buffers bound as buffers (so the exporter makes
    them ONNX initializers) and its integer arguments fixed: what remains are the user inputs."""

    def __init__(self, gm: torch.fx.GraphModule, statics: dict[int, torch.Tensor],
                 consts: dict[int, int], n_args: int):
        super().__init__()
        self.gm = gm
        self.consts = dict(consts)
        self.n_args = n_args
        for i, t in statics.items():
            self.register_buffer(f"static_{i}", t.detach(), persistent=False)

    def forward(self, *dynamic):
        it = iter(dynamic)
        args = []
        for i in range(self.n_args):
            if i in self.consts:
                args.append(self.consts[i])
            elif f"static_{i}" in self._buffers:
                args.append(self._buffers[f"static_{i}"])
            else:
                args.append(next(it))
        return self.gm(*args)


def _static_indices(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> set[int]:
    """Which graph inputs are the model's parameters or buffers: Dynamo lifts them to inputs;
    trnsim keeps them as constants (weights, with the dtype policy's weight format)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    static = set()
    for i, (node, ex) in enumerate(zip(placeholders, example_inputs)):
        grapharg = node.meta.get("grapharg")
        source = grapharg.source.name if grapharg is not None and grapharg.source is not None else ""
        if isinstance(ex, torch.nn.Parameter) or "_parameters[" in source or "_buffers[" in source:
            static.add(i)
    return static


class _CompiledGraph:
    """What the backend hands back to Dynamo: runs the graph on the simulated chip."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], opts: Options):
        self.gm = gm
        self.opts = opts
        self.static = _static_indices(gm, example_inputs)
        self.static_values = {i: example_inputs[i] for i in self.static}
        self.cache: dict[tuple, tuple[_Program, Callable]] = {}

    def _compile(self, args: Sequence[Any]) -> tuple[_Program, Callable]:
        consts = {i: int(a) for i, a in enumerate(args) if not isinstance(a, torch.Tensor)}
        bound = _BoundGraph(self.gm, {i: args[i] for i in self.static}, consts, len(args)).eval()
        dynamic = [a for i, a in enumerate(args) if i not in self.static and i not in consts]
        with torch.no_grad():
            reference = bound(*dynamic)
        leaves, rebuild = _structure(reference)
        onnx_bytes, names = export_onnx(bound, dynamic, self.opts.opset)
        return _Program(onnx_bytes, names, self.opts, leaves), rebuild

    def __call__(self, *args):
        global _LAST_REPORT
        key = tuple(k for i, k in enumerate(_key(args)) if i not in self.static)
        if key not in self.cache:
            self.cache[key] = self._compile(args)
        program, rebuild = self.cache[key]
        dynamic = [a for i, a in enumerate(args)
                   if i not in self.static and isinstance(a, torch.Tensor)]
        if self.opts.mode == "timing":
            program.compiled.run({n: _to_numpy(t) for n, t in zip(program.input_names, dynamic)})
            _LAST_REPORT = program.report
            with torch.no_grad():
                return self.gm(*args)  # values from PyTorch: the timing mode computes none
        outs = program.run(dynamic)
        _LAST_REPORT = program.report
        return rebuild(outs)


def trnsim_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
                   options: dict[str, Any] | None = None, **kwargs: Any) -> Callable:
    """The TorchDynamo backend registered as "trnsim"."""
    if kwargs.get("mode") not in (None, "default"):
        raise ValueError("trnsim backend: torch.compile(mode=...) is Inductor's; pass "
                         "options={'mode': 'functional'|'timing'} instead")
    return _CompiledGraph(gm, example_inputs, Options.from_dict(options))


def register() -> None:
    """Register "trnsim" with TorchDynamo (idempotent)."""
    from torch._dynamo.backends import registry
    if "trnsim" not in registry._BACKENDS and "trnsim" not in registry._COMPILER_FNS:
        registry.register_backend(compiler_fn=trnsim_backend, name="trnsim")


# ------------------------------------------------------------------------------------------
# trnsim.trace


class TracedModule(torch.nn.Module):
    """A PyTorch module compiled for the simulated chip. Call it like the original; ``.report``
    is the report of the last compiled shape, ``.compiled`` the trnsim CompiledModel and
    ``.onnx_bytes`` the exported graph. A call with new input shapes compiles again."""

    def __init__(self, model: torch.nn.Module, example_inputs: Sequence[torch.Tensor], opts: Options):
        super().__init__()
        self.model = model
        self.opts = opts
        self._cache: dict[tuple, tuple[_Program, Callable]] = {}
        self._last: _Program | None = None
        self._program(example_inputs)

    def _program(self, inputs: Sequence[torch.Tensor]) -> tuple[_Program, Callable]:
        key = _key(inputs)
        if key not in self._cache:
            with torch.no_grad():
                reference = self.model(*inputs)
            leaves, rebuild = _structure(reference)
            onnx_bytes, names = export_onnx(self.model, inputs, self.opts.opset)
            self._cache[key] = (_Program(onnx_bytes, names, self.opts, leaves), rebuild)
        self._last = self._cache[key][0]
        return self._cache[key]

    @property
    def compiled(self):
        return self._last.compiled

    @property
    def report(self) -> dict:
        return self._last.report

    @property
    def onnx_bytes(self) -> bytes:
        return self._last.onnx_bytes

    def forward(self, *inputs: torch.Tensor):
        for x in inputs:
            if not isinstance(x, torch.Tensor):
                raise TypeError(f"trnsim.trace: inputs must be tensors, got {type(x).__name__}")
        program, rebuild = self._program(inputs)
        if self.opts.mode == "timing":
            program.compiled.run({n: _to_numpy(t) for n, t in zip(program.input_names, inputs)})
            with torch.no_grad():
                return self.model(*inputs)
        return rebuild(program.run(inputs))


def trace(model: torch.nn.Module, example_inputs: torch.Tensor | Sequence[torch.Tensor],
          chip: str = "trn2", dtype: str = "fp32", mode: str = "functional",
          batch: int | None = None, opset: int = _DEFAULT_OPSET) -> TracedModule:
    """Compile ``model`` for the simulated chip at the shapes of ``example_inputs``; returns a
    callable module with ``.report``. The model is put in eval mode (inference)."""
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    opts = Options.from_dict(dict(chip=chip, dtype=dtype, mode=mode, batch=batch, opset=opset))
    return TracedModule(model.eval(), tuple(example_inputs), opts)
