"""Timing-only compile + simulate of BERT-base (seq 128) on trnsim: the wall time and peak
resident memory of one `trnsim run --timing-only` process, beside onnxruntime's CPU time for one
forward pass of the same ONNX model (issue 10's targets: under 1 s wall and 500 MB resident).
Then a layer of 1 B parameters (a [1, 32768] x [32768, 32768] fp32 MatMul, 4 GiB of weights in
an external-data file, sparse so it takes no disk) run timing-only: its peak resident memory
(target: well under 1 GB; the weights are never read). onnxruntime is not run on it (it would
read the 4 GiB).

    PYTHONPATH=python .venv/bin/python bench/bert_timing.py [--batch 1] [--chip trn1] [--json] [--no-layer]

The model is bench/published_models.py's bert-base-uncased (random weights, the public
architecture), exported once to the calibration cache. trnsim's figure includes loading the
ONNX file, compiling and simulating; onnxruntime's is one run of an already created session
(median of 10 after a warm-up), with all its threads, and separately its session creation.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_models  # noqa: E402
import simulate_row  # noqa: E402

WALL_TARGET_S, RSS_TARGET_MB, LAYER_RSS_TARGET_MB = 1.0, 500.0, 1000.0
LAYER_K = LAYER_N = 32768  # 1.07e9 parameters


# A process forked from this one (onnxruntime loaded) would report this process's pages as its
# own peak (Linux carries the high-water mark across fork and exec): a fresh Python forks
# trnsim and reports the wait4 peak and CPU of that child alone.
_MEASURE = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n"
            "_, st, ru = os.wait4(pid, 0)\n"
            "sys.stderr.write(f'\\nMEASURED {ru.ru_maxrss} {ru.ru_utime + ru.ru_stime}\\n')\n"
            "sys.exit(os.waitstatus_to_exitcode(st))\n")


def trnsim_run(cmd) -> dict:
    """Wall, CPU and peak RSS of one trnsim process."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"trnsim failed: {p.stderr.strip()}")
    peak_kb, cpu = p.stderr.rsplit("MEASURED ", 1)[1].split()[:2]
    rep = json.loads(p.stdout)
    return {"wall_s": wall, "cpu_s": float(cpu), "peak_rss_bytes": int(peak_kb) * 1024, "simulated_time_s": rep["time_s"],
            "compile_time_s": rep["compile_time_s"], "sim_wall_s": rep["sim_wall_s"]}


def bert_cmd(path, chip: str, batch: int) -> list:
    return [simulate_row.trnsim_cmd(), "run", str(path), "--chip", chip, "--dtype", "bf16", "--timing-only",
            "--batch", str(batch), "--cores", "1", "--json"]


def layer_1b(chip: str) -> dict:
    """The 1 B-parameter MatMul layer, its weights in a sparse external-data file."""
    import onnx
    from onnx import TensorProto, helper
    with tempfile.TemporaryDirectory() as d:
        nbytes = LAYER_K * LAYER_N * 4
        with open(Path(d) / "w.bin", "wb") as f:
            f.truncate(nbytes)  # sparse: no disk, reads as zeros
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[LAYER_K, LAYER_N])
        w.data_location = TensorProto.EXTERNAL
        for key, v in (("location", "w.bin"), ("offset", "0"), ("length", str(nbytes))):
            e = w.external_data.add()
            e.key, e.value = key, v
        g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "layer_1b",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, LAYER_K])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, LAYER_N])], [w])
        path = Path(d) / "layer_1b.onnx"
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
        r = trnsim_run([simulate_row.trnsim_cmd(), "run", str(path), "--chip", chip, "--dtype", "bf16", "--timing-only", "--json"])
    r["parameters"] = LAYER_K * LAYER_N
    r["weight_bytes"] = LAYER_K * LAYER_N * 4
    return r


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
    p.add_argument("--no-layer", action="store_true", help="skip the 1 B-parameter layer")
    a = p.parse_args(argv)
    path = published_models.onnx_path("bert-base-uncased")
    t = trnsim_run(bert_cmd(path, a.chip, a.batch))
    o = onnxruntime_run(path, a.batch)
    res = {"kind": "compare", "time_s": t["wall_s"], "model": "bert-base-uncased", "batch": a.batch, "seq": published_models.SEQ,
           "chip": a.chip, "trnsim": t, "onnxruntime": o,
           "meets_wall_target": t["wall_s"] < WALL_TARGET_S, "meets_rss_target": t["peak_rss_bytes"] / 1e6 < RSS_TARGET_MB}
    lay = None if a.no_layer else layer_1b(a.chip)
    if lay:
        res["layer_1b"] = lay
        res["layer_1b"]["meets_rss_target"] = lay["peak_rss_bytes"] / 1e6 < LAYER_RSS_TARGET_MB
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"BERT-base seq {published_models.SEQ} batch {a.batch}, timing-only on {a.chip}")
    print(f"  trnsim run    wall {t['wall_s']:.2f} s (target < {WALL_TARGET_S:g}), CPU {t['cpu_s']:.2f} s, "
          f"peak RSS {t['peak_rss_bytes'] / 1e6:.0f} MB (target < {RSS_TARGET_MB:g}); compile {t['compile_time_s']:.2f} s, "
          f"simulation {t['sim_wall_s']:.2f} s; simulated latency {t['simulated_time_s'] * 1e3:.3f} ms")
    print(f"  onnxruntime   one forward pass {o['run_wall_s'] * 1e3:.1f} ms wall, {o['run_cpu_s'] * 1e3:.1f} ms CPU "
          f"(session creation {o['session_s']:.2f} s)")
    if lay:
        print(f"1 B-parameter layer ([1, {LAYER_K}] x [{LAYER_K}, {LAYER_N}] fp32, {lay['weight_bytes'] / 2**30:.0f} GiB of weights), "
              f"timing-only on {a.chip}")
        print(f"  trnsim run    wall {lay['wall_s']:.2f} s, peak RSS {lay['peak_rss_bytes'] / 1e6:.0f} MB "
              f"(target < {LAYER_RSS_TARGET_MB:g}); simulated latency {lay['simulated_time_s'] * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
