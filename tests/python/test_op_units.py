"""The op units added for the models users bring (issue 11 item 2), each through
trnsim.compile_onnx in functional mode (fp32 policy) against onnx's reference implementation
(onnx.reference.ReferenceEvaluator). Exact ops (selection, indexing, masks) must match exactly;
CumSum sums in another order than the reference's running sum: rtol 1e-5; the
normalisations use the LayerNorm kernel's fp32 statistics: rtol 1e-4, atol 1e-5."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import trnsim  # noqa: E402

RNG = np.random.default_rng(11)


def _model(node, inputs, outputs, inits=(), opset=18):
    g = h.make_graph([node], "t", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=9)


def vi(name, t, shape):
    return h.make_tensor_value_info(name, t, shape)


def check(m, feeds, rtol=0.0, atol=0.0):
    want = ReferenceEvaluator(m).run(None, feeds)
    got = trnsim.compile_onnx(m.SerializeToString()).run(feeds)
    for o, w in zip(m.graph.output, want):
        g = got[o.name]
        assert g.shape == w.shape, o.name
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol, err_msg=o.name)


def rand(*s):
    return RNG.standard_normal(s).astype(np.float32)


@pytest.mark.parametrize("upper,k", [(1, 0), (0, 0), (1, 2), (0, -1)])
def test_trilu(upper, k):
    m = _model(h.make_node("Trilu", ["x", "k"], ["y"], upper=upper), [vi("x", T.FLOAT, [2, 4, 5])], [vi("y", T.FLOAT, [2, 4, 5])],
               [nh.from_array(np.array(k, np.int64), "k")])
    check(m, {"x": rand(2, 4, 5)})


@pytest.mark.parametrize("exclusive,reverse,axis", [(0, 0, 1), (1, 0, 1), (0, 1, 0), (1, 1, 1)])
def test_cumsum(exclusive, reverse, axis):
    m = _model(h.make_node("CumSum", ["x", "a"], ["y"], exclusive=exclusive, reverse=reverse), [vi("x", T.FLOAT, [5, 37])],
               [vi("y", T.FLOAT, [5, 37])], [nh.from_array(np.array(axis, np.int64), "a")])
    check(m, {"x": rand(5, 37)}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("keepdims,last", [(1, 0), (0, 1)])
def test_argmax_argmin_with_ties(op, keepdims, last):
    x = RNG.integers(0, 4, (3, 6, 4)).astype(np.float32)  # many ties
    shape = [3, 1, 4] if keepdims else [3, 4]
    m = _model(h.make_node(op, ["x"], ["y"], axis=1, keepdims=keepdims, select_last_index=last), [vi("x", T.FLOAT, [3, 6, 4])],
               [vi("y", T.INT64, shape)])
    check(m, {"x": x})


@pytest.mark.parametrize("largest", [1, 0])
def test_topk_values_and_indices(largest):
    x = RNG.integers(0, 5, (3, 9)).astype(np.float32)
    m = _model(h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest), [vi("x", T.FLOAT, [3, 9])],
               [vi("v", T.FLOAT, [3, 4]), vi("i", T.INT64, [3, 4])], [nh.from_array(np.array([4], np.int64), "k")])
    check(m, {"x": x})


def test_onehot_with_negative_indices_and_axis():
    m = _model(h.make_node("OneHot", ["i", "d", "v"], ["y"], axis=1), [vi("i", T.INT64, [2, 3])], [vi("y", T.FLOAT, [2, 5, 3])],
               [nh.from_array(np.array(5, np.int64), "d"), nh.from_array(np.array([-1.0, 2.5], np.float32), "v")])
    check(m, {"i": np.array([[0, 4, -1], [2, 7, -5]], np.int64)})


def test_instance_normalization():
    m = _model(h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5), [vi("x", T.FLOAT, [2, 3, 4, 5])],
               [vi("y", T.FLOAT, [2, 3, 4, 5])], [nh.from_array(rand(3), "s"), nh.from_array(rand(3), "b")])
    check(m, {"x": rand(2, 3, 4, 5)}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset,params", [(18, 2), (21, 6)])
def test_group_normalization(opset, params):
    m = _model(h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2, epsilon=1e-5), [vi("x", T.FLOAT, [2, 6, 3, 4])],
               [vi("y", T.FLOAT, [2, 6, 3, 4])], [nh.from_array(rand(params), "s"), nh.from_array(rand(params), "b")], opset=opset)
    check(m, {"x": rand(2, 6, 3, 4)}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("batch_dims,ishape,oshape", [(0, [4, 2], [4, 5]), (0, [3, 1], [3, 4, 5]), (1, [3, 2, 1], [3, 2, 5])])
def test_gather_nd_run_time_indices(batch_dims, ishape, oshape):
    x = rand(3, 4, 5)
    k = ishape[-1]
    idx = np.stack([RNG.integers(-x.shape[batch_dims + j], x.shape[batch_dims + j], ishape[:-1]) for j in range(k)], -1).astype(np.int64)
    m = _model(h.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims), [vi("x", T.FLOAT, [3, 4, 5]), vi("i", T.INT64, ishape)],
               [vi("y", T.FLOAT, oshape)])
    check(m, {"x": x, "i": idx})


@pytest.mark.parametrize("eq,shapes", [("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij->ji", [(3, 4)]), ("ij->i", [(3, 4)]),
                                       ("i,i", [(5,), (5,)]), ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
                                       ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]), ("i,j->ij", [(3,), (4,)]),
                                       # diagonals: a letter repeated in one operand
                                       ("bii->bi", [(2, 3, 3)]), ("ii", [(4, 4)]), ("bij,bjj->bi", [(2, 3, 4), (2, 4, 4)])])
def test_einsum_common_forms(eq, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    feeds = {n: rand(*s) for n, s in zip(names, shapes)}
    out = np.einsum(eq, *feeds.values())
    m = _model(h.make_node("Einsum", names, ["y"], equation=eq), [vi(n, T.FLOAT, list(s)) for n, s in zip(names, shapes)],
               [vi("y", T.FLOAT, list(out.shape))])
    check(m, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "add", "max", "min"])
def test_scatter_nd(reduction):
    data = rand(4, 3, 2)
    # distinct rows for "none" (duplicates are undefined there), a repeated one for the others
    idx = np.array([[1], [-1], [0]] if reduction == "none" else [[1], [3], [1]], np.int64)
    m = _model(h.make_node("ScatterND", ["d", "i", "u"], ["y"], reduction=reduction),
               [vi("d", T.FLOAT, [4, 3, 2]), vi("i", T.INT64, [3, 1]), vi("u", T.FLOAT, [3, 3, 2])], [vi("y", T.FLOAT, [4, 3, 2])])
    check(m, {"d": data, "i": idx, "u": rand(3, 3, 2)}, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axis,reduction", [(0, "none"), (1, "add"), (-1, "max"), (1, "min")])
def test_scatter_elements(axis, reduction):
    data = rand(3, 5)
    if reduction == "none":
        idx = np.array([[0, 2, 1], [2, 0, 0]], np.int64) if axis == 0 else np.array([[4, 0], [-1, 2], [1, 3]], np.int64)
    else:
        idx = RNG.integers(-5, 5, (3, 4)).astype(np.int64)
    m = _model(h.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=axis, reduction=reduction),
               [vi("d", T.FLOAT, [3, 5]), vi("i", T.INT64, list(idx.shape)), vi("u", T.FLOAT, list(idx.shape))], [vi("y", T.FLOAT, [3, 5])])
    check(m, {"d": data, "i": idx, "u": rand(*idx.shape)}, rtol=1e-6, atol=1e-6)



def test_mod28_floor_mod_on_floats():
    # Mod-28: fmod=0 on floats is numpy.mod (the divisor's sign), incl. an infinite divisor
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.0, -1.0, 1.0, 3.0, -7.25], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, np.inf, -np.inf, 1.5, 0.5], np.float32)
    m = _model(h.make_node("Mod", ["a", "b"], ["y"], fmod=0), [vi("a", T.FLOAT, [9]), vi("b", T.FLOAT, [9])],
               [vi("y", T.FLOAT, [9])], opset=28)
    check(m, {"a": a, "b": b})


@pytest.mark.parametrize("to", [T.INT4, T.UINT4, T.INT2, T.UINT2])
@pytest.mark.parametrize("src", [T.FLOAT, T.INT8])
def test_cast_to_sub_byte_ints_wraps(to, src):
    # ONNX Cast to int4/uint4/int2/uint2 truncates and wraps into the range (-9 -> int4 7)
    x = np.arange(-19, 19, dtype=np.float32) + (0.5 if src == T.FLOAT else 0.0)
    x = x.astype(np.int8) if src == T.INT8 else x
    m = _model(h.make_node("Cast", ["x"], ["y"], to=to), [vi("x", src, [38])], [vi("y", to, [38])], opset=25)
    check(m, {"x": x})


def test_cast_from_int4_input():
    import ml_dtypes
    x = np.arange(-8, 8).astype(ml_dtypes.int4)
    m = _model(h.make_node("Cast", ["x"], ["y"], to=T.FLOAT), [vi("x", T.INT4, [16])], [vi("y", T.FLOAT, [16])], opset=25)
    check(m, {"x": x})


@pytest.mark.parametrize("op", ["DepthToSpace", "SpaceToDepth"])
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_space(op, mode):
    shape, out = ([2, 8, 3, 5], [2, 2, 6, 10]) if op == "DepthToSpace" else ([2, 3, 4, 6], [2, 12, 2, 3])
    m = _model(h.make_node(op, ["x"], ["y"], blocksize=2, mode=mode), [vi("x", T.FLOAT, shape)], [vi("y", T.FLOAT, out)], opset=28)
    check(m, {"x": rand(*shape)})


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_keep_aspect_ratio_policy(policy, mode):
    # sizes [7, 5] on a 4x6 image: one scale (min or max of 7/4, 5/6) for both axes
    out = [1, 1, 3, 5] if policy == "not_larger" else [1, 1, 7, 11]
    m = _model(h.make_node("Resize", ["x", "", "", "s"], ["y"], mode=mode, keep_aspect_ratio_policy=policy, axes=[2, 3]),
               [vi("x", T.FLOAT, [1, 1, 4, 6])], [vi("y", T.FLOAT, out)], [nh.from_array(np.array([7, 5], np.int64), "s")])
    check(m, {"x": rand(1, 1, 4, 6)}, rtol=1e-5, atol=1e-6)
