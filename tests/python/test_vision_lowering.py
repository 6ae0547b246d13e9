"""The vision lowerings against onnxruntime, functional mode: Conv as implicit GEMM on TensorE
(ConvGemm: strided, dilated, padded, grouped, 1-D, the tap-stacked RGB stem, bands of whole
images, a band split in rows, fused bias/Relu/residual epilogues), depthwise Conv on
VectorE/ScalarE, and MaxPool/AveragePool as one windowed reduction (PoolWindow).

Tolerance: fp32 policy, |got - want| <= 1e-5 + 1e-4 |want| (sums in another order); bf16 policy
(TensorE operands rounded to bf16): |got - want| <= 3e-2 + 3e-2 |want|. Each case also checks
which kernels ran (no Slice/Im2col windows), and two runs give the same bits."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402

RNG = np.random.default_rng(7)


def model(nodes, xs, inits):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, list(xs))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)


def check(m, x, dtype="fp32", rtol=1e-4, atol=1e-5):
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cm = trnsim.compile_onnx(m.SerializeToString(), dtype=dtype)
    got = cm.run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    again = trnsim.compile_onnx(m.SerializeToString(), dtype=dtype).run({"x": x})["y"]
    assert np.array_equal(got, again)  # bit-identical run to run
    return {o["op"] for o in cm.report["ops"]}


CONVS = [  # (x shape, w shape, attributes)
    ((2, 64, 9, 9), (96, 64, 3, 3), {"pads": [1, 1, 1, 1]}),                       # whole-image bands, 2 images
    ((1, 160, 10, 11), (130, 160, 3, 3), {"pads": [1, 0, 2, 1], "strides": [2, 1]}),  # 2 channel + 2 output tiles
    ((1, 48, 12, 12), (40, 48, 3, 3), {"dilations": [2, 3], "pads": [2, 3, 2, 3]}),
    ((1, 3, 30, 30), (16, 3, 7, 7), {"pads": [3, 3, 3, 3], "strides": [2, 2]}),   # RGB stem: stacked taps
    ((1, 64, 8, 8), (64, 16, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}),          # grouped
    ((2, 40, 17), (24, 40, 5), {"strides": [2], "pads": [2, 2]}),                  # 1-D
    ((1, 128, 6, 6), (256, 128, 1, 1), {"strides": [2, 2]}),                       # strided 1x1
    ((1, 64, 80, 80), (8, 64, 3, 3), {"pads": [1, 1, 1, 1]}),                      # bands of rows
]


@pytest.mark.parametrize("xs,ws,attrs", CONVS)
def test_conv_gemm_matches_onnxruntime(xs, ws, attrs):
    x = RNG.standard_normal(xs).astype(np.float32)
    w = (RNG.standard_normal(ws) * 0.1).astype(np.float32)
    b = RNG.standard_normal(ws[0]).astype(np.float32)
    m = model([h.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)], xs, [nh.from_array(w, "w"), nh.from_array(b, "b")])
    ops = check(m, x)
    assert "ConvGemm" in ops and not ops & {"Slice", "Im2col", "MatMul"}


def test_conv_epilogue_bias_relu_residual_bf16():
    xs = (2, 64, 7, 7)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = (RNG.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("Add", ["c", "x"], ["s"]), h.make_node("Relu", ["s"], ["y"])]
    m = model(nodes, xs, [nh.from_array(w, "w"), nh.from_array(b, "b")])
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cm = trnsim.compile_onnx(m.SerializeToString(), dtype="bf16")
    np.testing.assert_allclose(cm.run({"x": x})["y"], want, rtol=3e-2, atol=3e-2)
    rep = {o["op"]: o for o in cm.report["ops"]}
    assert set(rep) == {"ConvGemm"} and len(rep["ConvGemm"]["fused"]) == 2  # Add and Relu on the evacuation


@pytest.mark.parametrize("xs,k,attrs", [
    ((2, 24, 9, 9), 3, {"pads": [1, 1, 1, 1]}),
    ((1, 130, 8, 7), 5, {"pads": [2, 1, 2, 3], "strides": [2, 1]}),
    ((1, 16, 10, 10), 3, {"dilations": [2, 2], "pads": [2, 2, 2, 2]}),
])
def test_depthwise_matches_onnxruntime(xs, k, attrs):
    c = xs[1]
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal((c, 1, k, k)).astype(np.float32)
    b = RNG.standard_normal(c).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], group=c, **attrs), h.make_node("Relu", ["c"], ["y"])]
    ops = check(model(nodes, xs, [nh.from_array(w, "w"), nh.from_array(b, "b")]), x)
    assert "ConvGemm" in ops and "Relu" in ops and not ops & {"Slice", "Mul", "MatMul"}


@pytest.mark.parametrize("op,xs,attrs", [
    ("MaxPool", (2, 64, 112, 112), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("MaxPool", (1, 5, 9, 8), {"kernel_shape": [2, 3], "dilations": [2, 1], "ceil_mode": 1, "strides": [2, 2]}),
    ("AveragePool", (1, 130, 7, 7), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 1]}),
    ("AveragePool", (1, 8, 9, 9), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "count_include_pad": 1}),
    ("MaxPool", (2, 6, 20), {"kernel_shape": [4], "strides": [3], "pads": [1, 2]}),
])
def test_pool_window_matches_onnxruntime(op, xs, attrs):
    x = RNG.standard_normal(xs).astype(np.float32)
    ops = check(model([h.make_node(op, ["x"], ["y"], **attrs)], xs, []), x)
    assert "PoolWindow" in ops and "Slice" not in ops
