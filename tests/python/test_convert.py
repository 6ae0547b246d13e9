"""trnsim convert / trnsim.convert (issue 11 items 4-5): quantised weights and 4:16 sparsity.

Every converted program is run from its saved .tpg and compared with a numpy reference that
quantises the same weights independently (ml_dtypes for fp8/fp4 element rounding, numpy for
int8 and the MX block scales, numpy for 4:16 pruning); MiniLM's int8 target is checked
against onnxruntime's fp32 output. Tolerances are stated per test.
"""
import json
import subprocess

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import trnsim
from cli_path import trnsim_cli

K, N, V = 64, 48, 100


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((K, N)).astype(np.float32), rng.standard_normal((N,)).astype(np.float32),
            rng.standard_normal((V, K)).astype(np.float32))


@pytest.fixture(scope="module")
def matmul_model(tmp_path_factory):
    """y = x @ W + B with x [8, K] an input."""
    W, B, _ = _weights()
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["mm"]), helper.make_node("Add", ["mm", "B"], ["y"])], "mm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, N])],
                          [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    path = tmp_path_factory.mktemp("convert") / "mm.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    x = np.random.default_rng(1).standard_normal((8, K)).astype(np.float32)
    return str(path), x, W, B


@pytest.fixture(scope="module")
def embedding_model(tmp_path_factory):
    """y = table[ids] @ W + B: an embedding table (Gather) and a MatMul weight."""
    W, B, T = _weights()
    g = helper.make_graph([helper.make_node("Gather", ["T", "ids"], ["e"]), helper.make_node("MatMul", ["e", "W"], ["mm"]),
                           helper.make_node("Add", ["mm", "B"], ["y"])], "emb",
                          [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, N])],
                          [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B"), numpy_helper.from_array(T, "T")])
    path = tmp_path_factory.mktemp("convert") / "emb.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    ids = np.random.default_rng(2).integers(0, V, (2, 8)).astype(np.int64)
    return str(path), ids, T, W, B


def _scaled(w, qmax, axis, kind):
    """numpy's symmetric quantise-dequantise: scale max|w|/qmax per tensor (axis None) or per axis."""
    amax = np.abs(w).max() if axis is None else np.abs(w).max(axis=axis, keepdims=True)
    s = np.where(amax > 0, amax / qmax, 1).astype(np.float32)
    x = w.astype(np.float64) / s.astype(np.float64)
    if kind == "int8":
        q = np.clip(np.rint(x), -127, 127)
    else:
        q = x.astype(np.float32).astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    return q, s


def _mx(w, element, axis):
    """OCP MX quantise-dequantise, blocks of 32 along `axis`: scale 2^(floor(log2 amax) - emax)."""
    dt, emax, vmax = (ml_dtypes.float8_e4m3fn, 8, 448.0) if element == "mxfp8" else (ml_dtypes.float4_e2m1fn, 2, 6.0)
    w = np.moveaxis(w, axis, -1)
    b = w.reshape(*w.shape[:-1], -1, 32).astype(np.float64)
    amax = np.abs(b).max(-1, keepdims=True)
    e = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1))) - emax, -127).clip(-127, 127)
    scale = np.exp2(e)
    q = np.clip(b / scale, -vmax, vmax).astype(np.float32).astype(dt).astype(np.float64) * scale
    return np.moveaxis(q.reshape(w.shape), -1, axis)


def _run_tpg(path, inputs):
    return {k: np.asarray(v) for k, v in trnsim.load_compiled(path).run(inputs).items()}


