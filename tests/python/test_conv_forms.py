"""Conv forms (ops/conv.cpp's per-form rule) against onnxruntime: 1x1 stride 1 (x read as its
own im2col), padded/strided/dilated kernels in 1-D, 2-D and 3-D (one Im2col access-pattern
node), a wide channel count (the channels-on-rows DMA ordering), grouped and depthwise.

Tolerance: fp32 policy, |got - want| <= 1e-5 + 1e-4 |want| (sums ordered differently)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402

RNG = np.random.default_rng(1)

FORMS = [  # (x shape, w shape, attributes)
    ((2, 8, 6, 6), (5, 8, 1, 1), {}),
    ((1, 3, 9, 9), (4, 3, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 3, 9, 10), (4, 3, 3, 2), {"dilations": [2, 1], "pads": [0, 1, 2, 0]}),
    ((1, 160, 5, 5), (6, 160, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((2, 4, 11), (3, 4, 3), {"strides": [2], "pads": [1, 1]}),
    ((1, 2, 4, 5, 5), (3, 2, 2, 3, 3), {"pads": [0, 1, 1, 1, 0, 1]}),
    ((1, 4, 7, 7), (6, 2, 3, 3), {"group": 2, "strides": [2, 2]}),
    ((1, 4, 7, 7), (4, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}),
    ((1, 3, 8, 8), (4, 3, 1, 1), {"strides": [2, 2]}),
]


@pytest.mark.parametrize("xs,ws,attrs", FORMS)
def test_conv_form_matches_onnxruntime(xs, ws, attrs):
    x = RNG.standard_normal(xs).astype(np.float32)
    w = (RNG.standard_normal(ws) * 0.3).astype(np.float32)
    b = RNG.standard_normal(ws[0]).astype(np.float32)
    g = h.make_graph([h.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)], "conv",
                     [h.make_tensor_value_info("x", T.FLOAT, list(xs))], [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(w, "w"), nh.from_array(b, "b")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cm = trnsim.compile_onnx(m.SerializeToString())
    got = cm.run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    ops = {o["op"] for o in cm.report["ops"]}
    assert "Slice" not in ops or attrs.get("group", 1) > 1  # group 1: no per-tap windows
