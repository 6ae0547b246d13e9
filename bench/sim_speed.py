"""Simulator speed against the issue-3 targets, from bench_sim_throughput (Google Benchmark).

  timing-only   simulated instructions per second of wall time (target >= 5e6): the
                calibration matmul ([4096, 8192] @ [8192, 8192] bf16 on trn1, ~39k
                instructions) with and without instruction records, and a Vector/Scalar/GpSimd mix;
  functional    the optimised matmul kernel run with real data against the host's own
                cblas_sgemm of the same size, the two timed back to back in the same benchmark
                iteration (target: trnsim >= 0.30 x sgemm) for 1024^3 and 2048^3, fp32 and bf16
                operands (fp32 PSUM and result in every case).

Each figure is the median over --repetitions runs, interleaved in random order (the ratio is
taken per run, so both sides of one ratio saw the same machine load). Both sides are wall-clock: the sgemm peer uses every BLAS
thread; trnsim runs its tile sgemms on one BLAS thread (src/trnsim/core/run.cpp). The load
average is printed with the figures: on a shared machine they move with it.

    python bench/sim_speed.py [--binary PATH] [--repetitions N] [--min-time S] [--json] [--check]

--check exits 1 when a figure misses its target.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTR_TARGET = 5e6
RATIO_TARGET = 0.30
DTYPES = {"0": "fp32", "1": "bf16"}  # numerics::DType values used as benchmark arguments


def find_binary(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    for p in (ROOT / "build/bench/bench_sim_throughput",):
        if p.exists():
            return p
    sys.exit("bench_sim_throughput not found; build it with\n"
             "  cmake --build build --target bench_sim_throughput\nor pass --binary PATH")


def run_bench(binary: Path, reps: int, min_time: float) -> list[dict]:
    # Repetitions interleaved in random order, so a burst of load from elsewhere on the host
    # spreads over the cases instead of sinking the one that happened to be running.
    cmd = [str(binary), "--benchmark_format=json", f"--benchmark_repetitions={reps}",
           f"--benchmark_min_time={min_time}", "--benchmark_enable_random_interleaving=true"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [b for b in json.loads(out)["benchmarks"] if b.get("run_type", "iteration") == "iteration"]


def summarise(rows: list[dict]) -> dict:
    groups: dict[str, list[dict]] = {}
    for b in rows:
        groups.setdefault(b["run_name"] if "run_name" in b else b["name"], []).append(b)
    timing, functional = [], []
    for name, runs in groups.items():
        med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731
        if name.startswith("BM_TimingOnly"):
            label = {"BM_TimingOnlyMatmul/0": "calibration matmul, no records",
                     "BM_TimingOnlyMatmul/1": "calibration matmul, with records",
                     "BM_TimingOnlyMixed": "vector/scalar/gpsimd mix"}.get(name.split("/real_time")[0], name)
            v = med("instr_per_s")
            timing.append({"case": label, "instr_per_s": v, "target": INSTR_TARGET, "ok": v >= INSTR_TARGET,
                           "runs": len(runs)})
        elif name.startswith("BM_FunctionalMatmulVsBlas/"):
            _, n, dt = name.split("/")[:3]
            v = med("ratio")
            functional.append({"case": f"{n}^3 {DTYPES.get(dt, dt)}", "trnsim_gflops": med("sim_GFLOPS"),
                               "sgemm_gflops": med("blas_GFLOPS"), "ratio": v,
                               "ratio_min": min(r["ratio"] for r in runs), "target": RATIO_TARGET,
                               "ok": v >= RATIO_TARGET, "runs": len(runs)})
    order = ["calibration matmul, no records", "calibration matmul, with records", "vector/scalar/gpsimd mix"]
    timing.sort(key=lambda r: order.index(r["case"]) if r["case"] in order else len(order))
    functional.sort(key=lambda r: (int(r["case"].split("^")[0]), r["case"]))
    return {"timing_only": timing, "functional_matmul": functional}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", help="path to bench_sim_throughput")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds per benchmark run (Google Benchmark)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--check", action="store_true", help="exit 1 when a figure misses its target")
    args = ap.parse_args()

    load_before = os.getloadavg()
    t0 = time.time()
    rows = run_bench(find_binary(args.binary), args.repetitions, args.min_time)
    res = summarise(rows)
    res["machine"] = {"cpus": os.cpu_count(), "loadavg_before": list(load_before),
                      "loadavg_after": list(os.getloadavg()), "seconds": round(time.time() - t0, 1)}
    ok = all(r["ok"] for r in res["timing_only"] + res["functional_matmul"])
    res["all_targets_met"] = ok
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        m = res["machine"]
        print(f"host: {m['cpus']} CPUs, load average (1/5/15 min) before "
              f"{'/'.join(f'{x:.2f}' for x in m['loadavg_before'])}, after "
              f"{'/'.join(f'{x:.2f}' for x in m['loadavg_after'])}; median of {args.repetitions} runs")
        print(f"\n{'timing-only':36} {'instr/s (wall)':>15} {'target':>8}")
        for r in res["timing_only"]:
            print(f"{r['case']:36} {r['instr_per_s']:15.3g} {r['target']:8.0e} {'ok' if r['ok'] else 'MISS'}")
        print(f"\n{'functional matmul':18} {'trnsim GFLOPS':>14} {'sgemm GFLOPS':>13} {'ratio':>6} {'(min)':>6} {'target':>7}")
        for r in res["functional_matmul"]:
            print(f"{r['case']:18} {r['trnsim_gflops']:14.1f} {r['sgemm_gflops']:13.1f} {r['ratio']:6.2f} "
                  f"{r['ratio_min']:6.2f} {r['target']:7.2f} {'ok' if r['ok'] else 'MISS'}")
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
