"""all-MiniLM-L6-v2 (batch 1, seq 128): trnsim compile time and functional-simulation wall time
of one forward pass vs onnxruntime's CPU time on the same ONNX model, side by side.

Issue 4's targets: compile under 10 s; functional simulation within 20x of onnxruntime CPU.
Both run on this machine with their default thread counts (onnxruntime: all cores; also shown
with one thread, and as process CPU time over all threads; the simulator is single-threaded);
times are medians over --repeat runs after one warm-up run. The ratio is wall time against
onnxruntime on all cores, the strictest reading. The machine should
be otherwise idle: a loaded machine slows onnxruntime's threads more than the simulator.

    PYTHONPATH=python .venv/bin/python bench/minilm_vs_onnxruntime.py [--dtype bf16] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import trnsim  # noqa: E402
from trnsim import models  # noqa: E402

COMPILE_TARGET_S = 10.0
RATIO_TARGET = 20.0


def _median_time(fn, repeat: int) -> float:
    return _median_times(fn, repeat)[0]


def _median_times(fn, repeat: int) -> tuple[float, float]:
    """Median wall time and median process CPU time (all threads) of one call."""
    fn()  # warm-up
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--chip", default="trn2")
    p.add_argument("--dtype", default="bf16", choices=["fp32", "bf16", "fp8"])
    p.add_argument("--repeat", type=int, default=3, help="simulation runs (onnxruntime: 10x)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    import onnxruntime as ort
    if not hasattr(trnsim, "compile_onnx"):
        print("trnsim.compile_onnx is missing: the graph compiler is not built into trnsim._core",
              file=sys.stderr)
        return 2

    tokenizer, embedder = models.minilm_embedder()
    sentence = ["Benchmarks compare the simulator's wall time with onnxruntime on the same model."]
    ids, mask, tt = models.minilm_inputs(tokenizer, sentence, seq_len=args.seq)
    feeds = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": tt.numpy()}
    with tempfile.TemporaryDirectory() as tmp:
        path = models.export(embedder, (ids, mask, tt), os.path.join(tmp, "minilm.onnx"),
                             list(feeds), ["embedding"])
        t0 = time.perf_counter()
        cm = trnsim.compile_onnx(path, chip=args.chip, dtype=args.dtype, mode="functional")
        compile_s = time.perf_counter() - t0
        sim_s, sim_cpu_s = _median_times(lambda: cm.run(feeds), args.repeat)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        ort_s, ort_cpu_s = _median_times(lambda: sess.run(None, feeds), 10 * args.repeat)
        one = ort.SessionOptions()
        one.intra_op_num_threads = 1
        one.inter_op_num_threads = 1
        sess1 = ort.InferenceSession(path, one, providers=["CPUExecutionProvider"])
        ort1_s = _median_time(lambda: sess1.run(None, feeds), 10 * args.repeat)
        got = np.asarray(cm.run(feeds)["embedding"], dtype=np.float64)
        want = sess.run(None, feeds)[0].astype(np.float64)
    cosine = float((got * want).sum() / (np.linalg.norm(got) * np.linalg.norm(want)))
    result = {
        "model": "all-MiniLM-L6-v2", "batch": 1, "seq": args.seq, "chip": args.chip,
        "dtype": args.dtype, "compile_s": compile_s,
        "compile_time_s_reported": cm.report.get("compile_time_s"),
        "simulate_wall_s": sim_s, "onnxruntime_cpu_s": ort_s, "ratio": sim_s / ort_s,
        "onnxruntime_cpu_1thread_s": ort1_s, "ratio_1thread": sim_s / ort1_s,
        "simulate_process_cpu_s": sim_cpu_s, "onnxruntime_process_cpu_s": ort_cpu_s,
        "ratio_process_cpu": sim_cpu_s / ort_cpu_s if ort_cpu_s > 0 else None,
        "simulated_latency_s": cm.report.get("time_s"), "cosine_vs_onnxruntime": cosine,
        "targets": {"compile_s": COMPILE_TARGET_S, "ratio": RATIO_TARGET},
        "cores": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"all-MiniLM-L6-v2 batch 1 seq {args.seq}, {args.chip} {args.dtype} ({os.cpu_count()} cores)")
        print(f"  compile              {compile_s:8.3f} s   (target < {COMPILE_TARGET_S:g} s)")
        print(f"  functional simulate  {sim_s:8.3f} s   (median of {args.repeat})")
        print(f"  onnxruntime CPU      {ort_s:8.4f} s   (median of {10 * args.repeat})")
        print(f"  ratio sim/ort        {sim_s / ort_s:8.1f} x   (target <= {RATIO_TARGET:g}x)")
        print(f"  onnxruntime 1 thread {ort1_s:8.4f} s   (ratio {sim_s / ort1_s:.1f} x)")
        if ort_cpu_s > 0:
            print(f"  process CPU time     {sim_cpu_s:8.3f} s vs onnxruntime {ort_cpu_s:.4f} s, all threads "
                  f"(ratio {sim_cpu_s / ort_cpu_s:.1f} x)")
        lat = cm.report.get("time_s")
        if isinstance(lat, (int, float)):
            print(f"  simulated latency    {lat * 1e6:8.1f} us on {args.chip}")
        print(f"  cosine vs onnxruntime {cosine:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
