"""The ONNX backend node-test suite through trnsim.compile_onnx (functional mode, fp32 policy).

The test cases come from the generator that ships inside the `onnx` wheel
(onnx.backend.test.case.node.collect_testcases: the same models, inputs and expected outputs as
`python -m onnx.backend.test.cmd_tools generate-data` writes to disk), so nothing is downloaded.

Each case ends in one of:
    pass         every output matches the expected one (float: |got-exp| <= atol + rtol*|exp| with
                 rtol = max(1e-3, case rtol), atol = max(1e-4, case atol), NaN where expected;
                 integer / bool / string: equal; shapes equal)
    unsupported  trnsim.UnsupportedError whose message starts with "unsupported:" (clear refusal)
    wrong        the compiled model ran and an output differs: a silent wrong answer (failure)
    error        another trnsim error (ShapeError, TrnsimError, or an unsupported message without
                 the "unsupported:" prefix) on a valid model (failure)
    crash        a Python exception that is no trnsim error, the worker process died (signal),
                 or it ran past --timeout (failure)

Cases run in worker subprocesses, so a crash of the native code is recorded, not fatal.

    python tests/python/onnx_node_suite.py [--ops Add,MatMul] [--json out.json] [--jobs 2]

prints the pass rate per op and overall for ops in trnsim's supported set: trnsim.supported_ops()
when the compiler exposes it, else the ops with at least one case that did not raise
UnsupportedError. "X:expanded" counts the function-expanded variants of op X (graphs of other ops).
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import warnings
from collections import defaultdict
from typing import Any

import numpy as np

RTOL = 1e-3
ATOL = 1e-4
STATUSES = ("pass", "unsupported", "wrong", "error", "crash")
_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


def collect_cases() -> dict[str, Any]:
    """name -> onnx TestCase (model, data_sets, rtol, atol), in the generator's order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            from onnx.backend.test.case import node
            cases = node.collect_testcases(None)
    return {c.name: c for c in cases}


def op_of(name: str, case: Any, single_op: dict[str, str]) -> str:
    """The op a case tests: the node's op type; expanded variants count as "Op:expanded"."""
    nodes = case.model.graph.node
    m = _EXPANDED.search(name)
    if m:
        base = single_op.get(name[: m.start()])
        return f"{base}:expanded" if base else f"{nodes[0].op_type}:expanded"
    return nodes[0].op_type if len(nodes) == 1 else "+".join(sorted({n.op_type for n in nodes}))


def op_map(cases: dict[str, Any]) -> dict[str, str]:
    single = {n: c.model.graph.node[0].op_type for n, c in cases.items()
              if len(c.model.graph.node) == 1}
    return {n: op_of(n, c, single) for n, c in cases.items()}


def _compare(got: Any, exp: Any, rtol: float, atol: float) -> str | None:
    """None when equal within tolerance, else what differs."""
    if isinstance(exp, np.generic):
        exp = np.asarray(exp)
    if not isinstance(exp, np.ndarray):
        return f"expected a {type(exp).__name__} output, which the runner cannot compare"
    got = np.asarray(got)
    if got.shape != exp.shape:
        return f"shape {list(got.shape)} != expected {list(exp.shape)}"
    if exp.dtype.kind in "fc" or exp.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        g = got.astype(np.float64)
        e = exp.astype(np.float64)
        same_nan = np.array_equal(np.isnan(g), np.isnan(e))
        ok = same_nan and np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        if ok:
            return None
        d = np.abs(g - e)
        d[np.isnan(d)] = np.inf if not same_nan else 0.0
        return f"max abs error {d.max():.4g} (rtol {rtol:g}, atol {atol:g})"
    if exp.dtype.kind in "OSU":
        return None if got.tolist() == exp.tolist() else "string values differ"
    if not np.array_equal(got.astype(exp.dtype) if got.dtype != exp.dtype else got, exp):
        return f"{int(np.count_nonzero(got != exp))} of {exp.size} values differ"
    return None


def _tolerance(case: Any) -> tuple[float, float]:
    """rtol, atol for a case: RTOL/ATOL or the case's own if looser; widened to about two units
    in the last place where an output is bf16 or fp16 (the expected values are rounded to it)."""
    rtol = max(RTOL, float(getattr(case, "rtol", 0.0) or 0.0))
    atol = max(ATOL, float(getattr(case, "atol", 0.0) or 0.0))
    kinds = {o.type.tensor_type.elem_type for o in case.model.graph.output}
    if 16 in kinds:  # TensorProto.BFLOAT16: 8 significant bits
        rtol, atol = max(rtol, 2e-2), max(atol, 2e-2)
    elif 10 in kinds:  # TensorProto.FLOAT16: 11 significant bits
        rtol, atol = max(rtol, 2e-3), max(atol, 2e-3)
    return rtol, atol


