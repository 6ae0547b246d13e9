"""`python -m trnsim run model.onnx [--check]`: compile an ONNX model for a simulated chip, run it,
print the report, and with --check compare every output with onnxruntime on the same inputs.

Inputs are seeded (``--seed``) or read from ``--inputs file.npz`` (arrays named after the model's
inputs). Symbolic dimensions take ``--batch`` for the first one and ``--dim NAME=VALUE`` for the
rest (default 1). Integer inputs whose name contains "mask" are ones; other integer inputs are
drawn from [0, --int-high) so that they are valid indices for any embedding table.

The check passes when every float output meets the dtype policy's tolerance (TOLERANCES below)
and every non-float output is equal; the exit status is 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

# Per dtype policy: (rtol, atol, minimum cosine similarity). fp32 matches onnxruntime up to
# summation order; bf16 rounds activations to 8 mantissa bits; fp8 weights to 3.
TOLERANCES = {"fp32": (1e-3, 1e-4, 0.99999), "bf16": (5e-2, 5e-2, 0.999), "fp8": (2e-1, 2e-1, 0.99)}

_ONNX_TO_NUMPY = {1: np.float32, 2: np.uint8, 3: np.int8, 5: np.int16, 6: np.int32, 7: np.int64,
                  9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


@dataclass
class OutputCheck:
    name: str
    shape: list[int]
    max_abs: float
    mean_abs: float
    max_rel: float
    cosine: float
    passed: bool
    note: str = ""
    # max |got - ref| over the reference's max |x| (0 when both are 0): the scale-free error
    # that suits outputs with many tiny entries (softmax probabilities), where max_rel does not.
    max_abs_over_max: float = 0.0


def model_inputs(model_bytes: bytes) -> list[tuple[str, np.dtype, list[int | str]]]:
    """The graph inputs that are not initializers: (name, numpy dtype, dims with symbols)."""
    import onnx
    m = onnx.load_from_string(model_bytes)
    inits = {i.name for i in m.graph.initializer}
    out = []
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if tt.elem_type not in _ONNX_TO_NUMPY:
            raise ValueError(f"input {vi.name!r}: element type {tt.elem_type} is not supported "
                             "by the input generator; pass --inputs file.npz")
        dims: list[int | str] = []
        for d in tt.shape.dim:
            dims.append(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?"))
        out.append((vi.name, np.dtype(_ONNX_TO_NUMPY[tt.elem_type]), dims))
    return out


def make_inputs(specs, seed: int = 0, batch: int | None = None, dims: dict[str, int] | None = None,
                int_high: int = 2) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    dims = dims or {}
    feeds = {}
    for name, dtype, shape in specs:
        concrete = []
        for k, d in enumerate(shape):
            if isinstance(d, int) and d > 0:
                concrete.append(d)
            elif f"{name}[{k}]" in dims:  # by position, as the compiler reads --dim x[2]=48
                concrete.append(dims[f"{name}[{k}]"])
            elif isinstance(d, str) and d in dims:
                concrete.append(dims[d])
            elif k == 0 and batch is not None:
                concrete.append(batch)
            else:
                concrete.append(1)
        if dtype.kind == "f":
            feeds[name] = rng.standard_normal(concrete).astype(dtype)
        elif dtype == np.bool_:
            feeds[name] = rng.random(concrete) > 0.5
        elif "mask" in name.lower():
            feeds[name] = np.ones(concrete, dtype=dtype)
        else:
            feeds[name] = rng.integers(0, int_high, size=concrete).astype(dtype)
    return feeds


def compare(name: str, got: np.ndarray, ref: np.ndarray, dtype_policy: str) -> OutputCheck:
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return OutputCheck(name, list(ref.shape), float("inf"), float("inf"), float("inf"), 0.0,
                           False, f"shape {list(got.shape)} != reference {list(ref.shape)}")
    if ref.dtype.kind not in "fc":
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        mism = int(np.count_nonzero(got != ref))
        return OutputCheck(name, list(ref.shape), float(diff.max(initial=0.0)),
                           float(diff.mean()) if diff.size else 0.0, 0.0, 1.0 if mism == 0 else 0.0,
                           mism == 0, f"{mism} mismatching elements" if mism else "exact")
    g = got.astype(np.float64).ravel()
    r = ref.astype(np.float64).ravel()
    finite_ok = bool(np.array_equal(np.isfinite(g), np.isfinite(r)))
    mask = np.isfinite(g) & np.isfinite(r)
    d = np.abs(g[mask] - r[mask])
    max_abs = float(d.max(initial=0.0))
    mean_abs = float(d.mean()) if d.size else 0.0
    max_rel = float((d / np.maximum(np.abs(r[mask]), 1e-6)).max(initial=0.0))
    ng, nr = np.linalg.norm(g[mask]), np.linalg.norm(r[mask])
    cosine = float(g[mask] @ r[mask] / (ng * nr)) if ng > 0 and nr > 0 else (1.0 if ng == nr else 0.0)
    scale = float(np.abs(r[mask]).max(initial=0.0))
    over_max = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    rtol, atol, min_cos = TOLERANCES[dtype_policy]
    close = bool(np.all(d <= atol + rtol * np.abs(r[mask])))
    # A low-precision policy is judged by direction (cosine); fp32 by elementwise closeness.
    passed = finite_ok and (close if dtype_policy == "fp32" else (close or cosine >= min_cos))
    note = "" if finite_ok else "non-finite values differ from the reference"
    return OutputCheck(name, list(ref.shape), max_abs, mean_abs, max_rel, cosine, passed, note, over_max)


def run_onnxruntime(model_bytes: bytes, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def _op_rows(ops: Any) -> list[dict[str, Any]]:
    """Normalise report["ops"] (a list of dicts, or a dict name -> seconds or dict) to rows."""
    rows: list[dict[str, Any]] = []
    if isinstance(ops, dict):
        for k, v in ops.items():
            rows.append({"name": k, **v} if isinstance(v, dict) else {"name": k, "time_s": v})
    elif isinstance(ops, (list, tuple)):
        for v in ops:
            rows.append(dict(v) if isinstance(v, dict) else {"name": str(v)})
    return rows


def _time_of(row: dict[str, Any]) -> float:
    for k in ("time_s", "seconds", "latency_s"):
        if isinstance(row.get(k), (int, float)):
            return float(row[k])
    for k in ("time_ns", "ns"):
        if isinstance(row.get(k), (int, float)):
            return float(row[k]) * 1e-9
    return 0.0


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def print_report(result: dict[str, Any], top: int = 25) -> None:
    from rich.console import Console
    from rich.table import Table
    # A pipe or a log file gets 140 columns rather than rich's 80, which cut the op names and errors.
    console = Console() if sys.stdout.isatty() else Console(width=140)
    rep = result["report"]
    head = Table(title=f"trnsim run {os.path.basename(result['model'])}  chip={result['chip']} dtype={result['dtype']} "
                       f"mode={result['mode']}")
    head.add_column("metric")
    head.add_column("value", justify="right")
    t = rep.get("time_s")
    if isinstance(t, (int, float)):
        head.add_row("latency", f"{t * 1e6:.2f} us")
        if t > 0:
            head.add_row("throughput", f"{result['batch'] / t:,.1f} inferences/s (batch {result['batch']})")
    for k in ("compile_time_s", "hbm_bytes"):
        if k in rep:
            head.add_row(k, _fmt(rep[k]))
    head.add_row("simulation wall time", f"{result['run_wall_s']:.3f} s")
    console.print(head)

    engines = rep.get("engines")
    if isinstance(engines, dict) and engines:
        et = Table(title="engines")
        et.add_column("engine")
        if all(isinstance(v, dict) for v in engines.values()):  # {engine: {busy_s, utilisation}}
            cols = list(dict.fromkeys(k for v in engines.values() for k in v))
            for c in cols:
                et.add_column(c, justify="right")
            for k, v in engines.items():
                et.add_row(str(k), *[_fmt(v.get(c, "")) for c in cols])
        else:
            et.add_column("value", justify="right")
            for k, v in engines.items():
                et.add_row(str(k), json.dumps(v) if isinstance(v, (dict, list)) else _fmt(v))
        console.print(et)

    rows = sorted(_op_rows(rep.get("ops")), key=_time_of, reverse=True)
    if rows:
        total = sum(_time_of(r) for r in rows) or 1.0
        keys = [k for k in rows[0] if not isinstance(rows[0][k], (dict, list))]
        first = [k for k in ("name", "op", "time_s") if k in keys]
        keys = first + [k for k in keys if k not in first]
        ot = Table(title=f"per-op breakdown (top {min(top, len(rows))} of {len(rows)})")
        for k in keys:
            ot.add_column(k)
        ot.add_column("share", justify="right")
        for r in rows[:top]:
            ot.add_row(*[_fmt(r.get(k, "")) for k in keys], f"{100 * _time_of(r) / total:.1f}%")
        console.print(ot)

    if result.get("check") is not None:
        ct = Table(title=f"check vs onnxruntime ({result['dtype']} tolerance rtol/atol/cos "
                         f"{TOLERANCES[result['dtype']]})")
        for k in ("output", "shape", "max abs", "mean abs", "max rel", "max abs / max |ref|", "cosine", "result"):
            ct.add_column(k)
        for c in result["check"]:
            ct.add_row(c["name"], str(c["shape"]), f"{c['max_abs']:.3g}", f"{c['mean_abs']:.3g}",
                       f"{c['max_rel']:.3g}", f"{c.get('max_abs_over_max', 0.0):.3g}", f"{c['cosine']:.6f}",
                       ("PASS" if c["passed"] else "FAIL") + (f" ({c['note']})" if c["note"] else ""))
        console.print(ct)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, float) and not np.isfinite(x):
        return str(x)
    return x


_MAX_MODEL_BYTES = 2 << 30  # protobuf's limit for one serialized message (an ONNX model)


def _one_line(e: BaseException) -> str:
    """An exception's message on one line (onnxruntime's span several)."""
    return " ".join(str(e).split()) or type(e).__name__


def run(args: argparse.Namespace) -> int:
    import zipfile

    import trnsim
    dims: dict[str, int] = {}
    try:  # bad files and options: one line and exit status 2, as the C++ command does
        with open(args.model, "rb") as f:  # bounded: /dev/zero or a FIFO must not be read for ever
            model_bytes = f.read(_MAX_MODEL_BYTES + 1)
        if len(model_bytes) > _MAX_MODEL_BYTES:
            print(f"error: {args.model}: larger than {_MAX_MODEL_BYTES} bytes, protobuf's limit for an ONNX model",
                  file=sys.stderr)
            return 2
        if args.inputs:
            with np.load(args.inputs) as z:
                feeds = {k: z[k] for k in z.files}
        else:
            for item in args.dim or []:
                name, sep, value = item.partition("=")
                if not sep or not name or not value.isdigit() or int(value) <= 0:
                    raise ValueError(f"--dim {item}: expected NAME=SIZE with a positive integer SIZE")
                dims[name] = int(value)
    except OSError as e:
        print(f"error: cannot read '{e.filename}': {e.strerror}", file=sys.stderr)
        return 2
    except (ValueError, zipfile.BadZipFile) as e:
        where = f"{args.inputs}: cannot read the .npz archive: " if args.inputs else ""
        print(f"error: {where}{e}", file=sys.stderr)
        return 2
    compile_onnx = getattr(trnsim, "compile_onnx", None)
    if compile_onnx is None:
        print("error: this trnsim build has no compile_onnx (graph compiler not built)", file=sys.stderr)
        return 2
    try:
        t0 = time.perf_counter()
        extra = {"dims": dims} if dims else {}
        cm = compile_onnx(args.model, chip=args.chip, dtype=args.dtype, mode=args.mode,
                          batch=args.batch, **extra)
        compile_wall = time.perf_counter() - t0
        if not args.inputs:  # the compiled shapes win where they are concrete (batch, folded dims)
            specs = model_inputs(model_bytes)
            try:
                shapes = dict(cm.input_shapes)
            except trnsim.ShapeError:  # compiled at the first run (free axes that cannot be 1)
                shapes = {}
            specs = [(n, dt, list(shapes[n]) if n in shapes and all(
                isinstance(d, int) and d > 0 for d in shapes[n]) else dims_) for n, dt, dims_ in specs]
            feeds = make_inputs(specs, args.seed, args.batch, dims, args.int_high)
        t0 = time.perf_counter()
        outs = cm.run(feeds)
        run_wall = time.perf_counter() - t0
    except trnsim.TrnsimError as e:  # UnsupportedError and ShapeError derive from it
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    except ValueError as e:  # the model's inputs as read here (model_inputs, make_inputs)
        print(f"error: {args.model}: {_one_line(e)}", file=sys.stderr)
        return 2
    batch = next(iter(feeds.values())).shape[0] if feeds and next(iter(feeds.values())).ndim else 1
    result: dict[str, Any] = {
        "kind": "run",  # what `trnsim report` draws it as
        "model": args.model, "chip": args.chip, "dtype": args.dtype, "mode": args.mode,
        # the simulated latency of one run, at the top level as in `trnsim run --json`
        "time_s": cm.report.get("time_s"),
        "batch": int(batch), "inputs": {k: list(v.shape) for k, v in feeds.items()},
        "compile_wall_s": compile_wall, "run_wall_s": run_wall, "report": dict(cm.report),
        "check": None,
    }
    ok = True
    if args.check:
        if args.mode != "functional":
            print("note: --check needs --mode functional (timing mode computes no values)", file=sys.stderr)
        else:
            t0 = time.perf_counter()
            try:
                ref = run_onnxruntime(model_bytes, feeds)
            except Exception as e:  # onnxruntime's own errors (InvalidGraph, Fail, ...): the reference cannot run
                print(f"error: {args.model}: onnxruntime cannot run the model for --check: {_one_line(e)}", file=sys.stderr)
                return 2
            result["onnxruntime_wall_s"] = time.perf_counter() - t0
            checks = [compare(n, outs[n], ref[n], args.dtype) for n in ref]
            result["check"] = [asdict(c) for c in checks]
            ok = all(c.passed for c in checks)
    if args.json:
        print(json.dumps(_jsonable(result), indent=2))
    else:
        print_report(result)
    return 0 if ok else 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="path to an .onnx file")
    p.add_argument("--chip", default="trn2", help="chip preset (trn1, trn2, trn3, ...)")
    p.add_argument("--dtype", default="fp32", choices=sorted(TOLERANCES), help="dtype policy")
    p.add_argument("--mode", default="functional", choices=["functional", "timing"])
    p.add_argument("--batch", type=int, default=None, help="batch size for a symbolic batch dimension")
    p.add_argument("--dim", action="append", metavar="NAME=VALUE",
                   help="value of a symbolic dimension (repeatable), e.g. --dim sequence=128")
    p.add_argument("--inputs", help=".npz file with one array per model input")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated inputs")
    p.add_argument("--int-high", type=int, default=2, help="generated integer inputs lie in [0, N)")
    p.add_argument("--check", action="store_true", help="compare the outputs with onnxruntime")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
