"""The architecture sweep (issue 11): every family of arch_zoo.py through the four ways a user
brings a PyTorch model to trnsim, each run functionally on a simulated trn2 (fp32 policy) and
compared with eager PyTorch:

  compile      torch.compile(model, backend="trnsim"); a graph that falls back to eager
               (FallbackWarning) or a Dynamo graph break counts as an error, not a pass
  trace        trnsim.trace(model, inputs)
  onnx-legacy  torch.onnx.export(..., dynamo=False) to a file, then trnsim.compile_onnx
  onnx-dynamo  torch.onnx.export(...) with the default (dynamo) exporter, then trnsim.compile_onnx

Tolerance (fp32 policy; sums run in another order on the chip): every output element within
|got - want| <= 1e-4 * max|want| + 1e-3 |want|, and the shapes equal (the measured worst is
about 1e-6 of max|want|).

A cell is "pass", "wrong" (ran, outside the tolerance: never allowed) or an error, which must be
a one-line trnsim error (UnsupportedError etc.), never a crash. EXPECTED_ERRORS lists the cells
known to be refused today, each with the start of its message: a cell that starts passing
fails the test until it leaves the list, so the list only shrinks.

`python tests/python/test_architectures.py [--json] [names...]` prints the architecture x path
table and the pass rate.
"""
from __future__ import annotations

import io
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -r requirements.txt)")
pytest.importorskip("transformers", reason="transformers is not installed (pip install -r requirements.txt)")
pytest.importorskip("onnx", reason="onnx is not installed (pip install -r requirements.txt)")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import arch_zoo  # noqa: E402

import trnsim  # noqa: E402
import trnsim.torch_export_ops  # noqa: E402

# The paths share one model per architecture; onnx-legacy runs last, as a user's own
# TorchScript export may change the model (transformers' Swin keeps a tensor window size after
# torch.jit tracing; trnsim's own exports restore the model's attributes).
PATHS = ("compile", "trace", "onnx-dynamo", "onnx-legacy")
RTOL, ATOL_REL_MAX = 1e-3, 1e-4

# Cells refused today (architecture, path) -> the start of the one-line error. Measured
# 2026-11-24 with `python tests/python/test_architectures.py`.
EXPECTED_ERRORS: dict[tuple[str, str], str] = {}


class Wrong(AssertionError):
    """Ran to the end with an answer outside the tolerance."""


def _leaves(out) -> list[torch.Tensor]:
    from torch.utils import _pytree as pytree
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def compare(got: list, want: list[torch.Tensor]) -> float:
    """Raises Wrong outside the tolerance; returns max |got - want| / max |want|."""
    if len(got) != len(want):
        raise Wrong(f"{len(got)} outputs, PyTorch has {len(want)}")
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g.detach() if isinstance(g, torch.Tensor) else g, dtype=np.float64)
        w = w.detach().double().numpy()
        if g.shape != w.shape:
            raise Wrong(f"output {i}: shape {g.shape}, PyTorch {w.shape}")
        scale = max(float(np.abs(w).max(initial=0.0)), 1e-30)
        err = np.abs(g - w)
        if not np.all(err <= ATOL_REL_MAX * scale + RTOL * np.abs(w)):
            raise Wrong(f"output {i}: max |d| {err.max():.3g} (max |want| {scale:.3g})")
        worst = max(worst, float(err.max(initial=0.0)) / scale)
    return worst


class OnCpu(Exception):
    """torch.compile ran (part of) the model on the CPU without a FallbackWarning."""


class ExportFailed(Exception):
    """torch.onnx.export itself failed: the exporter's limit, before trnsim sees a graph."""


def _run_compile(model, inputs):
    torch._dynamo.reset()
    trnsim.torch_backend.reset_session()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", trnsim.torch_backend.FallbackWarning)
            with torch.no_grad():
                out = _leaves(torch.compile(model, backend="trnsim", fullgraph=False)(*inputs))
    finally:
        torch._dynamo.reset()
    s = trnsim.torch_backend.session_report()
    if s["runs_on_chip"] == 0 or not s["all_on_chip"]:
        raise OnCpu(f"{s['runs_on_chip']} graph runs on the chip, {s['runs_on_cpu']} on the CPU")
    return out


def _run_trace(model, inputs):
    with torch.no_grad():
        return _leaves(trnsim.trace(model, inputs)(*inputs))


