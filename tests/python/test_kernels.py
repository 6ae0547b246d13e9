"""The kernel library through Python, against numpy.

Every library kernel runs in functional mode through ``trnsim.kernel()`` on inputs made here
(seeded numpy, rounded to the kernel's dtype with ml_dtypes so that numpy sees exactly what the
kernel sees) and is compared with a numpy float64 computation. Tolerances, elementwise
|got - want| <= atol + rtol |want|:
  fp32: rtol 1e-5 (atol 1e-6; matmul atol 1e-6 K: fp32 PSUM accumulation grows with K)
  bf16: rtol 1e-2 (atol 2e-2; matmul atol 4e-3 sqrt(K); attention atol 1e-2: P is bf16)
Also: the Python kernel builder, the trace file (valid JSON, one track per engine), the CLI
``--json`` (found through $TRNSIM_BIN, else build/src/trnsim, else PATH) and clear errors.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import trnsim
from cli_path import trnsim_cli

ROOT = Path(__file__).resolve().parents[2]
TOL = {"fp32": (1e-6, 1e-5), "bf16": (2e-2, 1e-2)}
NP_DTYPE = {"fp32": np.float32, "bf16": ml_dtypes.bfloat16}


def rounded(rng: np.random.Generator, shape, dtype: str, lo=-1.0, hi=1.0) -> np.ndarray:
    x = rng.uniform(lo, hi, size=shape).astype(np.float32)
    return x.astype(NP_DTYPE[dtype]).astype(np.float64)


def check(got: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> None:
    assert got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want, atol=atol, rtol=rtol)


# ---- numpy references ------------------------------------------------------------------

def np_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_layernorm(x, g, b, eps=1e-5):
    m = x.mean(axis=1, keepdims=True)
    v = x.var(axis=1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def np_rmsnorm(x, g, eps=1e-6):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * g


def np_attention(q, k, v, causal):
    s = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[2])
    if causal:
        s = s + np.triu(np.full(s.shape[1:], -np.inf), 1)
    return np_softmax(s.reshape(-1, s.shape[2])).reshape(s.shape) @ v


ERF = np.vectorize(math.erf)
ACT = {
    "exp": np.exp, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: 0.5 * x * (1 + ERF(x / math.sqrt(2))), "silu": lambda x: x / (1 + np.exp(-x)),
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "rsqrt": lambda x: 1 / np.sqrt(x), "log": np.log, "square": np.square, "sin": np.sin,
}


# ---- every library kernel against numpy -------------------------------------------------

@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("rows,cols", [(128, 512), (200, 333)])
def test_softmax(dtype, rows, cols):
    x = rounded(np.random.default_rng(1), (rows, cols), dtype, -4, 4)
    r = trnsim.kernel("softmax", chip="trn2", rows=rows, cols=cols, dtype=dtype, inputs={"x": x})
    assert r["mode"] == "functional" and r["ok"]
    atol, rtol = (1e-7, 1e-5) if dtype == "fp32" else (1e-4, 1e-2)
    check(r["outputs"]["y"], np_softmax(x), atol, rtol)


def test_softmax_long_rows_take_the_chunked_path():
    x = rounded(np.random.default_rng(2), (64, 3000), "fp32", -4, 4)
    r = trnsim.kernel("softmax", rows=64, cols=3000, chunk=512, dtype="fp32", inputs={"x": x})
    check(r["outputs"]["y"], np_softmax(x), 1e-7, 1e-5)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_layernorm(dtype):
    rng = np.random.default_rng(3)
    x, g, b = rounded(rng, (130, 768), dtype), rounded(rng, (768,), dtype, 0.5, 1.5), rounded(rng, (768,), dtype)
    r = trnsim.kernel("layernorm", chip="trn1", rows=130, cols=768, dtype=dtype, inputs={"x": x, "gamma": g, "beta": b})
    check(r["outputs"]["y"], np_layernorm(x, g, b), *(TOL[dtype] if dtype == "bf16" else (1e-5, 1e-5)))


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_rmsnorm(dtype):
    rng = np.random.default_rng(4)
    x, g = rounded(rng, (100, 1024), dtype), rounded(rng, (1024,), dtype, 0.5, 1.5)
    r = trnsim.kernel("rmsnorm", rows=100, cols=1024, dtype=dtype, inputs={"x": x, "gamma": g})
    check(r["outputs"]["y"], np_rmsnorm(x, g), *(TOL[dtype] if dtype == "bf16" else (1e-5, 1e-5)))


@pytest.mark.parametrize("func", sorted(ACT))
def test_activation_fp32(func):
    lo, hi = (0.125, 4.0) if func in ("rsqrt", "log") else (-4.0, 4.0)
    x = rounded(np.random.default_rng(5), (130, 256), "fp32", lo, hi)
    r = trnsim.kernel("activation", rows=130, cols=256, func=func, dtype="fp32", inputs={"x": x})
    check(r["outputs"]["y"], ACT[func](x), *TOL["fp32"])


@pytest.mark.parametrize("func", ["gelu", "silu", "exp"])
def test_activation_bf16(func):
    x = rounded(np.random.default_rng(6), (128, 512), "bf16", -4, 4)
    r = trnsim.kernel("activation", chip="trn1", rows=128, cols=512, func=func, dtype="bf16", inputs={"x": x})
    check(r["outputs"]["y"], ACT[func](x), 1e-3, 1e-2)


@pytest.mark.parametrize("method", ["tensor", "dma", "auto"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_transpose_is_exact(method, dtype):
    x = rounded(np.random.default_rng(7), (300, 200), dtype)
    r = trnsim.kernel("transpose", rows=300, cols=200, method=method, dtype=dtype, inputs={"x": x})
    np.testing.assert_array_equal(r["outputs"]["y"], x.T.astype(np.float32))


@pytest.mark.parametrize("dtype,causal", [("fp32", False), ("fp32", True), ("bf16", False), ("bf16", True)])
def test_attention(dtype, causal):
    rng = np.random.default_rng(8)
    q, k, v = (rounded(rng, (2, 300, 64), dtype) for _ in range(3))
    r = trnsim.kernel("attention", heads=2, seq=300, head_dim=64, causal=causal, dtype=dtype,
                      inputs={"q": q, "k": k, "v": v})
    atol, rtol = (2e-5, 1e-4) if dtype == "fp32" else (1e-2, 1e-2)
    check(r["outputs"]["out"], np_attention(q, k, v, causal), atol, rtol)


@pytest.mark.parametrize("name", ["matmul", "matmul_naive"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_matmul(name, dtype):
    rng = np.random.default_rng(9)
    m, kk, n = 256, 384, 512
    lhsT, rhs = rounded(rng, (kk, m), dtype), rounded(rng, (kk, n), dtype)
    r = trnsim.kernel(name, m=m, k=kk, n=n, dtype=dtype, inputs={"lhsT": lhsT, "rhs": rhs})
    atol, rtol = (1e-6 * kk, 1e-5) if dtype == "fp32" else (4e-3 * math.sqrt(kk), 1e-2)
    check(r["outputs"]["result"], lhsT.T @ rhs, atol, rtol)


def test_every_library_kernel_is_covered_here():
    assert {k["name"] for k in trnsim.kernel_list()} == {
        "activation", "attention", "layernorm", "matmul", "matmul_naive", "rmsnorm", "softmax", "transpose"}


# ---- summary, timing mode, the builder -----------------------------------------------------

def test_summary_fields_and_timing_only():
    r = trnsim.kernel("matmul", chip="trn2", m=1024, k=1024, n=1024, dtype="bf16", timing_only=True)
    assert r["mode"] == "timing" and "outputs" not in r and r["check"] == {}
    assert r["time_s"] > 0 and r["instructions"] > 0
    assert r["tensor_flops"] == 2 * 1024**3
    assert r["tflops"] == pytest.approx(r["tensor_flops"] / r["time_s"] / 1e12)
    assert 0 < r["peak_fraction"] <= 1
    assert r["arithmetic_intensity_flop_per_byte"] == pytest.approx(r["tensor_flops"] / r["hbm_bytes"])
    assert {u["engine"] for u in r["units"]} >= {"TensorE", "DMA"}


def test_default_inputs_are_seeded():
    a = trnsim.kernel("softmax", rows=128, cols=128, seed=3)["outputs"]["y"]
    b = trnsim.kernel("softmax", rows=128, cols=128, seed=3)["outputs"]["y"]
    c = trnsim.kernel("softmax", rows=128, cols=128, seed=4)["outputs"]["y"]
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_python_builder_kernel_matches_numpy():
    kb = trnsim.KernelBuilder("trn2")
    a = kb.hbm_input("a", [256, 384], "fp32")
    out = kb.hbm_output("out", [256, 384], "fp32")
    for r0 in (0, 128):
        t = kb.sbuf_tile([128, 384], "fp32")
        s = kb.sbuf_tile([128, 1], "fp32")
        kb.load(t, a[r0:r0 + 128, :])
        kb.activation(t, t, "exp", accum=s)          # row sums on ScalarE
        kb.tensor_scalar(t, t, "divide", s)          # divide each row by its sum
        kb.store(out[r0:r0 + 128, :], t)
    prog = kb.build()
    assert prog.chip == "trn2" and prog.instruction_count == 8
    x = np.random.default_rng(10).uniform(-1, 1, (256, 384)).astype(np.float32)
    res = trnsim.run(prog, inputs={"a": x})
    e = np.exp(x.astype(np.float64))
    check(res["outputs"]["out"], e / e.sum(axis=1, keepdims=True), 1e-7, 1e-5)
    assert res["time_s"] > 0


def test_python_builder_errors_are_clear():
    kb = trnsim.KernelBuilder("trn2")
    with pytest.raises(trnsim.ShapeError, match="128"):
        kb.sbuf_tile([256, 4], "fp32")
    with pytest.raises(trnsim.UnsupportedError, match="exp"):
        kb.activation(kb.sbuf_tile([1, 4], "fp32"), kb.sbuf_tile([1, 4], "fp32"), "expo")


# ---- trace ---------------------------------------------------------------------------------

def test_trace_is_json_with_one_track_per_engine_and_queue(tmp_path):
    path = tmp_path / "sub" / "trace.json"
    r = trnsim.kernel("attention", heads=1, seq=256, head_dim=64, trace=path)
    doc = json.loads(path.read_text())
    names = [e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"]
    assert len(names) == len(set(names))
    assert {"core0 TensorE", "core0 VectorE", "core0 ScalarE", "core0 GpSimd"} <= set(names)
    assert any(n.startswith("core0 dma") for n in names)
    events = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(events) == doc["otherData"]["event_count"] == r["instructions"] == r["trace"]["events"]
    total_us = doc["otherData"]["total_time_s"] * 1e6
    assert all(0 <= e["ts"] and e["ts"] + e["dur"] <= total_us * (1 + 1e-9) for e in events)
    assert {e["args"]["opcode"] for e in events} >= {"matmul", "transpose", "activation.exp", "dma"}


# ---- errors --------------------------------------------------------------------------------

def test_unknown_kernel_lists_the_library():
    with pytest.raises(trnsim.UnsupportedError, match="softmax"):
        trnsim.kernel("conv9d")


def test_shape_limits_are_shape_errors_naming_the_limit():
    with pytest.raises(trnsim.ShapeError, match=r"head-dim 256 is outside \[1, 128\]"):
        trnsim.kernel("attention", head_dim=256)
    with pytest.raises(trnsim.ShapeError, match="multiples of 128"):
        trnsim.kernel("matmul", m=200, k=128, n=512)
    with pytest.raises(trnsim.ShapeError, match="no parameter 'm'"):
        trnsim.kernel("softmax", m=4)
    with pytest.raises(trnsim.ShapeError, match="has 10 values"):
        trnsim.kernel("softmax", rows=4, cols=4, inputs={"x": np.zeros(10)})
    with pytest.raises(trnsim.UnsupportedError, match="dtype fp8_e4m3"):
        trnsim.kernel("softmax", dtype="fp8_e4m3")


# ---- the CLI -------------------------------------------------------------------------------



def test_cli_json_equals_python_api():
    out = subprocess.run([trnsim_cli(), "kernel", "softmax", "--chip", "trn1", "--rows", "256", "--cols", "512", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["time_s"] > 0 and doc["ok"] and doc["mode"] == "functional"
    py = trnsim.kernel("softmax", chip="trn1", rows=256, cols=512)
    py.pop("outputs")
    assert doc == py


def test_cli_errors_exit_2_with_one_line():
    out = subprocess.run([trnsim_cli(), "kernel", "attention", "--head-dim", "256"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("trnsim: error: kernel attention: --head-dim 256")
    out = subprocess.run([trnsim_cli(), "kernel", "softmax", "--m", "4"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--rows --cols" in out.stderr
