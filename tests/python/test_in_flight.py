"""`trnsim run --in-flight N` and CompiledModel.under_load: a model under a closed-loop load.

A bf16 MatMul [256, 512] x [512, 512] timing-only on inf2 with one logical core per copy (two
copies fit). Reference: the closed form with the run's own execution time T (the report's
time_s): N requests over C = 2 copies, ceil(N / C) per busiest copy, p99 = ceil(N / C) T,
p50 = floor(N / C) T unless more than half the copies hold the extra request, throughput
min(N, C) x batch / T (exact to 1e-12 relative). Each request also crosses the host link: x in
and y out at 4 bytes an element over inf2's 31.5 GB/s plus the 1.3 us DMA fixed cost per tensor
(configs/chips/inf2.yaml), which a copy pays when it holds one request: its cycle is
max(T, (T + h) / q, busy h). Bad values: one line, exit code 2.
"""
from __future__ import annotations

import json
import math
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import trnsim
from cli_path import trnsim_cli

M, K, N = 256, 512, 512


def _cli(*args):
    return subprocess.run([trnsim_cli(), *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    w = numpy_helper.from_array(np.zeros((K, N), np.float32), "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [M, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [M, N])], [w])
    path = tmp_path_factory.mktemp("inflight") / "mm.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


HOST_S = (M * K + M * N) * 4 / 31.5e9 + 2 * 1.3e-6  # x in, y out over inf2's host link


def _closed_form(t, n, copies, batch, h=HOST_S):
    busy = min(n, copies)
    lo, extra = divmod(n, busy)
    cycle = lambda q: max(t, (t + h) / q, busy * h)  # noqa: E731
    short_rate, long_rate = (busy - extra) / cycle(lo), (extra / cycle(lo + 1) if extra else 0.0)
    share = short_rate / (short_rate + long_rate)
    return {"p50_latency_s": lo * cycle(lo) if share >= 0.5 else (lo + 1) * cycle(lo + 1),
            "p99_latency_s": lo * cycle(lo) if share >= 0.99 else (lo + 1) * cycle(lo + 1),
            "mean_latency_s": n / (short_rate + long_rate), "inferences_per_s": (short_rate + long_rate) * batch,
            "host_io_s": h}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_cli_load_matches_closed_form(model, n):
    r = _cli("run", model, "--chip", "inf2", "--dtype", "bf16", "--timing-only", "--cores", 1, "--in-flight", n, "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    load, t = rep["load"], rep["time_s"]
    assert load["exec_time_s"] == t and load["copy_slots"] == 2 and load["in_flight"] == n
    for k, v in _closed_form(t, n, 2, M).items():
        assert load[k] == pytest.approx(v, rel=1e-12), k


def test_cli_text_reports_the_load(model):
    r = _cli("run", model, "--chip", "inf2", "--dtype", "bf16", "--timing-only", "--cores", 1, "--in-flight", 4)
    assert r.returncode == 0, r.stderr
    assert "4 in flight on 2 of 2 model copies" in r.stdout


def test_no_load_without_the_option(model):
    r = _cli("run", model, "--chip", "inf2", "--timing-only", "--json")
    assert r.returncode == 0 and "load" not in json.loads(r.stdout)


@pytest.mark.parametrize("args, words", [
    (("--timing-only", "--in-flight", 0), "--in-flight 0: expected a positive count"),
    (("--timing-only", "--in-flight", -2), "--in-flight -2: expected a positive count"),
    (("--timing-only", "--in-flight", "two"), "--in-flight"),
    (("--in-flight", 2, "--check"), "--check with --in-flight"),
    (("--timing-only", "--in-flight", 2, "--tp", 2, "--system", "trn1.32xlarge"), "--in-flight with --tp"),
])
def test_cli_errors_are_one_line(model, args, words):
    r = _cli("run", model, "--chip", "inf2", *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trnsim: error:") and words in lines[0], r.stderr


def test_saved_program_is_refused(model, tmp_path):
    tpg = tmp_path / "mm.tpg"
    assert _cli("compile", model, "--chip", "inf2", "-o", tpg).returncode == 0
    r = _cli("run", tpg, "--timing-only", "--in-flight", 2)
    assert r.returncode == 2 and "saved program" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_python_under_load_matches_the_cli(model):
    m = trnsim.compile_onnx(str(model), chip="inf2", dtype="bf16", mode="timing", cores=1)
    m.run({})
    t = m.report["time_s"]
    load = m.under_load(3)
    for k, v in _closed_form(t, 3, 2, M).items():
        assert load[k] == pytest.approx(v, rel=1e-12), k
    r = _cli("run", model, "--chip", "inf2", "--dtype", "bf16", "--timing-only", "--cores", 1, "--in-flight", 3, "--json")
    assert json.loads(r.stdout)["load"] == pytest.approx(load)
    with pytest.raises(trnsim.ConfigError, match="--in-flight 0"):
        m.under_load(0)
    with pytest.raises(trnsim.ConfigError, match="positive integer"):
        m.under_load(1.5)
