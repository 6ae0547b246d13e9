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
    ((1, 3, 32, 40), (160, 3, 8, 8), {"strides": [8, 8]}),                          # patchify: kernel rows stacked
    ((2, 4, 17, 19), (24, 4, 3, 3), {"strides": [3, 2], "pads": [1, 0, 2, 1]}),    # stacked rows, padded, overlapping columns
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


def _bf16(a):
    """Round to bf16 (nearest even) and back to fp32."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).view(np.float32)


def _conv3x3(x, w, b):  # stride 1, pad 1, float64 sums
    n, c, hh, ww = x.shape
    p = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], hh, ww))
    for a in range(3):
        for bb in range(3):
            out += np.einsum("nchw,mc->nmhw", p[:, :, a:a + hh, bb:bb + ww], w[:, :, a, bb].astype(np.float64))
    return out + b.reshape(1, -1, 1, 1)


def test_conv_to_conv_activation_stored_bf16():
    """A conv whose output only a dense conv reads stores it at the operand width (bf16), half
    the bytes of fp32, with the values the consumer would have rounded to anyway. Reference:
    numpy with the TensorE operands rounded to bf16, float64 sums: |got - want| <= 1e-3 +
    1e-3 |want| (fp32 accumulation order); the first conv's HBM bytes are its fp32 input, its
    bf16 weights and bias, and a bf16 output, exactly."""
    xs = (1, 40, 12, 12)  # over 32 channels: no tap stacking (which pads in HBM first)
    x = RNG.standard_normal(xs).astype(np.float32)
    w1 = (RNG.standard_normal((48, 40, 3, 3)) * 0.1).astype(np.float32)
    w2 = (RNG.standard_normal((16, 48, 3, 3)) * 0.1).astype(np.float32)
    b1, b2 = RNG.standard_normal(48).astype(np.float32), RNG.standard_normal(16).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c"], ["r"]),
             h.make_node("Conv", ["r", "w2", "b2"], ["y"], pads=[1, 1, 1, 1])]
    m = model(nodes, xs, [nh.from_array(w1, "w1"), nh.from_array(b1, "b1"), nh.from_array(w2, "w2"), nh.from_array(b2, "b2")])
    cm = trnsim.compile_onnx(m.SerializeToString(), dtype="bf16")
    got = cm.run({"x": x})["y"]
    r = np.maximum(_conv3x3(_bf16(x), _bf16(w1), b1), 0).astype(np.float32)
    want = _conv3x3(_bf16(r), _bf16(w2), b2)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    first = cm.report["ops"][0]
    assert first["op"] == "ConvGemm"
    assert first["hbm_bytes"] == x.size * 4 + w1.size * 2 + b1.size * 4 + 48 * 12 * 12 * 2


def test_patchify_conv_reads_its_input_once():
    """A non-overlapping conv (ViT's patch embedding: 3 channels, 16 x 16 kernel, stride 16)
    stacks the kernel rows on the partitions: every input element is read from HBM once. Its
    HBM bytes are exactly the input once (counted at the bf16 width its casting DMA lands in
    SBUF, as for every unpadded band), the bf16 weight, the fp32 bias and the fp32 output (the
    column-tap stack read 16 shifted copies of the input). Values against numpy with the
    TensorE operands rounded to bf16 and float64 sums: |got - want| <= 1e-3 + 1e-3 |want|."""
    xs, ws = (1, 3, 64, 48), (48, 3, 16, 16)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = (RNG.standard_normal(ws) * 0.05).astype(np.float32)
    b = RNG.standard_normal(ws[0]).astype(np.float32)
    m = model([h.make_node("Conv", ["x", "w", "b"], ["y"], strides=[16, 16], kernel_shape=[16, 16])], xs,
              [nh.from_array(w, "w"), nh.from_array(b, "b")])
    cm = trnsim.compile_onnx(m.SerializeToString(), dtype="bf16")
    got = cm.run({"x": x})["y"]
    patches = _bf16(x).astype(np.float64).reshape(1, 3, 4, 16, 3, 16)           # [n, c, oh, a, ow, b]
    want = np.einsum("ncyaxb,mcab->nmyx", patches, _bf16(w).astype(np.float64)) + b.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    [op] = cm.report["ops"]
    assert op["op"] == "ConvGemm"
    assert op["hbm_bytes"] == x.size * 2 + w.size * 2 + b.size * 4 + want.size * 4


@pytest.mark.parametrize("m_out,group", [(1024, 1), (300, 1), (512, 2)])
def test_conv_bias_loads_in_one_dma_per_group(m_out, group):
    """A conv's bias lands in SBUF with one DMA per group for all its full 128-channel tiles
    (plus one for a partial last tile), not one per tile: each DMA pays the fixed cost. The
    node's instructions with a bias exceed those without by exactly that count; values against
    onnxruntime (fp32 tolerances of check())."""
    xs = (1, 64 * group, 7, 7)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = (RNG.standard_normal((m_out, 64, 1, 1)) * 0.1).astype(np.float32)
    b = RNG.standard_normal(m_out).astype(np.float32)
    inits = [nh.from_array(w, "w"), nh.from_array(b, "b")]
    with_bias = model([h.make_node("Conv", ["x", "w", "b"], ["y"], group=group)], xs, inits)
    check(with_bias, x)
    no_bias = model([h.make_node("Conv", ["x", "w"], ["y"], group=group)], xs, inits[:1])
    count = []
    for mm in (with_bias, no_bias):
        cm = trnsim.compile_onnx(mm.SerializeToString(), cores=1)
        cm.run({"x": x})
        count.append(cm.report["ops"][0]["instructions"])
    mg = m_out // group
    assert count[0] - count[1] == group * ((mg // 128 > 0) + (mg % 128 > 0))


def test_conv_batchnorm_residual_relu_is_one_kernel():
    """Conv -> BatchNormalization -> residual Add -> Relu (an export that keeps BatchNormalization,
    as the onnx wheel's light ResNet-50 does) is ONE kernel: the BatchNormalization folds into
    the conv's weight and bias (pass batchnorm-folding), and the Add and Relu are the conv's
    whole epilogue (the fusion also looks through a decomposition's same-shape Reshape, which
    the unfolded BatchNormalization ends in). Values against onnxruntime (fp32 tolerances of
    check()); the timing-only compile (weights without values) gives the same program."""
    xs = (1, 40, 9, 9)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = (RNG.standard_normal((40, 40, 3, 3)) * 0.1).astype(np.float32)
    sc, bb = RNG.uniform(0.5, 1.5, 40).astype(np.float32), RNG.standard_normal(40).astype(np.float32)
    mean, var = RNG.standard_normal(40).astype(np.float32), RNG.uniform(0.5, 1.5, 40).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             h.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"], name="bn"),
             h.make_node("Add", ["n", "x"], ["a"], name="add"), h.make_node("Relu", ["a"], ["y"], name="relu")]
    inits = [nh.from_array(w, "w"), nh.from_array(RNG.standard_normal(40).astype(np.float32), "cb"),
             nh.from_array(sc, "s"), nh.from_array(bb, "b"), nh.from_array(mean, "m"), nh.from_array(var, "v")]
    m = model(nodes, xs, inits)
    assert check(m, x) == {"ConvGemm"}
    cm = trnsim.compile_onnx(m.SerializeToString())
    cm.run({"x": x})
    [op] = cm.report["ops"]
    assert op["fused"] == ["add", "relu"]
    timing = trnsim.compile_onnx(m.SerializeToString(), mode="timing")
    timing.run({})
    assert timing.report["ops"][0]["instructions"] == op["instructions"]
    assert timing.report["time_s"] == cm.report["time_s"]


def test_conv_batchnorm_keeps_a_shared_conv_output():
    """A conv output that BatchNormalization and another node both read is not folded (the
    other reader needs the unnormalised values). Against onnxruntime."""
    xs = (1, 40, 6, 6)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = (RNG.standard_normal((40, 40, 1, 1)) * 0.1).astype(np.float32)
    p = [RNG.uniform(0.5, 1.5, 40).astype(np.float32) for _ in range(4)]
    nodes = [h.make_node("Conv", ["x", "w"], ["c"]), h.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
             h.make_node("Add", ["n", "c"], ["y"])]
    inits = [nh.from_array(w, "w")] + [nh.from_array(a, k) for a, k in zip(p, "sbmv")]
    check(model(nodes, xs, inits), x)
