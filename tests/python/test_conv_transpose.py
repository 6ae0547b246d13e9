"""ConvTranspose (ops/conv_transpose.cpp: zero-upsampled input + Conv on the chip) through
trnsim.compile_onnx in functional mode (fp32 policy) against onnxruntime. Tolerance: rtol 1e-4,
atol 1e-4 (fp32 sums in another order)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402

RNG = np.random.default_rng(2)


def ort_run(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def model(x_shape, w_shape, bias, const_weight, **attrs):
    w = RNG.standard_normal(w_shape).astype(np.float32)
    b = RNG.standard_normal(w_shape[1] * attrs.get("group", 1)).astype(np.float32)
    ins = ["x", "w"] + (["b"] if bias else [])
    inputs = [h.make_tensor_value_info("x", T.FLOAT, x_shape)]
    inits, feeds = [], {"x": RNG.standard_normal(x_shape).astype(np.float32)}
    if const_weight:
        inits.append(nh.from_array(w, "w"))
    else:
        inputs.append(h.make_tensor_value_info("w", T.FLOAT, w_shape))
        feeds["w"] = w
    if bias:
        inits.append(nh.from_array(b, "b"))
    node = h.make_node("ConvTranspose", ins, ["y"], **attrs)
    g = h.make_graph([node], "ct", inputs, [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9), feeds


CASES = [
    ((1, 3, 5, 5), (3, 4, 3, 3), {}),
    ((2, 4, 4, 6), (4, 3, 2, 2), {"strides": [2, 2]}),                           # UNet up-sampling
    ((1, 4, 5, 5), (4, 2, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),     # DCGAN/detector
    ((1, 2, 3, 4), (2, 3, 3, 3), {"strides": [3, 2], "output_padding": [1, 1]}),
    ((1, 2, 5, 5), (2, 2, 3, 3), {"dilations": [2, 2], "pads": [3, 0, 1, 2]}),
    ((1, 4, 4, 4), (4, 3, 3, 3), {"group": 2, "strides": [2, 1], "pads": [1, 1, 0, 0]}),
    ((1, 4, 3, 3), (4, 1, 3, 3), {"group": 4, "strides": [2, 2]}),              # depthwise
    ((2, 3, 7), (3, 2, 5), {"strides": [3], "pads": [2, 1]}),                     # 1-d
    ((1, 2, 3, 3, 2), (2, 2, 2, 2, 2), {"strides": [2, 1, 2]}),                   # 3-d
    ((1, 1, 3, 3), (1, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 1, 3, 3), (1, 2, 3, 3), {"strides": [3, 2], "output_shape": [10, 8]}),
    # output_shape smaller than the natural size: pads from the total padding, the start taking
    # the larger half (round 8: the end was cut instead; fuzz, differential against onnxruntime)
    ((1, 1, 3, 3), (1, 2, 3, 3), {"strides": [3, 18], "output_shape": [10, 8]}),
    ((1, 1, 3, 13), (1, 2, 3, 3), {"strides": [3, 2], "output_padding": [1, 1], "output_shape": [10, 8]}),
    ((1, 1, 3, 4), (1, 1, 2, 3), {"strides": [3, 2], "auto_pad": "VALID", "output_shape": [5, 6]}),
    ((1, 1, 3, 4), (1, 1, 2, 3), {"strides": [3, 2], "auto_pad": "SAME_UPPER", "output_shape": [5, 6]}),
]


@pytest.mark.parametrize("attrs", [{"strides": [3, 1], "auto_pad": "SAME_UPPER"}, {"strides": [3, 1], "auto_pad": "SAME_LOWER"},
                                   {"strides": [3, 1], "auto_pad": "SAME_UPPER", "output_shape": [8, 3]}])
def test_same_padding_with_a_negative_total_follows_the_onnx_reference(attrs):
    # A 1-tap kernel with stride 3: SAME's total padding is negative. onnx.reference (the spec's
    # output size, input x stride) and trnsim pad with zeros; onnxruntime clamps the total to 0
    # and, without output_shape, returns the natural size instead.
    from onnx.reference import ReferenceEvaluator
    m, feeds = model((1, 1, 3, 3), (1, 1, 1, 1), bias=False, const_weight=True, **attrs)
    want = ReferenceEvaluator(m).run(None, feeds)[0]
    got = trnsim.compile_onnx(m.SerializeToString()).run(feeds)["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("const_weight", [True, False])
@pytest.mark.parametrize("x_shape,w_shape,attrs", CASES)
def test_conv_transpose_matches_onnxruntime(x_shape, w_shape, attrs, const_weight):
    m, feeds = model(x_shape, w_shape, bias=True, const_weight=const_weight, **attrs)
    want = ort_run(m, feeds)[0]
    cm = trnsim.compile_onnx(m.SerializeToString())
    got = cm.run(feeds)["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    ops = {o["op"] for o in cm.report["ops"]}
    depthwise = attrs.get("group", 1) == x_shape[1] and w_shape[1] == 1
    assert "ConvTranspose" not in ops and ({"MatMul", "ConvGemm"} & ops or depthwise)  # ran on the chip as Conv's kernels
