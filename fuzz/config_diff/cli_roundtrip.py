"""The CLI's saved programs and timing-only runs against the plain run of the same model, per
configuration: `trnsim run M.onnx --json` vs `trnsim compile M.onnx -o P.tpg` + `trnsim run
P.tpg --json` vs `trnsim run M.onnx --timing-only --json`. The three must all run, or all be
refused, and report the same time_s, and the functional two the same printed output summary.

    PYTHONPATH=python .venv/bin/python fuzz/config_diff/cli_roundtrip.py [--configs trn2/fp32/c0,...] DIR_OR_FILE...
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TRNSIM = str(ROOT / "build" / "src" / "trnsim")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import parse  # noqa: E402


def cli(args, timeout):
    try:
        r = subprocess.run(["nice", "-n", "10", TRNSIM, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "TIMEOUT", None, ""
    if r.returncode < 0 or r.returncode > 2 and "error" not in r.stderr.lower():
        return "CRASH", None, f"rc {r.returncode}: {r.stderr.strip()[-200:]}"
    if r.returncode != 0:
        return "REFUSED", None, r.stderr.strip().splitlines()[-1][:200] if r.stderr.strip() else f"rc {r.returncode}"
    return "OK", r.stdout, ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--configs", default="trn1/fp32/c1,trn2/fp32/c0,trn2/fp32/c3/l1,inf2/bf16/c0,trn3/fp8/c0")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    files = sorted(f for p in map(Path, a.paths) for f in ([p] if p.is_file() else p.iterdir()) if f.suffix == ".onnx")
    counts = collections.Counter()
    with tempfile.TemporaryDirectory() as td:
        for f in files:
            for spec in a.configs.split(","):
                c = parse(spec)
                opts = ["--chip", c["chip"], "--dtype", c["dtype"], "--cores", str(c["cores"]), "--lnc", str(c["lnc"])]
                tpg = str(Path(td) / "p.tpg")
                s1, o1, e1 = cli(["run", str(f), "--json", *opts], a.timeout)
                s2, _, e2 = cli(["compile", str(f), "-o", tpg, *opts], a.timeout)
                s3, o3, e3 = ("SKIP", None, "") if s2 != "OK" else cli(["run", tpg, "--json"], a.timeout)
                s4, o4, e4 = cli(["run", str(f), "--json", "--timing-only", *opts], a.timeout)
                st, detail = "PASS", ""
                if "CRASH" in (s1, s2, s3, s4) or "TIMEOUT" in (s1, s2, s3, s4):
                    st = "CRASH" if "CRASH" in (s1, s2, s3, s4) else "TIMEOUT"
                    detail = f"run {s1} {e1} | compile {s2} {e2} | run tpg {s3} {e3} | timing {s4} {e4}"
                elif s1 != "OK" and s2 != "OK" and s4 != "OK":
                    st, detail = "REFUSED", e1
                elif s1 != "OK" or s2 != "OK" or s3 != "OK" or s4 != "OK":
                    st = "WRONG"
                    detail = f"run {s1} {e1} | compile {s2} {e2} | run tpg {s3} {e3} | timing {s4} {e4}"
                else:
                    j1, j3, j4 = json.loads(o1), json.loads(o3), json.loads(o4)
                    t1, t3, t4 = j1.get("time_s"), j3.get("time_s"), j4.get("time_s")
                    if not (t1 == t3 == t4):
                        st, detail = "WRONG", f"time_s run {t1} / saved {t3} / timing-only {t4}"
                    elif j1.get("outputs") != j3.get("outputs"):
                        st, detail = "WRONG", f"outputs differ: {str(j1.get('outputs'))[:150]} vs {str(j3.get('outputs'))[:150]}"
                counts[st] += 1
                if st != "PASS":
                    print(f"{st:8s} {f.name} [{spec}]: {detail[:400]}", flush=True)
    print(f"cli_roundtrip: {len(files)} models x {len(a.configs.split(','))} configurations: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