@pytest.mark.parametrize("kind", ["int8", "fp8"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_scaled_weights_match_numpy(matmul_model, tmp_path, kind, per_channel):
    path, x, W, B = matmul_model
    out = str(tmp_path / "q.tpg")
    r = trnsim.convert(path, out, quantize=kind, per_channel=per_channel, calibrate={"x": x})
    q, s = _scaled(W, 127 if kind == "int8" else 448, 0 if per_channel else None, kind)
    want = (x.astype(np.float64) @ q) * s.astype(np.float64) + B  # the chip: MatMul on codes, then the scale
    got = _run_tpg(out, {"x": x})["y"]
    # fp32 accumulation of 64 products against float64: 1e-5 of the output's range
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())
    # the reported accuracy is the converted model's against the fp32 model's
    ref = x.astype(np.float64) @ W + B
    cos = float((got * ref).sum() / np.sqrt((got * got).sum() * (ref * ref).sum()))
    assert r["accuracy"]["y"]["cosine"] == pytest.approx(cos, abs=1e-6)
    scales = N if per_channel else 1
    assert r["weight_bytes"] == K * N + 4 * scales + 4 * N  # codes, fp32 scales, fp32 bias
    assert r["fp32_weight_bytes"] == 4 * (K * N + N)
    assert r["file_bytes"] < r["fp32_file_bytes"]


@pytest.mark.parametrize("kind", ["fp16", "bf16"])
def test_16bit_weights_match_numpy(matmul_model, tmp_path, kind):
    path, x, W, B = matmul_model
    out = str(tmp_path / "h.tpg")
    r = trnsim.convert(path, out, quantize=kind)
    assert "seeded random inputs" in r["inputs"]
    wq = W.astype(np.float16 if kind == "fp16" else ml_dtypes.bfloat16).astype(np.float64)
    want = x.astype(np.float64) @ wq + B
    np.testing.assert_allclose(_run_tpg(out, {"x": x})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    assert r["weight_bytes"] == 2 * K * N + 4 * N


@pytest.mark.parametrize("kind", ["mxfp8", "mxfp4"])
def test_mx_weights_on_trn3_match_numpy(embedding_model, tmp_path, kind):
    path, ids, T, W, B = embedding_model
    out = str(tmp_path / "mx.tpg")
    r = trnsim.convert(path, out, quantize=kind, chip="trn3")
    e = _mx(T, kind, axis=1)[ids]                  # table: blocks along a row
    want = e @ _mx(W, kind, axis=0) + B             # MatMul weight: blocks down K
    np.testing.assert_allclose(_run_tpg(out, {"ids": ids})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    bits = 8 if kind == "mxfp8" else 4
    # codes, E8M0 scales, bias; plus the shape operands of the table's Reshapes that regroup its
    # blocks (11 int64 values, held as fp32); the MatMul's weight is dequantised in its kernel
    assert r["weight_bytes"] == (K * N + V * K) * bits // 8 + (K * N + V * K) // 32 + 4 * N + 4 * 11
    assert r["changes"]["mx_weight_only_matmuls"] == 1 and r["changes"]["mx_matmuls"] == 0 and r["warnings"] == []
    assert 0 < r["min_cosine"] < 1


@pytest.mark.parametrize("kind, act", [("mxfp8", "mxfp8"), ("mxfp4", "mxfp4"), ("mxfp4", "mxfp8")])
def test_mx_activations_on_trn3_run_the_mx_matmul_and_match_numpy(embedding_model, tmp_path, kind, act):
    """Weights and activations both MX: the MatMul input quantised on chip (QuantizeMX, blocks of
    32 along K), TensorE's MX matmul, no dequantise op and no bf16 weight."""
    path, ids, T, W, B = embedding_model
    out = str(tmp_path / "mxa.tpg")
    r = trnsim.convert(path, out, quantize=kind, activations=act, chip="trn3")
    assert r["changes"]["mx_matmuls"] == 1 and r["mx_activations"] == act
    e = _mx(T, kind, axis=1)[ids]                   # the table's rows (weights-only MX, dequantised)
    want = _mx(e, act, axis=-1) @ _mx(W, kind, axis=0) + B
    # fp32 accumulation of 64 products against float64: 1e-5 of the output's range
    np.testing.assert_allclose(_run_tpg(out, {"ids": ids})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    weight_only = trnsim.convert(path, None, quantize=kind, chip="trn3")
    assert weight_only["changes"]["mx_matmuls"] == 0 and weight_only["changes"]["mx_weight_only_matmuls"] == 1


def _matmul_onnx(path, w, m, relu=True):
    k, n = w.shape
    nodes = [helper.make_node("MatMul", ["x", "W"], ["mm" if relu else "y"])] + ([helper.make_node("Relu", ["mm"], ["y"])] if relu else [])
    g = helper.make_graph(nodes, "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [numpy_helper.from_array(w, "W")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("kind, kb, dtype, m, n", [("mxfp8", 256, "bf16", 200, 640), ("mxfp4", 160, "bf16", 200, 640),
                                                  ("mxfp8", 160, "fp32", 200, 640), ("mxfp4", 2304, "bf16", 8, 4096)])
def test_mx_weight_only_dequantised_on_load_matches_numpy(tmp_path, kind, kb, dtype, m, n):
    """Weight-only MX (activations stay in the policy's dtype): the weight block's codes and
    partition-broadcast scales multiplied on VectorE into bf16/fp32 in SBUF, then a plain matmul.
    K = 256: the block in one DMA; K = 160: a K tile of 128 and one of 32 (one scale row);
    K = 2304 at 512 columns a block: two chunks of K tiles (16 + 2). 200 rows (a partial row
    tile), 640 columns (column blocks), a Relu epilogue."""
    rng = np.random.default_rng(11)
    W = rng.standard_normal((kb, n)).astype(np.float32) / 16
    x = rng.standard_normal((m, kb)).astype(np.float32)
    path = _matmul_onnx(str(tmp_path / "w.onnx"), W, m)
    out = str(tmp_path / "w.tpg")
    r = trnsim.convert(path, out, quantize=kind, chip="trn3", dtype=dtype, calibrate={"x": x})
    assert r["changes"]["mx_weight_only_matmuls"] == 1 and r["changes"]["mx_matmuls"] == 0
    xa = x.astype(ml_dtypes.bfloat16).astype(np.float64) if dtype == "bf16" else x.astype(np.float64)
    want = np.maximum(xa @ _mx(W, kind, axis=0), 0)
    # fp32 accumulation of K products against float64: 1e-5 of the output's range
    np.testing.assert_allclose(_run_tpg(out, {"x": x})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())


def test_mx_weight_only_time_against_bf16_and_mx_matmul(tmp_path):
    """x [512, 1024] @ W [1024, 1024] on trn3, bf16 policy. Weight-only MX runs TensorE at the bf16
    rate (never faster than the closed-form bound M K N / (128 x 128 x 2.4 GHz x 8 cores)) and its
    dequantise is one VectorE pass per weight block, hidden behind the matmuls: within 10% of the
    bf16 weight's time. MX activations (TensorE's MX rate, 4x) are faster than both."""
    m, k, n = 512, 1024, 1024
    W = (np.random.default_rng(0).standard_normal((k, n)) / 32).astype(np.float32)
    path = _matmul_onnx(str(tmp_path / "t.onnx"), W, m, relu=False)
    t = {q + (a or ""): trnsim.convert(path, None, quantize=q, chip="trn3", dtype="bf16", **({"activations": a} if a else {}))["time_s"]
         for q, a in [("bf16", None), ("mxfp8", None), ("mxfp4", None), ("mxfp8", "mxfp8")]}
    bound = m * k * n / (128 * 128 * 2.4e9 * 8)
    for q in ("bf16", "mxfp8", "mxfp4"):
        assert t[q] >= bound, t
    assert t["mxfp8"] <= 1.1 * t["bf16"] and t["mxfp4"] <= 1.1 * t["bf16"], t
    assert t["mxfp8mxfp8"] < t["mxfp8"], t


@pytest.mark.parametrize("kind", ["mxfp8", "mxfp4"])
def test_mx_weights_on_trn2_dequantised_at_conversion_with_a_warning(tmp_path, kind):
    """Trainium2 has no MX formats: the MX-rounded weights are stored as bf16 (exact), a warning
    says so (in the report and on stderr), and the model computes with those values."""
    rng = np.random.default_rng(12)
    W = rng.standard_normal((64, 48)).astype(np.float32)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    path = _matmul_onnx(str(tmp_path / "m.onnx"), W, 8, relu=False)
    out = str(tmp_path / "m2.tpg")
    r = trnsim.convert(path, out, quantize=kind, chip="trn2", calibrate={"x": x})
    assert len(r["warnings"]) == 1 and kind in r["warnings"][0] and "trn2" in r["warnings"][0] and "bf16" in r["warnings"][0]
    assert r["weight_bytes"] == 2 * W.size and r["changes"]["mx_weight_only_matmuls"] == 0
    want = x.astype(np.float64) @ _mx(W, kind, axis=0)
    np.testing.assert_allclose(_run_tpg(out, {"x": x})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    p = subprocess.run([trnsim_cli(), "convert", path, "-o", out, "--quantize", kind, "--chip", "trn1"], capture_output=True, text=True)
    assert p.returncode == 0 and "trnsim: warning: --quantize " + kind + " on trn1" in p.stderr, p.stderr


def test_mx_matmul_over_several_tiles_matches_numpy(tmp_path):
    """K = 256 (two K tiles: the weight block's codes and scales in one DMA each), 200 rows (a
    partial row tile), 640 columns (column blocks), a Relu epilogue; bf16 policy (A rows in bf16
    before QuantizeMX)."""
    rng = np.random.default_rng(9)
    Kb, Nb, Mb = 256, 640, 200
    W = rng.standard_normal((Kb, Nb)).astype(np.float32) / 16
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["mm"]), helper.make_node("Relu", ["mm"], ["y"])], "mmx",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [Mb, Kb])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [Mb, Nb])], [numpy_helper.from_array(W, "W")])
    path = str(tmp_path / "mmx.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = rng.standard_normal((Mb, Kb)).astype(np.float32)
    out = str(tmp_path / "mmx.tpg")
    r = trnsim.convert(path, out, quantize="mxfp8", activations="mxfp8", chip="trn3", dtype="bf16", calibrate={"x": x})
    assert r["changes"]["mx_matmuls"] == 1
    xb = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    want = np.maximum(_mx(xb, "mxfp8", axis=-1) @ _mx(W, "mxfp8", axis=0), 0)
    # fp32 accumulation of 256 products against float64: 1e-5 of the output's range
    np.testing.assert_allclose(_run_tpg(out, {"x": x})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())


def test_int8_table_per_row_and_activations_match_numpy(embedding_model, tmp_path):
    path, ids, T, W, B = embedding_model
    out = str(tmp_path / "a.tpg")
    trnsim.convert(path, out, quantize="int8", per_channel=True, activations=True, calibrate={"ids": ids})
    tq, ts = _scaled(T, 127, 1, "int8")
    e = (tq * ts)[ids]
    sa = np.float32(np.abs(e).max() / 127)                     # calibrated per-tensor range
    ea = np.clip(np.rint(e * np.float32(1 / sa)), -127, 127)
    wq, ws = _scaled(W, 127, 0, "int8")
    want = (ea @ wq) * (sa * ws).astype(np.float32) + B
    np.testing.assert_allclose(_run_tpg(out, {"ids": ids})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())


@pytest.fixture(scope="module")
def conv_model(tmp_path_factory):
    """y = relu(conv3x3(x, Wc) + Bc): C_in 32 (x 9 taps = 288 = 9 blocks of 32), C_out 24."""
    rng = np.random.default_rng(5)
    Wc = rng.standard_normal((24, 32, 3, 3)).astype(np.float32) * 0.2
    Bc = rng.standard_normal((24,)).astype(np.float32)
    g = helper.make_graph([helper.make_node("Conv", ["x", "Wc", "Bc"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
                          "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 8, 8])],
                          [numpy_helper.from_array(Wc, "Wc"), numpy_helper.from_array(Bc, "Bc")])
    path = tmp_path_factory.mktemp("convert") / "conv.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    x = rng.standard_normal((1, 32, 8, 8)).astype(np.float32)
    return str(path), x, Wc, Bc


def _conv(x, w, b):
    """numpy 3x3 convolution, stride 1, pad 1, float64."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((x.shape[0], w.shape[0], x.shape[2], x.shape[3]))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + x.shape[2], j:j + x.shape[3]], w[:, :, i, j])
    return out + b[None, :, None, None]


@pytest.mark.parametrize("kind, chip", [("int8", "trn2"), ("fp8", "trn2"), ("mxfp8", "trn3"), ("mxfp4", "trn3")])
def test_conv_weights_quantised_match_numpy(conv_model, tmp_path, kind, chip):
    """int8/fp8 per output channel; MX in blocks of 32 along the contraction, laid out as the
    implicit GEMM's weight [kh x kw x C_in, C_out] (tap-major: 32 channels of one tap per block)."""
    path, x, Wc, Bc = conv_model
    out = str(tmp_path / "cq.tpg")
    r = trnsim.convert(path, out, quantize=kind, chip=chip, calibrate={"x": x})
    w2 = Wc.transpose(2, 3, 1, 0).reshape(9 * 32, 24)             # [taps x C_in, C_out]
    if kind in ("int8", "fp8"):
        q, s = _scaled(w2, 127 if kind == "int8" else 448, 0, kind)
        wq = q * s.astype(np.float64)
    else:
        wq = _mx(w2, kind, axis=0)
    want = np.maximum(_conv(x, wq.reshape(3, 3, 32, 24).transpose(3, 2, 0, 1), Bc), 0)
    # fp32 accumulation of 288 products against float64: 1e-5 of the output's range
    np.testing.assert_allclose(_run_tpg(out, {"x": x})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    assert r["weight_size_ratio"] < (0.3 if kind != "mxfp4" else 0.2)


def _prune(w):
    """4:16 down each column: keep the 4 largest |w| of every 16 (ties: the lower index)."""
    p = np.zeros_like(w)
    for c in range(w.shape[1]):
        for g in range(0, w.shape[0], 16):
            keep = np.argsort(-np.abs(w[g:g + 16, c]), kind="stable")[:4]
            p[g + keep, c] = w[g + keep, c]
    return p


def test_sparse_4_16_matches_numpy(matmul_model, tmp_path):
    path, x, W, B = matmul_model
    out = str(tmp_path / "s.tpg")
    r = trnsim.convert(path, out, sparsity="4:16", dtype="bf16", chip="trn2", calibrate={"x": x})
    assert r["changes"]["sparse_matmuls"] == 1
    bf = lambda a: a.astype(ml_dtypes.bfloat16).astype(np.float64)  # noqa: E731 (the bf16 policy's operands)
    want = bf(x) @ bf(_prune(W)) + B
    np.testing.assert_allclose(_run_tpg(out, {"x": x})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    assert r["time_saved_s"] == pytest.approx(r["fp32_time_s"] - r["time_s"])


@pytest.mark.parametrize("args, words", [
    (["--sparsity", "4:16", "--dtype", "bf16", "--chip", "trn1"], ["4:16", "trn1"]),
    (["--sparsity", "4:16"], ["--dtype bf16"]),
    (["--sparsity", "2:4", "--dtype", "bf16"], ["4:16"]),
    (["--quantize", "int4"], ["int4", "int8"]),
    ([], ["--quantize"]),
    (["--quantize", "bf16", "--activations"], ["--activations"]),
    (["--quantize", "int8", "--dtype", "fp8"], ["int8", "--dtype fp8"]),
    (["--quantize", "int8", "--activations", "mxfp8"], ["mxfp8", "MX weights"]),
    (["--quantize", "mxfp8", "--chip", "trn3", "--activations"], ["--activations mxfp8"]),
    (["--quantize", "mxfp8", "--chip", "trn3", "--activations", "int4"], ["int4"]),
    (["--quantize", "mxfp8", "--chip", "trn2", "--activations", "mxfp8"], ["trn2", "trn3"]),
])
def test_convert_errors_are_one_line(matmul_model, tmp_path, args, words):
    path = matmul_model[0]
    p = subprocess.run([trnsim_cli(), "convert", path, "-o", str(tmp_path / "e.tpg"), *args], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert err.startswith("trnsim: error:") and "\n" not in err, err
    for w in words:
        assert w in err, err


def test_cli_convert_then_run(matmul_model, tmp_path):
    path, x, *_ = matmul_model
    out = tmp_path / "c.tpg"
    p = subprocess.run([trnsim_cli(), "convert", path, "-o", str(out), "--quantize", "int8", "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["kind"] == "run" and r["time_s"] > 0 and r["weight_size_ratio"] < 0.3
    p = subprocess.run([trnsim_cli(), "run", str(out), "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([trnsim_cli(), "run", path, "--sparsity", "4:16", "--dtype", "bf16", "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


# MiniLM's int8 target (issue 11): tests/python/test_models.py::test_minilm_int8_weight_only_target, beside
# the other MiniLM tests, so the model is exported once.


def test_chained_mx_matmuls_keep_their_own_scales(tmp_path):
    """Two MX matmuls with equal weight shapes, one after the other: the program linker lets the
    second kernel's weight loads run ahead, and must order them after the first kernel's
    matmul.mx reads of its scale tiles (it once missed them: the first used the second's scales)."""
    rng = np.random.default_rng(13)
    w1, w2 = (rng.standard_normal((2, 256, 256)) / 16).astype(np.float32)
    x = rng.standard_normal((128, 256)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W1"], ["h"]), helper.make_node("MatMul", ["h", "W2"], ["y"])], "mm2",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [128, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [128, 256])],
                          [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(w2, "W2")])
    path = str(tmp_path / "mm2.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    out = str(tmp_path / "mm2.tpg")
    trnsim.convert(path, out, quantize="mxfp8", activations="mxfp8", chip="trn3", calibrate={"x": x})
    q = lambda a: _mx(a, "mxfp8", axis=-1)  # noqa: E731
    want = q(q(x) @ _mx(w1, "mxfp8", axis=0)) @ _mx(w2, "mxfp8", axis=0)
    np.testing.assert_allclose(_run_tpg(out, {"x": x})["y"], want, rtol=0, atol=1e-5 * np.abs(want).max())
