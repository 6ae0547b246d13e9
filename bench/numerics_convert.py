"""Conversion speed of trnsim's numerics against ml_dtypes, measured in the same run.

Runs bench_numerics_convert (Google Benchmark, C++) with --benchmark_format=json, times the
ml_dtypes/numpy conversion of an array built the same way (normal values spread over +-2^20,
2^20 elements), and prints elements per second for both and their ratio. Both sides are
single-threaded, timed in process CPU time (Google Benchmark's default; time.process_time here)
so that other work on the machine does not skew the ratio, and report the median of several
repetitions. ml_dtypes' figure includes allocating its output (that is what `x.astype(...)`
does); trnsim's writes into a preallocated buffer.

    python bench/numerics_convert.py [--binary PATH] [--json] [--repetitions N]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import timeit
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
N = 1 << 20

# Google Benchmark name prefix -> (label, ml_dtypes counterpart or None)
CASES = {
    "BM_Encode16/bf16/": ("fp32 -> bf16", lambda x, c: x.astype(ml_dtypes.bfloat16)),
    "BM_Encode16/fp16/": ("fp32 -> fp16 (numpy)", lambda x, c: x.astype(np.float16)),
    "BM_Encode8/fp8_e4m3/": ("fp32 -> fp8_e4m3", lambda x, c: x.astype(ml_dtypes.float8_e4m3fn)),
    "BM_Encode8/fp8_e5m2/": ("fp32 -> fp8_e5m2", lambda x, c: x.astype(ml_dtypes.float8_e5m2)),
    "BM_Encode8/fp4_e2m1/": ("fp32 -> fp4_e2m1", lambda x, c: x.astype(ml_dtypes.float4_e2m1fn)),
    "BM_Encode16/bf16_stochastic/": ("fp32 -> bf16, stochastic", None),
    "BM_Encode8/fp8_e4m3_stochastic/": ("fp32 -> fp8_e4m3, stochastic", None),
    "BM_Decode16/bf16/": ("bf16 -> fp32", lambda x, c: c["bf16"].astype(np.float32)),
    "BM_Decode8/fp8_e4m3/": ("fp8_e4m3 -> fp32", lambda x, c: c["fp8_e4m3"].astype(np.float32)),
    "BM_Quantize/bf16/": ("quantize bf16 (fp32 -> bf16 -> fp32)",
                          lambda x, c: x.astype(ml_dtypes.bfloat16).astype(np.float32)),
    "BM_Quantize/mxfp8_e4m3/": ("quantize mxfp8_e4m3", None),
}


def find_binary(explicit: str | None) -> Path:
    candidates = [explicit] if explicit else [
        ROOT / "build/bench/bench_numerics_convert",
        shutil.which("bench_numerics_convert"),
    ]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    sys.exit("bench_numerics_convert not found; build it with\n"
             "  cmake --build build --target bench_numerics_convert\nor pass --binary PATH")


def run_trnsim(binary: Path, reps: int) -> dict[str, float]:
    out = subprocess.run([str(binary), "--benchmark_format=json",
                          f"--benchmark_repetitions={reps}",
                          "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rates[b["run_name"].rsplit("/", 1)[0] + "/"] = b["items_per_second"]
    return rates


def make_input(n: int) -> np.ndarray:
    rng = np.random.default_rng(1234)
    return np.ldexp(rng.standard_normal(n), rng.integers(-20, 21, n)).astype(np.float32)


def time_ml_dtypes(fn, x, codes, reps: int) -> float:
    fn(x, codes)  # warm up
    number = 20
    times = timeit.repeat(lambda: fn(x, codes), number=number, repeat=reps,
                          timer=time.process_time)
    return x.size / (sorted(times)[len(times) // 2] / number)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", help="path to bench_numerics_convert")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--repetitions", type=int, default=5)
    args = ap.parse_args()

    trnsim = run_trnsim(find_binary(args.binary), args.repetitions)
    x = make_input(N)
    with np.errstate(all="ignore"):
        codes = {"bf16": x.astype(ml_dtypes.bfloat16),
                 "fp8_e4m3": x.astype(ml_dtypes.float8_e4m3fn)}
    rows = []
    for key, (label, fn) in CASES.items():
        if key not in trnsim:
            continue
        with np.errstate(all="ignore"):
            ref = time_ml_dtypes(fn, x, codes, args.repetitions) if fn else None
        rows.append({"case": label, "elements": N, "trnsim_elems_per_s": trnsim[key],
                     "ml_dtypes_elems_per_s": ref,
                     "ratio": trnsim[key] / ref if ref else None})
    if args.json:
        print(json.dumps({"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
                          "results": rows}, indent=2))
        return
    g = lambda v: f"{v / 1e9:8.3f}" if v else "       -"
    print(f"{'conversion (2^20 elements)':40s} {'trnsim G/s':>10s} {'ml_dtypes G/s':>13s} "
          f"{'ratio':>7s}")
    for r in rows:
        ratio = f"{r['ratio']:6.1f}x" if r["ratio"] else "      -"
        print(f"{r['case']:40s} {g(r['trnsim_elems_per_s']):>10s} "
              f"{g(r['ml_dtypes_elems_per_s']):>13s} {ratio:>7s}")


if __name__ == "__main__":
    main()
