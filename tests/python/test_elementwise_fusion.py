"""The elementwise-fusion pass: a chain of element-wise ops (broadcast per-row and per-column
operands, a scalar constant, a tensor computed earlier, activations) becomes one node.

References: (1) the same program unfused (every intermediate made a graph output, which the
pass never fuses away): the fused output must equal it bit for bit, since both keep fp32
intermediates; (2) numpy in fp32, op by op: exact for the IEEE ALU ops, |err| <= 2e-6 |want| +
1e-7 after the ScalarE transcendentals (fp32 library functions, not numpy's).
"""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402

RNG = np.random.default_rng(7)
SHAPE = [2, 130, 520]  # two row tiles per batch, a ragged last one
CONSTS = {"row": RNG.standard_normal(SHAPE[-1]).astype(np.float32),  # per column
          "col": RNG.standard_normal((SHAPE[1], 1)).astype(np.float32),  # per row
          "half": np.array(0.5, np.float32)}
CHAIN = [("Add", ["x", "row"], "a"), ("Mul", ["col", "a"], "b"), ("Sub", ["b", "half"], "c"),
         ("Div", ["c", "d"], "e"), ("Max", ["e", "r"], "f"), ("Sigmoid", ["f"], "g"),
         ("Mul", ["x", "g"], "k"), ("Tanh", ["k"], "y")]


def build(outputs):
    nodes = [h.make_node("Relu", ["z"], ["r"], name="relu")]
    nodes += [h.make_node(op, ins, [o], name=f"n_{o}") for op, ins, o in CHAIN]
    inits = [nh.from_array(v, k) for k, v in CONSTS.items()]
    ins = [h.make_tensor_value_info(n, T.FLOAT, SHAPE) for n in ("x", "z", "d")]
    outs = [h.make_tensor_value_info(o, T.FLOAT, SHAPE) for o in outputs]
    g = h.make_graph(nodes, "chain", ins, outs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9), CONSTS


def feeds():
    rng = np.random.default_rng(1)
    d = rng.uniform(0.5, 2.0, SHAPE).astype(np.float32) * rng.choice([-1, 1], SHAPE).astype(np.float32)
    return {"x": rng.standard_normal(SHAPE).astype(np.float32), "z": rng.standard_normal(SHAPE).astype(np.float32), "d": d}


def numpy_chain(f, c):
    x, z, d = f["x"], f["z"], f["d"]
    r = np.maximum(z, np.float32(0))
    a = x + c["row"]
    b = c["col"] * a
    e = (b - c["half"]) / d
    g = np.float32(1) / (np.float32(1) + np.exp(-np.maximum(e, r)))
    return e, np.tanh(x * g)


def test_chain_is_one_node_and_matches_unfused_bit_for_bit_and_numpy():
    f = feeds()
    m, consts = build(["y"])
    cm = trnsim.compile_onnx(m.SerializeToString(), dtype="fp32")
    y = cm.run(f)["y"]
    ops = cm.report["ops"]
    assert len(ops) == 2, [o["op"] for o in ops]  # the Relu, and the chain as one node
    fused = next(o for o in ops if o["fused"])
    assert [fused["name"]] + fused["fused"] == [f"n_{o}" for _, _, o in CHAIN]
    assert "after pass 'elementwise-fusion'" in cm.dump_ir()

    # Unfused: every intermediate an output, so each op is its own kernel with an HBM round trip.
    mu, _ = build([o for _, _, o in CHAIN])
    cu = trnsim.compile_onnx(mu.SerializeToString(), dtype="fp32")
    yu = cu.run(f)
    assert len(cu.report["ops"]) == len(CHAIN) + 1
    assert np.array_equal(y.view(np.uint32), yu["y"].view(np.uint32))

    e, want = numpy_chain(f, consts)
    assert np.array_equal(yu["e"].view(np.uint32), e.view(np.uint32))  # IEEE ALU ops: exact
    np.testing.assert_allclose(y, want, rtol=2e-6, atol=1e-7)


def timed(m):
    cm = trnsim.compile_onnx(m.SerializeToString(), mode="timing")
    cm.run({})
    return cm.report["time_s"]


def test_fused_chain_is_faster_than_the_unfused_one():
    fused, unfused = timed(build(["y"])[0]), timed(build([o for _, _, o in CHAIN])[0])
    # 8 kernels, each loading and storing the whole tensor, against one that loads its three
    # inputs and stores once; the fused one is bound by its 8 ops on VectorE/ScalarE: > 1.5x.
    assert fused * 1.5 < unfused, (fused, unfused)


def test_integer_chains_stay_unfused():
    nodes = [h.make_node("Div", ["x", "two"], ["a"]), h.make_node("Add", ["a", "one"], ["y"])]
    g = h.make_graph(nodes, "int", [h.make_tensor_value_info("x", T.INT32, [4, 8])],
                     [h.make_tensor_value_info("y", T.INT32, [4, 8])],
                     [nh.from_array(np.array(2, np.int32), "two"), nh.from_array(np.array(1, np.int32), "one")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)
    cm = trnsim.compile_onnx(m.SerializeToString())
    x = np.arange(-16, 16, dtype=np.int32).reshape(4, 8)
    np.testing.assert_array_equal(cm.run({"x": x})["y"], (np.trunc(x / 2) + 1).astype(np.int32))
    assert len(cm.report["ops"]) == 2
