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
from eager PyTorch on the CPU (a meta-device model: the trace's meta tensors); the report holds
the simulated time, and weights are exported as shapes only (trnsim.torch_weightless).

torch.compile: a graph the compiler refuses runs eagerly with a FallbackWarning, as does the
code around each Dynamo graph break; trnsim.torch_session records every run (session_report:
TTFT/TPOT of a generation); trnsim.torch_rewrites prepares a graph (GQA/causal attention, the
in-place updates of a static KV cache).

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
from trnsim import torch_session as _session
from trnsim.torch_session import FallbackWarning
from trnsim.torch_rewrites import aliased_in_place, functionalize, rewrite_attention
from trnsim.torch_export_ops import install as install_export_ops
from trnsim.torch_weightless import is_meta_module

__all__ = ["trnsim_backend", "trace", "TracedModule", "export_onnx", "last_report", "register",
           "session_report", "reset_session", "FallbackWarning", "kv_bucket"]

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
        if like.dim() == 0 and out.numel() == 1:  # a 0-d output comes back as [1]
            out = out.reshape(())
        if tuple(out.shape) != tuple(like.shape):
            raise trnsim.ShapeError(f"trnsim backend: the simulated output has shape "
                                    f"{tuple(out.shape)}, PyTorch's has {tuple(like.shape)}")
    return out


# ------------------------------------------------------------------------------------------
# ONNX export


class _KeepAttributes:
    """Restores every submodule's public attributes after a TorchScript trace: models change
    themselves while traced (transformers' Swin stores its window size as a tensor under
    torch.jit tracing), which later breaks torch.export of the same model."""

    def __init__(self, module: torch.nn.Module):
        self.saved = [(m, {k: v for k, v in vars(m).items() if not k.startswith("_")})
                      for m in module.modules()]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for m, attrs in self.saved:
            for k in [k for k in vars(m) if not k.startswith("_") and k not in attrs]:
                delattr(m, k)
            vars(m).update(attrs)
        return False


def export_onnx(module: torch.nn.Module, example_inputs: Sequence[torch.Tensor],
                opset: int = _DEFAULT_OPSET) -> tuple[bytes, list[str]]:
    """Export ``module`` called on ``example_inputs`` to serialized ONNX; returns (bytes,
    input names). Parameters and buffers become initializers (constants)."""
    names = [f"input_{i}" for i in range(len(example_inputs))]
    install_export_ops()  # aten::diff, aten::histc, transformers' grouped MoE matmul
    buf = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad(), _KeepAttributes(module):
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


def _export(module: torch.nn.Module, inputs: Sequence[torch.Tensor], opts: Options) -> tuple[bytes, list[str]]:
    """Functional mode: weights as initializers. Timing mode: weights as shapes and dtypes only
    (trnsim.torch_weightless), so meta-device models and models over 2 GB compile."""
    if opts.mode == "timing":
        from trnsim.torch_weightless import export_weightless
        return export_weightless(module, inputs, opts.opset, opts.dtype)[:2]
    return export_onnx(module, inputs, opts.opset)


def _timing_feeds(program: "_Program", tensors: Sequence[torch.Tensor]) -> dict:
    """The inputs of a timing-mode run: only those with data (a meta tensor has none; the
    timing mode needs shapes only, which the program was compiled for)."""
    taken = set(program.compiled.input_names)
    return {n: _to_numpy(t) for n, t in zip(program.input_names, tensors)
            if n in taken and isinstance(t, torch.Tensor) and not t.is_meta}


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
        taken = set(self.compiled.input_names)  # the exporter drops inputs the graph does not use
        feeds = {n: _to_numpy(t) for n, t in zip(self.input_names, tensors) if n in taken}
        result = self.compiled.run(feeds)
        outs = [result[n] for n in self.compiled.output_names]
        return [_to_torch(a, ref) for a, ref in zip(outs, self.reference_outputs)]


def _key(args: Sequence[Any]) -> tuple:
    return tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else ("const", int(a))
                 for a in args)


_LAST_REPORT: dict | None = None


def last_report(all: bool = False) -> dict | None:
    """The report of the program that ran last through ``backend="trnsim"`` (None before);
    ``all=True``: the whole session (``session_report()``)."""
    return session_report() if all else _LAST_REPORT


def session_report() -> dict:
    """Every graph of the session since import or ``reset_session()``: programs compiled, runs
    on the chip, fallbacks to the CPU (with why) and, for a generation, TTFT, TPOT and tokens."""
    return _session.summary()


