"""Silent wrong answers in a fuzz corpus (docs/hardening.md): every ONNX file of the given
directories that onnxruntime runs is run by trnsim too (compile_onnx, fp32, functional) on the
same seeded random inputs, and each output is compared (rtol 1e-3, atol 1e-4, NaN positions
exact; tests/python/onnx_node_suite.py's comparison). A model trnsim refuses with a TrnsimError
is a refusal, not a wrong answer; one onnxruntime refuses is not comparable and is skipped.
Models run in a worker subprocess (a crash or a run past --timeout is recorded, and the
worker restarted).
One line per mismatch, crash or timeout; the last line counts every outcome.

    PYTHONPATH=python .venv/bin/python fuzz/differential.py DIR_OR_FILE... [--timeout 60] [--limit N]
"""
from __future__ import annotations

import argparse
import collections
import os
import pickle
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MAX_ELEMENTS = 1 << 20  # inputs past this are skipped (a differential run, not a stress test)
SYMBOLIC_DIM = 2


def random_inputs(model) -> dict[str, np.ndarray] | None:
    """Seeded inputs for the graph's non-initializer inputs (symbolic dims = 2); None when a
    type or size is out of the comparison's reach."""
    from onnx import helper
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    out, total = {}, 0
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not t.HasField("shape"):
            return None
        shape = [d.dim_value if d.HasField("dim_value") else SYMBOLIC_DIM for d in t.shape.dim]
        if any(s < 0 for s in shape):
            return None
        total += int(np.prod(shape, dtype=np.int64)) if shape else 1
        if total > MAX_ELEMENTS:
            return None
        try:
            dt = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        except Exception:  # noqa: BLE001 - an unknown elem_type: not comparable
            return None
        if dt.kind == "f":
            out[vi.name] = rng.standard_normal(shape).astype(dt)
        elif dt.kind in "iu":
            out[vi.name] = rng.integers(0, 3, size=shape).astype(dt)
        elif dt.kind == "b":
            out[vi.name] = rng.integers(0, 2, size=shape).astype(bool)
        else:
            return None
    return out


def one(path: str) -> tuple[str, str]:
    """(status, detail) for one model: pass, refused, skipped, wrong."""
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import onnx
    import onnxruntime as ort
    import trnsim
    from onnx_node_suite import _compare
    data = Path(path).read_bytes()
    try:
        model = onnx.load_from_string(data)
        inputs = random_inputs(model)
    except Exception as e:  # noqa: BLE001 - not an ONNX model onnx reads
        return "skipped", f"onnx cannot read it ({type(e).__name__})"
    if inputs is None:
        return "skipped", "inputs out of reach"
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 4
        sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        with np.errstate(all="ignore"):
            exp = dict(zip(names, sess.run(None, inputs)))
    except Exception as e:  # noqa: BLE001 - onnxruntime refuses: nothing to compare with
        return "skipped", f"onnxruntime: {str(e).splitlines()[0][:100] if str(e) else type(e).__name__}"
    try:
        got = trnsim.compile_onnx(data, dtype="fp32").run(inputs)
    except trnsim.TrnsimError as e:
        return "refused", str(e)[:120]
    diffs = []
    for name, e in exp.items():
        if name not in got:
            diffs.append(f"{name}: missing")
            continue
        d = _compare(got[name], e, 1e-3, 1e-4)
        if d:
            diffs.append(f"{name}: {d}")
    return ("wrong", "; ".join(diffs)[:300]) if diffs else ("pass", "")


def worker() -> None:
    """Reads paths, one a line, and answers each with one pickled (status, detail), length-prefixed."""
    warnings.simplefilter("ignore")
    # The answers go to the original stdout; anything a library prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    for line in sys.stdin:
        status = one(line.strip())
        b = pickle.dumps(status)
        out.write(len(b).to_bytes(8, "little") + b)
        out.flush()


class Worker:
    """One long-lived worker process (imports once); restarted after a crash or a timeout."""

    def __init__(self):
        self.p = None

    def ask(self, path: str, timeout: float) -> tuple[str, str]:
        import select
        if self.p is None:  # stderr to a file: a full pipe would block the worker
            self.err = tempfile.TemporaryFile()
            self.p = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self.err)
        self.p.stdin.write((path + "\n").encode())
        self.p.stdin.flush()
        ready, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not ready:
            self.p.kill()
            self.p.wait()
            self.p = None
            return "timeout", f"past {timeout:g} s"
        head = self.p.stdout.read(8)
        if len(head) < 8:
            rc = self.p.wait()
            self.err.seek(0)
            err = self.err.read().decode(errors="replace").strip().splitlines()[-1:]
            self.p = None
            return "crash", f"exit {rc}: {err}"
        return pickle.loads(self.p.stdout.read(int.from_bytes(head, "little")))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--limit", type=int, default=0, help="at most this many models (0: all)")
    a = ap.parse_args()
    files = sorted(f for p in map(Path, a.paths) for f in ([p] if p.is_file() else p.iterdir()) if f.is_file())
    if a.limit:
        files = files[:a.limit]
    counts = collections.Counter()
    w = Worker()
    for f in files:
        status, detail = w.ask(str(f), a.timeout)
        counts[status] += 1
        if status in ("wrong", "crash", "timeout"):
            print(f"{status.upper()}  {f}: {detail}", flush=True)
    print(f"differential: {len(files)} models: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if counts["wrong"] or counts["crash"] or counts["timeout"] else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
    else:
        sys.exit(main())
