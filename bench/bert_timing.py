"""Timing-only compile + simulate of BERT-base (seq 128) on trnsim: the wall time and peak
resident memory of one `trnsim run --timing-only` process, beside onnxruntime's CPU time for one
forward pass of the same ONNX model (issue 10's targets: under 1 s wall and 500 MB resident).

    PYTHONPATH=python .venv/bin/python bench/bert_timing.py [--batch 1] [--chip trn1] [--json]

The model is bench/published_models.py's bert-base-uncased (random weights, the public
architecture), exported once to the calibration cache. trnsim's figure includes loading the
ONNX file, compiling and simulating; onnxruntime's is one run of an already created session
(median of 10 after a warm-up), with all its threads, and separately its session creation.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_models  # noqa: E402
import simulate_row  # noqa: E402

WALL_TARGET_S, RSS_TARGET_MB = 1.0, 500.0


def trnsim_run(path, chip: str, batch: int) -> dict:
    cmd = [simulate_row.trnsim_cmd(), "run", str(path), "--chip", chip, "--dtype", "bf16", "--timing-only",
           "--batch", str(batch), "--cores", "1", "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"trnsim failed: {r.stderr.strip()}")
    rep = json.loads(r.stdout)
    return {"wall_s": wall, "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "peak_rss_bytes": after.ru_maxrss * 1024, "simulated_time_s": rep["time_s"],
            "compile_time_s": rep["compile_time_s"], "sim_wall_s": rep["sim_wall_s"]}


def onnxruntime_run(path, batch: int) -> dict:
    import numpy as np
    import onnxruntime as ort
    t0 = time.perf_counter()
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    create = time.perf_counter() - t0
    ids = np.random.default_rng(0).integers(0, 1000, (batch, published_models.SEQ)).astype(np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    sess.run(None, feeds)
    walls, cpus = [], []
    for _ in range(10):
        c0, w0 = time.process_time(), time.perf_counter()
        sess.run(None, feeds)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {"session_s": create, "run_wall_s": statistics.median(walls), "run_cpu_s": statistics.median(cpus)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--chip", default="trn1")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    path = published_models.onnx_path("bert-base-uncased")
    t = trnsim_run(path, a.chip, a.batch)
    o = onnxruntime_run(path, a.batch)
    res = {"kind": "compare", "time_s": t["wall_s"], "model": "bert-base-uncased", "batch": a.batch, "seq": published_models.SEQ,
           "chip": a.chip, "trnsim": t, "onnxruntime": o,
           "meets_wall_target": t["wall_s"] < WALL_TARGET_S, "meets_rss_target": t["peak_rss_bytes"] / 1e6 < RSS_TARGET_MB}
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"BERT-base seq {published_models.SEQ} batch {a.batch}, timing-only on {a.chip}")
    print(f"  trnsim run    wall {t['wall_s']:.2f} s (target < {WALL_TARGET_S:g}), CPU {t['cpu_s']:.2f} s, "
          f"peak RSS {t['peak_rss_bytes'] / 1e6:.0f} MB (target < {RSS_TARGET_MB:g}); compile {t['compile_time_s']:.2f} s, "
          f"simulation {t['sim_wall_s']:.2f} s; simulated latency {t['simulated_time_s'] * 1e3:.3f} ms")
    print(f"  onnxruntime   one forward pass {o['run_wall_s'] * 1e3:.1f} ms wall, {o['run_cpu_s'] * 1e3:.1f} ms CPU "
          f"(session creation {o['session_s']:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
