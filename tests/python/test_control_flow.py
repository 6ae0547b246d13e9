"""If, Loop (ops/control_flow.cpp: inlined or unrolled during shape inference when the
condition / trip count is known) and NonZero (ops/nonzero.cpp: by value) through
trnsim.compile_onnx in functional mode (fp32) against onnxruntime; exact (rtol 1e-6: the inlined
ops are the same fp32 ops). A condition or NonZero input computed at run time is a one-line
UnsupportedError naming the node."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402

RNG = np.random.default_rng(3)


def vi(name, t, shape):
    return h.make_tensor_value_info(name, t, shape)


def make(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "cf", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=9)


def check(m, feeds, rtol=1e-6, atol=1e-6):
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = trnsim.compile_onnx(m.SerializeToString()).run(feeds)
    for o, w in zip(m.graph.output, want):
        assert got[o.name].shape == w.shape, o.name
        np.testing.assert_allclose(got[o.name].astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol, err_msg=o.name)


def if_model(cond_node):
    """y = x @ w + 1 if shape(x)[0] > 2 else relu(x) * 2: a condition folded from shapes (the
    form the TorchScript exporter emits)."""
    then_g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["t0"]), h.make_node("Add", ["t0", "one"], ["t"])], "then", [],
                          [vi("t", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Relu", ["x"], ["e0"]), h.make_node("Mul", ["e0", "two"], ["e"])], "else", [],
                          [vi("e", T.FLOAT, None)])
    nodes = cond_node + [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    inits = [nh.from_array(RNG.standard_normal((4, 4)).astype(np.float32), "w"), nh.from_array(np.float32(1), "one"),
             nh.from_array(np.float32(2), "two"), nh.from_array(np.array([0], np.int64), "i0"), nh.from_array(np.int64(2), "k")]
    return nodes, inits


@pytest.mark.parametrize("batch", [1, 3])
def test_if_on_a_shape_condition(batch):
    cond = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i0"], ["b"]), h.make_node("Greater", ["b", "k"], ["c1"]),
            h.make_node("Squeeze", ["c1"], ["c"])]
    nodes, inits = if_model(cond)
    m = make(nodes, [vi("x", T.FLOAT, [batch, 4])], [vi("y", T.FLOAT, None)], inits)
    check(m, {"x": RNG.standard_normal((batch, 4)).astype(np.float32)}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("c", [True, False])
def test_if_on_a_condition_input_is_specialised(c):
    nodes, inits = if_model([])
    m = make(nodes, [vi("x", T.FLOAT, [3, 4]), vi("c", T.BOOL, [])], [vi("y", T.FLOAT, None)], inits)
    check(m, {"x": RNG.standard_normal((3, 4)).astype(np.float32), "c": np.array(c)}, rtol=1e-5, atol=1e-5)


def test_if_on_a_data_condition_is_one_line_refusal():
    cond = [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0), h.make_node("Greater", ["s", "one"], ["c"])]
    nodes, inits = if_model(cond)
    m = make(nodes, [vi("x", T.FLOAT, [3, 4])], [vi("y", T.FLOAT, None)], inits)
    with pytest.raises(trnsim.UnsupportedError, match=r"^unsupported: op If \(condition 'c' is computed at run time[^\n]*at node"):
        trnsim.compile_onnx(m.SerializeToString()).run({"x": np.ones((3, 4), np.float32)})


def loop_model(trip, cond=True, scan=True):
    """for i in range(trip): acc = acc * 0.5 + x[i]; scan out acc + i (a TorchScript-style for loop:
    cond passes through)."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Unsqueeze", ["i", "ax"], ["i1"]),
         h.make_node("Gather", ["x", "i"], ["xi"], axis=0),
         h.make_node("Mul", ["acc", "half"], ["a0"]),
         h.make_node("Add", ["a0", "xi"], ["acc_out"]),
         h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         h.make_node("Add", ["acc_out", "fi"], ["scan"])],
        "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc", T.FLOAT, [4])],
        [vi("cond_out", T.BOOL, []), vi("acc_out", T.FLOAT, [4])] + ([vi("scan", T.FLOAT, [4])] if scan else []),
        [nh.from_array(np.array([0], np.int64), "ax"), nh.from_array(np.float32(0.5), "half")])
    node = h.make_node("Loop", ["M", "c" if cond else "", "acc0"], ["acc_final"] + (["scans"] if scan else []), body=body)
    inits = [nh.from_array(np.array(trip, np.int64), "M"), nh.from_array(np.array(True), "c"),
             nh.from_array(np.zeros(4, np.float32), "acc0")]
    outs = [vi("acc_final", T.FLOAT, None)] + ([vi("scans", T.FLOAT, None)] if scan else [])
    return make([node], [vi("x", T.FLOAT, [6, 4])], outs, inits)


@pytest.mark.parametrize("trip,cond,scan", [(6, True, True), (3, False, True), (1, True, False)])
def test_loop_with_constant_trip_count_unrolls(trip, cond, scan):
    check(loop_model(trip, cond, scan), {"x": RNG.standard_normal((6, 4)).astype(np.float32)}, rtol=1e-5, atol=1e-5)


def test_loop_with_run_time_trip_count_is_one_line_refusal():
    m = loop_model(3)
    m.graph.initializer.remove(next(i for i in m.graph.initializer if i.name == "M"))
    m.graph.node.insert(0, h.make_node("ReduceMax", ["x"], ["mf"], keepdims=0))
    m.graph.node.insert(1, h.make_node("Cast", ["mf"], ["M"], to=T.INT64))
    with pytest.raises(trnsim.UnsupportedError, match=r"^unsupported: op Loop \(trip count 'M' is computed at run time[^\n]*at node"):
        trnsim.compile_onnx(m.SerializeToString()).run({"x": np.ones((6, 4), np.float32)})


def test_nonzero_of_a_constant_mask_feeds_gather_nd():
    mask = RNG.random((3, 5)) > 0.5
    nodes = [h.make_node("NonZero", ["mask"], ["nz"]), h.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             h.make_node("GatherND", ["x", "idx"], ["y"])]
    m = make(nodes, [vi("x", T.FLOAT, [3, 5])], [vi("y", T.FLOAT, None)], [nh.from_array(mask, "mask")])
    check(m, {"x": RNG.standard_normal((3, 5)).astype(np.float32)})


def test_nonzero_of_an_input_is_specialised_and_of_data_refused():
    m = make([h.make_node("NonZero", ["m"], ["y"])], [vi("m", T.BOOL, [2, 3])], [vi("y", T.INT64, None)])
    check(m, {"m": np.array([[True, False, True], [False, True, True]])})
    nodes = [h.make_node("Greater", ["x", "z"], ["m"]), h.make_node("NonZero", ["m"], ["y"])]
    m = make(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.INT64, None)], [nh.from_array(np.float32(0), "z")])
    with pytest.raises(trnsim.UnsupportedError, match=r"^unsupported: op NonZero \(its output's shape depends on the values of 'm'[^\n]*fixed shape[^\n]*at node"):
        trnsim.compile_onnx(m.SerializeToString()).run({"x": np.ones((2, 3), np.float32)})
