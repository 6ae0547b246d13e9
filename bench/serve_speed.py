"""Speed of the serving simulator against the issue-13 targets.

Replays the Azure LLM inference conversation trace (data/azure-llm-inference-2023, cycled to
reach the request count) on R replicas of a deployment with `trnsim serve --json` and reports
the wall time, CPU time and peak memory of the process, with the simulated figures that show
it did the work (iterations, simulated duration, requests completed).

Targets: 100,000 requests on 8 replicas in < 60 s of wall time; 1,000,000 in < 10 min with
< 2 GB of memory (published LLM serving simulators need about 4 ms of wall time per request).

    python bench/serve_speed.py [--requests 100000 1000000] [--replicas 8]
        [--model llama-3.1-8b --system trn2.48xlarge --tp 4] [--binary PATH] [--json] [--check]

The first run of a deployment measures its node costs in the timing mode and caches them on
disk (~/.cache/trnsim); a warm-up run of 100 requests does that before the timed runs. The load
average is printed beside the figures: on a shared machine wall time moves with it.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv"
TARGETS = {100_000: (60.0, None), 1_000_000: (600.0, 2.0e9)}  # wall s, peak bytes


def find_binary(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    p = ROOT / "build/src/trnsim"
    if not p.exists():
        sys.exit("build/src/trnsim not found; build it with `make install` or pass --binary PATH")
    return p


def run(binary: Path, args: argparse.Namespace, requests: int) -> dict:
    cmd = [str(binary), "serve", "--model", args.model, "--system", args.system, "--tp", str(args.tp),
           "--replicas", str(args.replicas), "--trace", str(TRACE), "--requests", str(requests), "--json"]
    # A child per run, so its peak RSS is its own (RUSAGE_CHILDREN keeps the largest child).
    code = ("import resource, subprocess, sys, time, json\n"
            "t = time.perf_counter(); p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "wall = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(json.dumps({'rc': p.returncode, 'wall_s': wall, 'cpu_s': u.ru_utime + u.ru_stime,\n"
            "  'peak_bytes': u.ru_maxrss * 1024, 'stdout': p.stdout, 'stderr': p.stderr}))\n")
    probe = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True, check=True)
    m = json.loads(probe.stdout)
    if m["rc"] != 0:
        sys.exit(f"trnsim serve failed ({m['rc']}): {m['stderr'].strip()}")
    r = json.loads(m["stdout"])
    wall_target, mem_target = TARGETS.get(requests, (None, None))
    return {"kind": "serve", "bench": "serve_speed", "requests": requests, "replicas": args.replicas,
            "model": args.model, "system": args.system, "tp": args.tp,
            "wall_s": m["wall_s"], "cpu_s": m["cpu_s"], "peak_bytes": m["peak_bytes"],
            "wall_per_request_ms": 1e3 * m["wall_s"] / requests,
            "iterations": r["iterations"], "time_s": r["time_s"], "completed": r["requests"],
            "iterations_per_cpu_s": r["iterations"] / max(m["cpu_s"], 1e-9),
            "target_wall_s": wall_target, "target_peak_bytes": mem_target,
            "meets_target": (wall_target is None or m["wall_s"] < wall_target)
                            and (mem_target is None or m["peak_bytes"] < mem_target),
            "load_average": os.getloadavg()[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, nargs="+", default=[100_000])
    ap.add_argument("--replicas", type=int, default=8)
    ap.add_argument("--model", default="llama-3.1-8b")
    ap.add_argument("--system", default="trn2.48xlarge")
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--binary")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", action="store_true", help="exit 1 when a run misses its target")
    args = ap.parse_args()
    binary = find_binary(args.binary)
    run(binary, args, 100)  # warm the node-cost cache
    rows = [run(binary, args, n) for n in args.requests]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'requests':>10} {'wall(s)':>9} {'cpu(s)':>9} {'peak(MB)':>9} {'ms/req':>7} {'iterations':>11} "
              f"{'sim(h)':>7} {'target':>14} {'ok':>3}   load {rows[-1]['load_average']:.1f}")
        for r in rows:
            target = f"<{r['target_wall_s']:.0f}s" if r["target_wall_s"] else "-"
            if r["target_peak_bytes"]:
                target += f",<{r['target_peak_bytes'] / 1e9:.0f}GB"
            print(f"{r['requests']:>10} {r['wall_s']:>9.1f} {r['cpu_s']:>9.1f} {r['peak_bytes'] / 1e6:>9.0f} "
                  f"{r['wall_per_request_ms']:>7.3f} {r['iterations']:>11} {r['time_s'] / 3600:>7.2f} {target:>14} "
                  f"{'yes' if r['meets_target'] else 'NO':>3}")
    return 1 if args.check and not all(r["meets_target"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
