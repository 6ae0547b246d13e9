"""`trnsim convert` (quantised / MX / 4:16-sparse programs) across core counts: the accuracy
report (cosine, max abs error vs the fp32 reference on seeded inputs) must not depend on how
many cores a node is split over, and must not be gross (NaN, cosine < 0.9). Then the saved
program is run (`trnsim run P.tpg --json`) and must run.

    PYTHONPATH=python .venv/bin/python fuzz/config_diff/convert_diff.py [--modes=mxfp8,int8w,...] DIR_OR_FILE...
"""
from __future__ import annotations

import collections
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TRNSIM = str(ROOT / "build" / "src" / "trnsim")
MODES = [  # (name, convert options, core counts)
    ("mxfp8", ["--quantize", "mxfp8", "--activations", "mxfp8", "--chip", "trn3"], ["1", "3", "0"]),
    ("mxfp4", ["--quantize", "mxfp4", "--chip", "trn3"], ["1", "0"]),
    ("int8a", ["--quantize", "int8", "--activations", "--chip", "trn2"], ["1", "0"]),
    ("fp8", ["--quantize", "fp8", "--chip", "trn1"], ["1", "0"]),
    ("sparse", ["--sparsity", "4:16", "--dtype", "bf16", "--chip", "trn2"], ["1", "3", "0"]),
    ("int8w", ["--quantize", "int8", "--chip", "trn2"], ["1", "0"]),
]
MIN_COSINE = {"int8w": 0.99, "int8a": 0.95}  # per-channel int8 weights: far above 0.99 on these models


def sh(args, timeout=60):
    try:
        r = subprocess.run(["nice", "-n", "10", TRNSIM, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "TIMEOUT", ""
    if r.returncode < 0:
        return "CRASH", r.stderr[-300:]
    if r.returncode:
        return "REFUSED", (r.stderr.strip().splitlines() or [""])[-1][:200]
    return "OK", r.stdout


def main() -> int:
    args = sys.argv[1:]
    modes = MODES
    if args and args[0].startswith("--modes="):
        want = args.pop(0).split("=", 1)[1].split(",")
        modes = [m for m in MODES if m[0] in want]
    files = sorted(f for p in map(Path, args) for f in ([p] if p.is_file() else p.iterdir()) if f.suffix == ".onnx")
    counts = collections.Counter()
    with tempfile.TemporaryDirectory() as td:
        for f in files:
            for name, opts, cores in modes:
                acc, sts = {}, {}
                for c in cores:
                    tpg = f"{td}/p.tpg"
                    st, out = sh(["convert", str(f), "-o", tpg, *opts, "--cores", c, "--json"])
                    if st == "OK":
                        acc[c] = json.loads(out).get("accuracy")
                        st2, out2 = sh(["run", tpg, "--json"])
                        if st2 != "OK":
                            st, out = f"RUN-{st2}", out2
                    sts[c] = (st, out if st != "OK" else "")
                kinds = {s for s, _ in sts.values()}
                status, detail = "PASS", ""
                if any(k.endswith("CRASH") or k.endswith("TIMEOUT") for k in kinds):
                    status, detail = "CRASH", str(sts)
                elif len(kinds) > 1 or any(k.startswith("RUN-") for k in kinds):
                    status, detail = "WRONG", f"differs by cores: {sts}"
                elif kinds == {"REFUSED"}:
                    status, detail = "REFUSED", next(iter(sts.values()))[1]
                else:
                    vals = list(acc.values())
                    for o, a in (vals[0] or {}).items():
                        cs = a.get("cosine", 1.0)
                        if not (isinstance(cs, float) and math.isfinite(cs)) or cs < MIN_COSINE.get(name, 0.9):
                            status, detail = "WRONG", f"{o}: gross: {a}"
                    def num(d, k, dflt):
                        v = d.get(k, dflt)
                        return float("nan") if v is None else float(v)

                    def differ(x, y, tol):
                        return not (math.isnan(x) and math.isnan(y)) and not abs(x - y) <= tol

                    for c, v in acc.items():
                        for o, a in (v or {}).items():
                            b = (vals[0] or {}).get(o, {})
                            e1, e0 = num(a, "max_abs_error", 0), num(b, "max_abs_error", 0)
                            if differ(e1, e0, 1e-3 * max(1.0, abs(e0) if math.isfinite(e0) else 1.0)) \
                                    or differ(num(a, "cosine", 1), num(b, "cosine", 1), 1e-4):
                                status, detail = "WRONG", f"{o}: cores {c} {a} vs cores {cores[0]} {b}"
                counts[status] += 1
                if status != "PASS":
                    print(f"{status:8s} {f.name} [{name}]: {detail[:400]}", flush=True)
    print(f"convert_diff: {len(files)} models x {len(modes)} modes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
