"""Logical NeuronCores (--lnc) and timing-only memory (issue 10, items 5 and 6).

LNC: a bf16 MatMul [1024, 2048] x [2048, 2048] on one logical core of trn2. At LNC=2 the
logical core is two physical cores and the node's work splits over them: the TensorE work is
the same (busy time summed over cores equal), the latency is half of LNC=1's within fill and
drain (closed form 1/2, tolerance [0.5, 0.6]), and never below the closed-form floor of
2MKN FLOPs at two cores' peak (128 x 128 x 2 FLOPs per cycle at the chip's TensorE clock).
trn2's default is LNC=2; trn1 takes only 1. The tensor-parallel path puts one rank per logical
core: TP 64 on trn2.48xlarge is its 64 logical cores on 16 chips, TP 32 on trn1.32xlarge 32
NeuronCores on 16 chips; one more rank is a ConfigError naming the count.

Memory: a timing-only run of a model whose weights are in an external-data file of 1 GiB
(sparse: no disk) reads none of them: peak resident memory stays far below the weights.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import trnsim
from cli_path import trnsim_cli

M, K, N = 1024, 2048, 2048


def _cli(*args):
    return subprocess.run([trnsim_cli(), *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    w = numpy_helper.from_array(np.zeros((K, N), np.float32), "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [M, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [M, N])], [w])
    path = tmp_path_factory.mktemp("lnc") / "mm.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


# The peak RSS of a process forked from pytest would include pytest's own pages (Linux carries
# the parent's high-water mark across fork and exec): a fresh Python forks it and reports its
# wait4 peak instead.
_MEASURE = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n"
            "_, st, ru = os.wait4(pid, 0)\nsys.stderr.write(f'\\nRSS_KB={ru.ru_maxrss}\\n')\nsys.exit(os.waitstatus_to_exitcode(st))\n")


def _run_measured(cmd):
    p = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True)
    rss = int(p.stderr.rsplit("RSS_KB=", 1)[1].split()[0])
    return p.stdout, p.stderr, p.returncode, rss


def _run(path, *extra):
    p = _cli("run", path, "--chip", "trn2", "--dtype", "bf16", "--timing-only", "--json", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_lnc2_splits_a_matmul_over_two_physical_cores(matmul):
    one = _run(matmul, "--cores", "1", "--lnc", "1")
    two = _run(matmul, "--cores", "1", "--lnc", "2")
    default = _run(matmul, "--cores", "1")
    assert (one["lnc"], two["lnc"], default["lnc"]) == (1, 2, 2) and two["logical_cores"] == 1
    assert default["time_s"] == two["time_s"]  # trn2 runs at LNC=2 by default
    # The same TensorE work, split over two cores (A's transposes, also on TensorE, follow the
    # split's row tiles: within 1%).
    assert two["engines"]["TensorE"]["busy_s"] == pytest.approx(one["engines"]["TensorE"]["busy_s"], rel=1e-2)
    ratio = two["time_s"] / one["time_s"]
    assert 0.5 <= ratio <= 0.6, ratio
    peak_per_core = 128 * 128 * 2 * 2.4e9  # trn2 TensorE: 128 x 128 PE array at 2.4 GHz (HARDWARE.md)
    floor = 2 * M * K * N / (2 * peak_per_core)
    assert floor <= two["time_s"] <= 1.8 * floor, (two["time_s"], floor)


def test_lnc_python_api_matches_cli(matmul):
    cm = trnsim.compile_onnx(str(matmul), chip="trn2", dtype="bf16", mode="timing", cores=1, lnc=1)
    cm.run({"x": np.zeros((M, K), np.float32)})
    assert cm.report["time_s"] == _run(matmul, "--cores", "1", "--lnc", "1")["time_s"]


def test_lnc_errors(matmul):
    p = _cli("run", matmul, "--chip", "trn1", "--timing-only", "--lnc", "2")
    assert p.returncode == 2 and "--lnc 2" in p.stderr and "only 1" in p.stderr, p.stderr
    p = _cli("run", matmul, "--chip", "trn2", "--timing-only", "--cores", "5")
    assert p.returncode == 2 and "4 logical NeuronCores at lnc 2" in p.stderr, p.stderr


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    """x[4, 256] -> MatMul [256, 512] -> Relu -> MatMul [512, 256]: column then row parallel."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((256, 512)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((512, 256)).astype(np.float32), "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 256])], [w1, w2])
    path = tmp_path_factory.mktemp("tp") / "mlp.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize("system,tp,lnc,chips", [("trn2.48xlarge", 64, 2, 16), ("trn1.32xlarge", 32, 1, 16),
                                                 ("trn2.48xlarge", 4, 2, 1), ("trn2.48xlarge", 8, 1, 1)])
def test_tp_places_one_rank_per_logical_core(mlp, system, tp, lnc, chips):
    _, r = trnsim.run_tensor_parallel(str(mlp), system=system, tp=tp, mode="timing")
    if system.startswith("trn2") and tp == 8:
        _, r = trnsim.run_tensor_parallel(str(mlp), system=system, tp=tp, mode="timing", lnc=1)
    assert (r["tp"], r["lnc"], r["chips"]) == (tp, lnc, chips)
    assert len(r["all_reduces"]) == 1


def test_tp_beyond_the_logical_cores_is_refused(mlp):
    p = _cli("run", mlp, "--system", "trn2.48xlarge", "--tp", "128", "--timing-only")
    assert p.returncode == 2 and "128 logical NeuronCores" in p.stderr and "has 64" in p.stderr, p.stderr
    p = _cli("run", mlp, "--system", "trn1.32xlarge", "--tp", "64", "--timing-only")
    assert p.returncode == 2 and "has 32" in p.stderr, p.stderr


def test_timing_only_reads_no_weights(tmp_path):
    """A [1024, 262144] fp32 weight (1 GiB) in a sparse external-data file: the timing-only
    run's peak RSS stays under 300 MB (the weights are never read), and the latency is that of
    the same model with the weight given as a graph input (shapes only)."""
    k, n = 1024, 262144
    data = tmp_path / "w.bin"
    with open(data, "wb") as f:
        f.truncate(k * n * 4)
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[k, n])
    w.data_location = TensorProto.EXTERNAL
    for key, v in (("location", "w.bin"), ("offset", "0"), ("length", str(k * n * 4))):
        e = w.external_data.add()
        e.key, e.value = key, v
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "big", [x], [y], [w])
    path = tmp_path / "big.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    out, err, code, rss_kb = _run_measured([trnsim_cli(), "run", str(path), "--chip", "trn2", "--dtype", "bf16", "--timing-only", "--json"])
    assert code == 0, err
    assert rss_kb < 300_000, f"peak RSS {rss_kb} KB"  # the weights alone are 1 GiB
    assert json.loads(out)["time_s"] > 0


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