def _run_onnx(model, inputs, dynamo: bool):
    # The one line a user adds before their own export: the ops torch.onnx lacks (histc, diff,
    # transformers' grouped MoE matmul), see trnsim/torch_export_ops.py.
    trnsim.torch_export_ops.install()
    names = [f"in{i}" for i in range(len(inputs))]
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        path = os.path.join(d, "model.onnx")
        # The user's call, as the docs show it; the dynamo exporter's console chatter is muted.
        with io.StringIO() as sink:
            import contextlib
            with contextlib.redirect_stdout(sink):
                try:
                    if dynamo:
                        torch.onnx.export(model, tuple(inputs), path, input_names=names)
                    else:
                        torch.onnx.export(model, tuple(inputs), path, dynamo=False, input_names=names)
                except Exception as e:  # noqa: BLE001
                    raise ExportFailed(one_line(e)) from e
        cm = trnsim.compile_onnx(path)
        out = cm.run({n: t.numpy() for n, t in zip(names, inputs)})
        return [out[n] for n in cm.output_names]


RUNNERS = {
    "compile": _run_compile,
    "trace": _run_trace,
    "onnx-legacy": lambda m, x: _run_onnx(m, x, dynamo=False),
    "onnx-dynamo": lambda m, x: _run_onnx(m, x, dynamo=True),
}

_BUILT: dict[str, tuple] = {}


def build(name: str):
    """(model, inputs, eager outputs), built once per architecture and shared by the paths."""
    if name not in _BUILT:
        model, inputs = arch_zoo.BY_NAME[name].build()
        with torch.no_grad():
            want = _leaves(model(*inputs))
        _BUILT[name] = (model, inputs, want)
    return _BUILT[name]


def one_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def run_cell(name: str, path: str) -> dict:
    """One architecture through one path: {'arch', 'path', 'result', 'detail', 'time_s'}."""
    t0 = time.perf_counter()
    row = {"arch": name, "path": path}
    try:
        model, inputs, want = build(name)
        got = RUNNERS[path](model, inputs)
        row.update(result="pass", detail=f"max err/max {compare(got, want):.2e}")
    except Wrong as e:
        row.update(result="wrong", detail=str(e))
    except (OnCpu, ExportFailed) as e:
        row.update(result="cpu" if isinstance(e, OnCpu) else "export", detail=str(e))
    except Exception as e:  # noqa: BLE001 - classified below: a trnsim error or a crash
        kind = "error" if isinstance(e, (trnsim.TrnsimError, trnsim.torch_backend.FallbackWarning)) else "crash"
        row.update(result=kind, detail=one_line(e), exception=e)
    row["time_s"] = time.perf_counter() - t0
    return row


CELLS = [(a.name, p) for a in arch_zoo.ARCHS for p in PATHS]


@pytest.mark.parametrize("name,path", CELLS, ids=[f"{a}-{p}" for a, p in CELLS])
def test_architecture_path(name, path):
    row = run_cell(name, path)
    expected = EXPECTED_ERRORS.get((name, path))
    if row["result"] == "pass":
        assert expected is None, f"{name} {path} now passes: remove it from EXPECTED_ERRORS"
        return
    assert row["result"] != "wrong", f"{name} {path}: wrong answer: {row['detail']}"
    assert expected is not None, f"{name} {path}: {row['result']}: {row['detail']}"
    assert row["result"] == "error", f"{name} {path}: not a trnsim error: {row['detail']}"
    assert "\n" not in row["detail"] and row["detail"].split(": ", 1)[1].startswith(expected), row["detail"]


def test_sweep_covers_35_architectures_and_the_pass_rate_target():
    assert len(arch_zoo.ARCHS) >= 35, [a.name for a in arch_zoo.ARCHS]
    rate = 1 - len(EXPECTED_ERRORS) / len(CELLS)
    assert rate >= 0.95, f"pass rate {rate:.1%} < 95%"


def _main(argv: list[str]) -> int:
    import json
    as_json = "--json" in argv
    names = [a for a in argv if not a.startswith("--")] or [a.name for a in arch_zoo.ARCHS]
    rows = []
    for n in names:
        for p in PATHS:
            r = run_cell(n, p)
            r.pop("exception", None)
            rows.append(r)
            if not as_json:
                print(f"{n:14s} {p:12s} {r['result']:6s} {r['time_s']:6.1f}s  {r['detail'][:150]}", flush=True)
    passed = sum(r["result"] == "pass" for r in rows)
    if as_json:
        print(json.dumps({"kind": "sweep", "pass_rate": passed / len(rows), "cells": rows}, indent=1))
    else:
        print(f"pass {passed}/{len(rows)} = {passed / len(rows):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