KV_BUCKETS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)


def kv_bucket(tokens: int, buckets: Sequence[int] = KV_BUCKETS) -> int:
    """The KV-cache length to compile for: the smallest bucket holding ``tokens`` (prompt plus
    new tokens), as Neuron buckets sequence lengths. Use it as a static cache's length:
    ``StaticCache(config=cfg, max_cache_len=kv_bucket(n))``; every decode step (and every
    generation that fits the bucket) then runs one compiled program."""
    for b in sorted(buckets):
        if b >= tokens:
            return int(b)
    raise trnsim.ShapeError(f"kv_bucket: {tokens} tokens exceed the largest bucket {max(buckets)}")


def reset_session() -> None:
    """Start a new session record (``session_report``) and forget the last report."""
    global _LAST_REPORT
    _LAST_REPORT = None
    _session.reset()


# ------------------------------------------------------------------------------------------
# torch.compile backend


class _BoundGraph(torch.nn.Module):
    """A Dynamo graph with its lifted parameters/buffers bound as buffers (so the exporter makes
    them ONNX initializers), its integer arguments (symbolic sizes) and 0-d tensors (float module
    attributes under dynamic=True) fixed to their run-time values: what remains are the inputs."""

    def __init__(self, gm: torch.fx.GraphModule, statics: dict[int, torch.Tensor],
                 consts: dict[int, Any], n_args: int):
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
                c = self.consts[i]
                # a 0-d tensor is made inside forward, so the trace records it as a constant
                args.append(torch.tensor(c[0], dtype=c[1]) if isinstance(c, tuple) else c)
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


def _is_scalar(a: Any) -> bool:
    """A 0-d floating non-parameter tensor (a float module attribute under dynamic=True): bound
    by value (value specialisation), as a constant. Integer 0-d inputs stay inputs (counters
    such as a KV cache's length change every step; compile_onnx specialises those that reach
    a shape operand itself)."""
    return (isinstance(a, torch.Tensor) and a.dim() == 0 and a.is_floating_point()
            and not isinstance(a, torch.nn.Parameter))


def _frame_name() -> tuple[str, bool]:
    """(a name for the graph being compiled, whether it starts a forward): a graph compiled for a
    ``torch_dynamo_resume_in_*`` continuation runs after a graph break inside a forward."""
    try:
        ctx = torch._guards.TracingContext.try_get()
        code = ctx.traced_code[0] if ctx is not None and ctx.traced_code else None
        cid = torch._guards.CompileContext.current_compile_id()
    except Exception:  # private API: a name is a nicety
        code, cid = None, None
    name = code.co_name if code is not None else "graph"
    return f"{name} [{cid}]" if cid is not None else name, not name.startswith("torch_dynamo_resume")


_BREAKS_SEEN: set[str] = set()


def _warn_graph_breaks() -> None:
    """Each new Dynamo graph break runs the code around it in Python on the CPU: a warning with
    Dynamo's reason (from torch._dynamo.utils.counters)."""
    try:
        from torch._dynamo.utils import counters
        reasons = list(counters["graph_break"])
    except Exception:
        return
    for reason in reasons:
        if reason not in _BREAKS_SEEN:
            _BREAKS_SEEN.add(reason)
            _session.record_fallback("a Dynamo graph break", str(reason).strip().splitlines()[0])