def portable(case: Any) -> dict[str, Any]:
    """What a worker needs to run a case, without onnx: model bytes, names, data, tolerance."""
    graph = case.model.graph
    inits = {i.name for i in graph.initializer}
    rtol, atol = _tolerance(case)
    return {"model": case.model.SerializeToString(),
            "inputs": [i.name for i in graph.input if i.name not in inits],
            "outputs": [o.name for o in graph.output],
            "data_sets": [(_arrays(ins), _arrays(outs)) for ins, outs in case.data_sets],
            "rtol": rtol, "atol": atol}


def _arrays(values: Any) -> list[Any]:
    """The generator stores some cases' data (casts to and from bf16, fp8, ...) as TensorProto
    rather than numpy; turn those into arrays (ml_dtypes for the narrow floats)."""
    from onnx import TensorProto, numpy_helper
    return [numpy_helper.to_array(v) if isinstance(v, TensorProto) else v for v in values]


def run_case(case: dict[str, Any]) -> tuple[str, str]:
    """Compile and run one case (see portable()) in this process: (status, detail)."""
    import trnsim
    try:
        cm = trnsim.compile_onnx(case["model"], chip="trn2", dtype="fp32", mode="functional")
        for inputs, expected in case["data_sets"]:
            inputs = [np.asarray(x) if isinstance(x, np.generic) else x for x in inputs]
            if any(not isinstance(x, np.ndarray) for x in inputs):
                return "error", "compiled a model whose inputs are not tensors"
            outs = cm.run(dict(zip(case["inputs"], inputs)))
            for name, exp in zip(case["outputs"], expected):
                if name not in outs:
                    return "wrong", f"output {name!r} missing (got {sorted(outs)})"
                diff = _compare(outs[name], exp, case["rtol"], case["atol"])
                if diff:
                    return "wrong", f"output {name!r}: {diff}"
        return "pass", ""
    except trnsim.UnsupportedError as e:
        msg = str(e)
        return ("unsupported", msg) if msg.startswith("unsupported:") else \
            ("error", f"UnsupportedError without the 'unsupported:' prefix: {msg}")
    except trnsim.TrnsimError as e:
        return "error", f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - anything else is a crash of the stack
        return "crash", f"{type(e).__name__}: {e}"


# ------------------------------------------------------------------------------------------
# worker processes: one line in (the path of a pickled portable case), one JSON line out


def worker_main() -> None:
    import pickle
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the native code prints goes to stderr, not into the protocol
    import trnsim  # noqa: F401  (loaded before "ready", so a case's time is its own)
    proto.write("ready\n")
    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        with open(path, "rb") as f:
            case = pickle.load(f)
        t0 = time.perf_counter()
        status, detail = run_case(case)
        proto.write(json.dumps({"status": status, "detail": detail[:400],
                                "seconds": time.perf_counter() - t0}) + "\n")


class _Worker:
    def __init__(self, tmpdir: str):
        import tempfile
        self.err = tempfile.TemporaryFile(mode="w+", dir=tmpdir)
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.err, text=True, bufsize=1)
        ready = self.proc.stdout.readline()
        if ready.strip() != "ready":
            raise RuntimeError(f"node-suite worker failed to start (exit {self.proc.poll()}): "
                               f"{self._stderr_tail()}")

    def _stderr_tail(self) -> str:
        self.err.flush()
        self.err.seek(0)
        lines = [ln.strip() for ln in self.err.read().splitlines() if ln.strip()]
        return " | ".join(lines[-3:])[-300:]

    def run(self, name: str, path: str, timeout: float) -> dict[str, Any]:
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            self.proc.kill()

        self.err.seek(0)
        self.err.truncate()
        timer = threading.Timer(timeout, kill)
        t0 = time.perf_counter()
        timer.start()
        try:
            self.proc.stdin.write(path + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        finally:
            timer.cancel()
        if line:
            return {"name": name, **json.loads(line)}
        rc = self.proc.wait()
        why = f"timed out after {timeout:g} s" if timed_out.is_set() else f"worker died (exit {rc})"
        tail = self._stderr_tail()
        return {"name": name, "status": "crash", "detail": why + (f": {tail}" if tail else ""),
                "seconds": time.perf_counter() - t0}

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.err.close()


def run_suite(cases: dict[str, Any], names: list[str], jobs: int = 2, timeout: float = 30.0,
              progress: bool = False) -> list[dict[str, Any]]:
    """Run ``names`` (keys of ``cases``) in ``jobs`` worker processes; a worker that dies is
    replaced and its case recorded as a crash."""
    import pickle
    import tempfile
    todo: queue.Queue[str] = queue.Queue()
    for n in names:
        todo.put(n)
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    with tempfile.TemporaryDirectory(prefix="trnsim-node-suite-") as tmp:
        def loop():
            worker = _Worker(tmp)
            while True:
                try:
                    name = todo.get_nowait()
                except queue.Empty:
                    break
                path = os.path.join(tmp, name + ".pkl")
                with open(path, "wb") as f:
                    pickle.dump(portable(cases[name]), f)
                r = worker.run(name, path, timeout)
                os.unlink(path)
                with lock:
                    results.append(r)
                    if progress and len(results) % 200 == 0:
                        print(f"  {len(results)}/{len(names)}", file=sys.stderr)
                if r["status"] == "crash" and worker.proc.poll() is not None:
                    worker.close()
                    worker = _Worker(tmp)
            worker.close()

        threads = [threading.Thread(target=loop) for _ in range(max(1, min(jobs, len(names))))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    order = {n: i for i, n in enumerate(names)}
    return sorted(results, key=lambda r: order[r["name"]])


def supported_ops_from_trnsim() -> set[str] | None:
    import trnsim
    fn = getattr(trnsim, "supported_ops", None)
    if fn is None:
        return None
    ops = fn() if callable(fn) else fn
    return {str(o) for o in ops}


def summarize(results: list[dict[str, Any]], ops: dict[str, str],
              supported: set[str] | None = None) -> dict[str, Any]:
    per_op: dict[str, dict[str, int]] = defaultdict(lambda: {s: 0 for s in STATUSES})
    for r in results:
        per_op[ops[r["name"]]][r["status"]] += 1
    source = "trnsim.supported_ops()"
    if supported is None:
        source = "inferred: ops with a case that did not raise UnsupportedError"
        supported = {op for op, c in per_op.items() if sum(c.values()) > c["unsupported"]}
    table = {}
    for op, c in sorted(per_op.items()):
        total = sum(c.values())
        base = op.split(":")[0]
        table[op] = {**c, "total": total, "rate": c["pass"] / total if total else 0.0,
                     "supported": op in supported or (":" in op and base in supported
                                                      and total > c["unsupported"])}
    sup = [v for v in table.values() if v["supported"]]
    sup_total = sum(v["total"] for v in sup)
    sup_pass = sum(v["pass"] for v in sup)
    counts = {s: sum(v[s] for v in table.values()) for s in STATUSES}
    return {
        "tolerance": {"rtol": RTOL, "atol": ATOL, "note": "max with the case's own rtol/atol"},
        "supported_set_source": source,
        "cases": len(results),
        "counts": counts,
        "overall_rate": counts["pass"] / len(results) if results else 0.0,
        "supported_ops": sorted(op for op, v in table.items() if v["supported"]),
        "supported_cases": sup_total,
        "supported_passed": sup_pass,
        "supported_rate": sup_pass / sup_total if sup_total else 0.0,
        "per_op": table,
        "failures": [r for r in results if r["status"] in ("wrong", "error", "crash")],
    }


def print_summary(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    console = Console()
    t = Table(title="ONNX node tests through trnsim (functional, fp32) — supported ops")
    for k in ("op", "cases", "pass", "unsupported", "wrong", "error", "crash", "rate"):
        t.add_column(k, justify="left" if k == "op" else "right")
    for op, v in summary["per_op"].items():
        if v["supported"]:
            t.add_row(op, str(v["total"]), str(v["pass"]), str(v["unsupported"]), str(v["wrong"]),
                      str(v["error"]), str(v["crash"]), f"{100 * v['rate']:.0f}%")
    console.print(t)
    from rich.markup import escape
    for f in summary["failures"][:60]:
        console.print(f"[red]{f['status']}[/red] {escape(f['name'])}: {escape(f['detail'])}",
                      highlight=False)
    c = summary["counts"]
    console.print(f"cases {summary['cases']}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    console.print(f"supported set ({summary['supported_set_source']}): "
                  f"{len(summary['supported_ops'])} ops, {summary['supported_cases']} cases, "
                  f"pass rate {100 * summary['supported_rate']:.1f}%; "
                  f"all cases {100 * summary['overall_rate']:.1f}%")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--ops", help="comma-separated op types to run (default: all)")
    p.add_argument("--match", help="regular expression on case names")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    p.add_argument("--json", metavar="PATH", help="write the summary as JSON")
    args = p.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    cases = collect_cases()
    ops = op_map(cases)
    names = list(cases)
    if args.ops:
        wanted = set(args.ops.split(","))
        names = [n for n in names if ops[n].split(":")[0] in wanted]
    if args.match:
        names = [n for n in names if re.search(args.match, n)]
    t0 = time.perf_counter()
    results = run_suite(cases, names, args.jobs, args.timeout, progress=True)
    summary = summarize(results, ops, supported_ops_from_trnsim())
    summary["wall_s"] = time.perf_counter() - t0
    print_summary(summary)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**summary, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