class _CompiledGraph:
    """What the backend hands back to Dynamo: runs the graph on the simulated chip, one program
    per set of input shapes (and values of scalar inputs); a graph the compiler refuses runs
    eagerly with a FallbackWarning naming it and why."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], opts: Options):
        self.gm = gm
        self.opts = opts
        self.name, self.entry = _frame_name()
        rewrite_attention(gm)
        # In-place updates through views are not functionalised (they were lost): the graph runs
        # eagerly, unchanged, with a FallbackWarning naming the update.
        self.refusal = aliased_in_place(gm)
        self.mutated = [] if self.refusal else functionalize(gm)
        self.static = _static_indices(gm, example_inputs)
        self.cache: dict[tuple, tuple[_Program, Callable] | None] = {}
        _warn_graph_breaks()

    def _consts(self, args: Sequence[Any]) -> dict[int, Any]:
        return {i: (a.item(), a.dtype) if _is_scalar(a) else int(a) for i, a in enumerate(args)
                if i not in self.static and (not isinstance(a, torch.Tensor) or _is_scalar(a))}

    def _key(self, args: Sequence[Any]) -> tuple:
        return tuple(("value", a.item(), a.dtype) if _is_scalar(a) else k
                     for i, (a, k) in enumerate(zip(args, _key(args))) if i not in self.static)

    def _compile(self, args: Sequence[Any]) -> tuple[_Program, Callable]:
        consts = self._consts(args)
        bound = _BoundGraph(self.gm, {i: args[i] for i in self.static}, consts, len(args)).eval()
        # clones: the reference run and the export's trace must not touch the caller's tensors
        # (a graph may update its inputs in place: a KV cache, a length counter)
        dynamic = [a.clone() if isinstance(a, torch.Tensor) else a
                   for i, a in enumerate(args) if i not in self.static and i not in consts]
        with torch.no_grad():
            reference = bound(*dynamic)
        leaves, rebuild = _structure(reference)
        onnx_bytes, names = _export(bound, dynamic, self.opts)
        program = _Program(onnx_bytes, names, self.opts, leaves)
        _session.record_compile(self.name, [list(t.shape) for t in dynamic],
                                float(program.compiled.report.get("compile_time_s", 0.0)))
        return program, rebuild

    def __call__(self, *args):
        global _LAST_REPORT
        key = self._key(args)
        if key not in self.cache and self.refusal:
            self.cache[key] = None
            _session.record_fallback(f"graph '{self.name}' ({len(self.gm.graph.nodes)} FX nodes)",
                                     f"unsupported: {self.refusal}")
        if key not in self.cache:
            try:
                self.cache[key] = self._compile(args)
            except trnsim.TrnsimError as e:  # refused: this graph runs eagerly, and says so
                self.cache[key] = None
                _session.record_fallback(f"graph '{self.name}' ({len(self.gm.graph.nodes)} FX nodes)",
                                         str(e).strip().splitlines()[0])
        entry = self.cache[key]
        if entry is None:
            _session.record_eager_run()
            with torch.no_grad():
                return self._write_back(args, self.gm(*args))
        program, rebuild = entry
        dynamic = [a for i, a in enumerate(args)
                   if i not in self.static and isinstance(a, torch.Tensor) and not _is_scalar(a)]
        if self.opts.mode == "timing":
            program.compiled.run(_timing_feeds(program, dynamic), mode="timing")
            _LAST_REPORT = program.report
            _session.record_run(self.name, self.entry, _LAST_REPORT)
            with torch.no_grad():  # values from PyTorch: the timing mode computes none
                return self._write_back(args, self.gm(*args))
        outs = program.run(dynamic)
        _LAST_REPORT = program.report
        _session.record_run(self.name, self.entry, _LAST_REPORT)
        return self._write_back(args, rebuild(outs))

    def _write_back(self, args: Sequence[Any], result: Any) -> Any:
        """Copies the new values of in-place-updated inputs (a static KV cache) into PyTorch's
        tensors and drops them from the outputs Dynamo expects."""
        if not self.mutated:
            return result
        k = len(self.mutated)
        with torch.no_grad():
            for i, value in zip(self.mutated, result[-k:]):
                args[i].copy_(value)
        return tuple(result[:-k])


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
    # Without allow_rnn Dynamo skips nn.RNN/LSTM/GRU modules: they would run on the CPU and the
    # backend never hear of it (a silent fallback). With it they reach the graph, and trnsim
    # compiles them (ONNX LSTM/GRU/RNN); other backends trace them as well.
    import torch._dynamo
    torch._dynamo.config.allow_rnn = True


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
        self.meta = is_meta_module(model)
        self._program(example_inputs)

    def _program(self, inputs: Sequence[torch.Tensor]) -> tuple[_Program, Callable]:
        key = _key(inputs)
        if key not in self._cache:
            if self.meta:
                if self.opts.mode != "timing":
                    raise trnsim.UnsupportedError(
                        "unsupported: a model on the meta device has no weights; trace it with "
                        "mode='timing' (shapes and dtypes only)")
                # no eager run: the trace's own outputs (meta tensors) give the structure
                from trnsim.torch_weightless import export_weightless
                onnx_bytes, names, reference = export_weightless(self.model, inputs, self.opts.opset,
                                                                 self.opts.dtype)
                leaves, rebuild = _structure(reference)
            else:
                with torch.no_grad():
                    reference = self.model(*inputs)
                leaves, rebuild = _structure(reference)
                onnx_bytes, names = _export(self.model, inputs, self.opts)
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
            program.compiled.run(_timing_feeds(program, inputs), mode="timing")
            if self.meta:  # shapes only: the trace's meta outputs
                return rebuild(program.reference_outputs)
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
