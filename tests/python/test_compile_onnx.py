"""trnsim.compile_onnx against onnxruntime on small models built with onnx.helper.

Tolerances: fp32 policy, every op computed in fp32 on the simulated engines: |got - want| <=
1e-5 + 1e-4 |want| (transcendentals on ScalarE are fp32 library functions; sums may be
ordered differently from onnxruntime's). bf16 policy (bf16 matmul operands, fp32
accumulation): 2e-2 relative to the output's scale.
"""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402

RNG = np.random.default_rng(0)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "test", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=9)


def vi(name, shape, t=T.FLOAT):
    return h.make_tensor_value_info(name, t, shape)


def init(name, a):
    return nh.from_array(np.asarray(a), name)


def reference(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def check(m, feeds, dtype="fp32", rtol=1e-4, atol=1e-5, **kw):
    want = reference(m, feeds)
    cm = trnsim.compile_onnx(m.SerializeToString(), dtype=dtype, **kw)
    got = cm.run(feeds)
    assert set(got) == set(want)
    for k in want:
        assert got[k].shape == want[k].shape, k
        assert got[k].dtype == want[k].dtype, k
        if dtype == "fp32":
            np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=k)
        else:
            scale = float(np.abs(want[k]).max()) or 1.0
            assert np.abs(got[k] - want[k]).max() <= 2e-2 * scale, k
    assert cm.report["time_s"] > 0
    return cm


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_mlp_gemm_relu_softmax_matches_onnxruntime():
    nodes = [h.make_node("Gemm", ["x", "W1", "B1"], ["h"], transB=1),
             h.make_node("Relu", ["h"], ["r"]),
             h.make_node("Gemm", ["r", "W2", "B2"], ["o"], alpha=0.5, beta=2.0),
             h.make_node("Softmax", ["o"], ["y"], axis=1)]
    m = model(nodes, [vi("x", ["batch", 96])], [vi("y", ["batch", 10])],
              [init("W1", rand(200, 96) * 0.1), init("B1", rand(200)), init("W2", rand(200, 10) * 0.1), init("B2", rand(10))])
    cm = check(m, {"x": rand(3, 96)}, batch=3)
    ops = [o["op"] for o in cm.report["ops"]]
    assert "MatMul" in ops and "Softmax" in ops
    # the bias add and Relu were fused into the first matmul
    assert any(o["fused"] for o in cm.report["ops"])
    check(m, {"x": rand(3, 96)}, dtype="bf16", batch=3)


def test_run_with_new_batch_recompiles():
    m = model([h.make_node("MatMul", ["x", "W"], ["y"])], [vi("x", ["n", 8])], [vi("y", ["n", 4])], [init("W", rand(8, 4))])
    cm = trnsim.compile_onnx(m.SerializeToString())
    assert cm.input_shapes == {"x": (1, 8)}
    x = rand(5, 8)
    np.testing.assert_allclose(cm.run([x])["y"], reference(m, {"x": x})["y"], rtol=1e-4, atol=1e-5)


def test_conv_pool_cnn():
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
             h.make_node("Relu", ["c"], ["r"]),
             h.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("Conv", ["p", "w2"], ["c2"], strides=[2, 2], group=2),
             h.make_node("GlobalAveragePool", ["c2"], ["g"]),
             h.make_node("Flatten", ["g"], ["y"])]
    m = model(nodes, [vi("x", [2, 3, 12, 12])], [vi("y", [2, 4])],
              [init("w", rand(6, 3, 3, 3) * 0.3), init("b", rand(6)), init("w2", rand(4, 3, 3, 3) * 0.3)])
    check(m, {"x": rand(2, 3, 12, 12)})


def test_layernorm_and_reductions():
    nodes = [h.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1, epsilon=1e-5),
             h.make_node("ReduceMean", ["ln", "axes1"], ["m"], keepdims=1),
             h.make_node("Sub", ["ln", "m"], ["d"]),
             h.make_node("ReduceMax", ["d", "axes02"], ["mx"], keepdims=0),
             h.make_node("ReduceSum", ["x", "axes0"], ["s"], keepdims=0)]
    m = model(nodes, [vi("x", [2, 5, 48])], [vi("d", [2, 5, 48]), vi("mx", [5]), vi("s", [5, 48])],
              [init("g", rand(48)), init("b", rand(48)), init("axes1", np.array([1], np.int64)), init("axes0", np.array([0], np.int64)),
               init("axes02", np.array([0, 2], np.int64))],
              opset=18)
    check(m, {"x": rand(2, 5, 48)})


def test_attention_shaped_block():
    # scores = softmax(Q K^T / sqrt(d) + mask); out = scores V, heads split by Reshape/Transpose
    B, S, H, D = 1, 16, 2, 8
    E = H * D
    nodes = [h.make_node("MatMul", ["x", "Wq"], ["q"]), h.make_node("MatMul", ["x", "Wk"], ["k"]),
             h.make_node("MatMul", ["x", "Wv"], ["v"]),
             h.make_node("Reshape", ["q", "heads"], ["q4"]), h.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
             h.make_node("Reshape", ["k", "heads"], ["k4"]), h.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
             h.make_node("Reshape", ["v", "heads"], ["v4"]), h.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
             h.make_node("MatMul", ["qh", "kt"], ["s"]), h.make_node("Div", ["s", "scale"], ["ss"]),
             h.make_node("Add", ["ss", "mask"], ["sm"]), h.make_node("Softmax", ["sm"], ["p"], axis=-1),
             h.make_node("MatMul", ["p", "vh"], ["o4"]), h.make_node("Transpose", ["o4"], ["ot"], perm=[0, 2, 1, 3]),
             h.make_node("Reshape", ["ot", "flat"], ["y"])]
    mask = np.triu(np.full((S, S), -1e9, np.float32), 1)
    m = model(nodes, [vi("x", [B, S, E])], [vi("y", [B, S, E])],
              [init("Wq", rand(E, E) * 0.3), init("Wk", rand(E, E) * 0.3), init("Wv", rand(E, E) * 0.3),
               init("heads", np.array([B, S, H, D], np.int64)), init("flat", np.array([B, S, E], np.int64)),
               init("scale", np.array(np.sqrt(D), np.float32)), init("mask", mask)])
    check(m, {"x": rand(B, S, E)})


def test_qkv_projections_fuse_into_one_matmul():
    # Q, K, V projections of one input (with biases) feed one attention: one MatMul by the
    # [E, 3E] weight, the attention reading column ranges of its output (fuse_qkv.h). Values
    # against onnxruntime under both policies; the per-op report has one projection MatMul.
    # 2 x 80 tokens: more than one 128-row tile (one tile keeps the projections apart).
    B, S, H, D = 2, 80, 2, 8
    E = H * D
    nodes = []
    for r in "qkv":
        nodes += [h.make_node("MatMul", ["x", f"W{r}"], [f"{r}m"], name=f"{r}_proj"), h.make_node("Add", [f"{r}m", f"b{r}"], [r]),
                  h.make_node("Reshape", [r, "heads"], [f"{r}4"])]
    nodes += [h.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]), h.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
              h.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
              h.make_node("MatMul", ["qh", "kt"], ["s"]), h.make_node("Div", ["s", "scale"], ["ss"]),
              h.make_node("Softmax", ["ss"], ["p"], axis=-1),
              h.make_node("MatMul", ["p", "vh"], ["o4"]), h.make_node("Transpose", ["o4"], ["ot"], perm=[0, 2, 1, 3]),
              h.make_node("Reshape", ["ot", "flat"], ["y"])]
    inits = [init("heads", np.array([B, S, H, D], np.int64)), init("flat", np.array([B, S, E], np.int64)),
             init("scale", np.array(np.sqrt(D), np.float32))]
    for r in "qkv":
        inits += [init(f"W{r}", rand(E, E) * 0.3), init(f"b{r}", rand(E) * 0.1)]
    m = model(nodes, [vi("x", [B, S, E])], [vi("y", [B, S, E])], inits)
    feeds = {"x": rand(B, S, E)}
    for dtype in ("fp32", "bf16"):
        cm = check(m, feeds, dtype=dtype)
        mms = [o for o in cm.report["ops"] if o["op"] == "MatMul"]
        assert len(mms) == 1 and mms[0]["name"] == "q_proj" and {"k_proj", "v_proj"} <= set(mms[0]["fused"]), mms


def test_qkv_fusion_of_chained_attention_blocks_in_one_pass():
    # fuse_qkv matches every block on the graph as it was, then compacts once (linear in the
    # nodes): three blocks in a chain, each block's output the next one's input, all fused and
    # the values against onnxruntime.
    B, S, H, D, L = 2, 80, 2, 8, 3
    E = H * D
    nodes, inits = [], [init("heads", np.array([B, S, H, D], np.int64)), init("flat", np.array([B, S, E], np.int64)),
                        init("scale", np.array(np.sqrt(D), np.float32))]
    for b in range(L):
        x, y = ("x" if b == 0 else f"y{b - 1}"), ("y" if b == L - 1 else f"y{b}")
        for r in "qkv":
            nodes += [h.make_node("MatMul", [x, f"W{r}{b}"], [f"{r}m{b}"], name=f"{r}_proj{b}"),
                      h.make_node("Reshape", [f"{r}m{b}", "heads"], [f"{r}4{b}"])]
            inits.append(init(f"W{r}{b}", rand(E, E) * 0.3))
        nodes += [h.make_node("Transpose", [f"q4{b}"], [f"qh{b}"], perm=[0, 2, 1, 3]),
                  h.make_node("Transpose", [f"k4{b}"], [f"kt{b}"], perm=[0, 2, 3, 1]),
                  h.make_node("Transpose", [f"v4{b}"], [f"vh{b}"], perm=[0, 2, 1, 3]),
                  h.make_node("MatMul", [f"qh{b}", f"kt{b}"], [f"s{b}"]), h.make_node("Div", [f"s{b}", "scale"], [f"ss{b}"]),
                  h.make_node("Softmax", [f"ss{b}"], [f"p{b}"], axis=-1),
                  h.make_node("MatMul", [f"p{b}", f"vh{b}"], [f"o4{b}"]),
                  h.make_node("Transpose", [f"o4{b}"], [f"ot{b}"], perm=[0, 2, 1, 3]),
                  h.make_node("Reshape", [f"ot{b}", "flat"], [y])]
    m = model(nodes, [vi("x", [B, S, E])], [vi("y", [B, S, E])], inits)
    cm = check(m, {"x": rand(B, S, E)})
    mms = [o for o in cm.report["ops"] if o["op"] == "MatMul"]
    assert sorted(o["name"] for o in mms) == [f"q_proj{b}" for b in range(L)], mms
    for o in mms:
        b = o["name"][-1]
        assert {f"k_proj{b}", f"v_proj{b}"} <= set(o["fused"]), mms


def test_embedding_gather_and_shape_subgraph():
    # ids -> embedding rows (run-time indices), plus a Shape -> Gather -> Unsqueeze -> Concat ->
    # Reshape chain as PyTorch's exporter writes it, Where/Equal/Expand/Slice/Concat/Cast.
    V, E = 50, 16
    nodes = [h.make_node("Gather", ["emb", "ids"], ["e"]),
             h.make_node("Shape", ["ids"], ["sh"]),
             h.make_node("Gather", ["sh", "one"], ["n"], axis=0),
             h.make_node("Unsqueeze", ["n", "zero1"], ["nu"]),
             h.make_node("Concat", ["nu", "e_dim"], ["newshape"], axis=0),
             h.make_node("Reshape", ["e", "newshape"], ["e2"]),
             h.make_node("Equal", ["ids", "zero"], ["pad"]),
             h.make_node("Cast", ["pad"], ["padf"], to=T.FLOAT),
             h.make_node("Expand", ["bias", "newshape"], ["bx"]),
             h.make_node("Transpose", ["pad"], ["padT"]),
             h.make_node("Where", ["padT", "bx", "e2"], ["w"]),
             h.make_node("Slice", ["w", "s0", "s1", "s_axes", "s_steps"], ["sl"]),
             h.make_node("Concat", ["sl", "sl"], ["y"], axis=1),
             h.make_node("ReduceSum", ["padf"], ["npad"], keepdims=0)]
    m = model(nodes, [vi("ids", [1, 6], T.INT64)], [vi("y", [6, 8]), vi("npad", [], T.FLOAT)],
              [init("emb", rand(V, E)), init("one", np.array(1, np.int64)), init("zero1", np.array([0], np.int64)),
               init("e_dim", np.array([E], np.int64)), init("zero", np.array(0, np.int64)), init("bias", rand(E)),
               init("s0", np.array([1], np.int64)), init("s1", np.array([9], np.int64)), init("s_axes", np.array([1], np.int64)),
               init("s_steps", np.array([2], np.int64))])
    ids = np.array([[3, 0, 49, 7, 0, 12]], np.int64)
    check(m, {"ids": ids})


def test_elementwise_ops():
    nodes = [h.make_node("Mul", ["x", "x"], ["x2"]), h.make_node("Pow", ["x2", "half"], ["ax"]),
             h.make_node("Sqrt", ["ax"], ["s"]), h.make_node("Erf", ["x"], ["er"]), h.make_node("Tanh", ["x"], ["th"]),
             h.make_node("Sigmoid", ["x"], ["sg"]), h.make_node("Exp", ["x"], ["ex"]), h.make_node("Neg", ["x"], ["ng"]),
             h.make_node("LeakyRelu", ["x"], ["lr"], alpha=0.2), h.make_node("Max", ["x", "b"], ["mx"]),
             h.make_node("Clip", ["x", "lo", "hi"], ["cl"]), h.make_node("Gelu", ["x"], ["ge"]),
             h.make_node("Div", ["ex", "b2"], ["dv"])]
    outs = ["s", "er", "th", "sg", "ng", "lr", "mx", "cl", "ge", "dv"]
    m = model(nodes, [vi("x", [4, 33])], [vi(o, [4, 33]) for o in outs],
              [init("half", np.array(0.5, np.float32)), init("b", rand(33)), init("lo", np.array(-0.5, np.float32)),
               init("hi", np.array(0.7, np.float32)), init("b2", np.abs(rand(4, 1)) + 1)], opset=20)
    check(m, {"x": rand(4, 33)})


def test_timing_mode_and_report():
    m = model([h.make_node("MatMul", ["x", "W"], ["y"])], [vi("x", [128, 256])], [vi("y", [128, 512])], [init("W", rand(256, 512))])
    for chip in ("trn1", "trn2", "trn3"):
        cm = trnsim.compile_onnx(m.SerializeToString(), chip=chip, mode="timing")
        assert cm.run({}) == {}
        r = cm.report
        assert r["time_s"] > 0 and r["hbm_bytes"] > 0 and r["ops"][0]["op"] == "MatMul"
        assert "TensorE" in r["engines"] and r["compile_time_s"] >= 0


def test_dump_ir_names_every_pass():
    m = model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])])
    ir = trnsim.compile_onnx(m.SerializeToString()).dump_ir()
    for p in ("shape-inference", "constant-folding", "decomposition", "fusion", "memory-planning", "lowering"):
        assert f"after pass '{p}'" in ir


def test_unsupported_op_and_attribute_are_named():
    m = model([h.make_node("Det", ["x"], ["y"], name="det0")], [vi("x", [2, 2])], [vi("y", [])])
    with pytest.raises(trnsim.UnsupportedError, match=r"unsupported: op Det at node 'det0'"):
        trnsim.compile_onnx(m.SerializeToString())
    m = model([h.make_node("Softmax", ["x"], ["y"], name="sm", bogus=1)], [vi("x", [2, 2])], [vi("y", [2, 2])])
    with pytest.raises(trnsim.UnsupportedError, match=r"unsupported: op Softmax \(attribute bogus\) at node 'sm'"):
        trnsim.compile_onnx(m.SerializeToString())


def test_malformed_model_is_an_error():
    with pytest.raises(trnsim.TrnsimError, match="not a valid ONNX model"):
        trnsim.compile_onnx(b"\x01\x02garbage")
    with pytest.raises(trnsim.TrnsimError, match="cannot open"):
        trnsim.compile_onnx("/nonexistent/model.onnx")


def test_shape_operand_input_is_specialised_on_its_value():
    # Reshape's shape is a graph input: each value compiles (and caches) its own program, with
    # the value bound as a constant; both match onnxruntime.
    m = model([h.make_node("Reshape", ["x", "s"], ["y"]), h.make_node("Relu", ["y"], ["z"])],
              [vi("x", [2, 3, 4]), vi("s", [2], T.INT64)], [vi("z", None)])
    cm = trnsim.compile_onnx(m.SerializeToString())
    assert cm.input_names == ["x", "s"] and cm.specialized_inputs == ["s"]
    x = rand(2, 3, 4)
    for shape in ([6, 4], [4, -1], [6, 4]):
        feeds = {"x": x, "s": np.array(shape, np.int64)}
        got = cm.run(feeds)["z"]
        want = reference(m, feeds)["z"]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
        assert cm.report["specialized_inputs"] == {"s": shape}
        assert cm.dump_ir().startswith(f"specialized input s = {shape}")
    assert len(cm._cache) == 2  # [6, 4] ran twice on one program
    with pytest.raises(trnsim.ShapeError):
        cm.run({"x": x})


def test_slice_operands_as_inputs_are_specialised():
    m = model([h.make_node("Slice", ["x", "st", "en", "ax"], ["y"])],
              [vi("x", [4, 6]), vi("st", [1], T.INT64), vi("en", [1], T.INT64), vi("ax", [1], T.INT64)],
              [vi("y", None)])
    cm = trnsim.compile_onnx(m.SerializeToString())
    x = rand(4, 6)
    for st, en, ax in ((1, 3, 0), (2, 5, 1)):
        feeds = {"x": x, "st": np.array([st]), "en": np.array([en]), "ax": np.array([ax])}
        np.testing.assert_array_equal(cm.run(feeds)["y"], reference(m, feeds)["y"])
    assert sorted(cm.specialized_inputs) == ["ax", "en", "st"]


@pytest.mark.parametrize("to,sat", [(T.FLOAT8E4M3FN, 1), (T.FLOAT8E4M3FN, 0), (T.FLOAT8E5M2, 1), (T.FLOAT8E5M2, 0),
                                    (T.FLOAT4E2M1, 1)])
def test_cast_to_narrow_floats_matches_onnx_reference_bit_for_bit(to, sat):
    from onnx.reference import ReferenceEvaluator
    attrs = {"saturate": sat} if to != T.FLOAT4E2M1 else {}
    m = model([h.make_node("Cast", ["x"], ["y"], to=to, **attrs)], [vi("x", [3, 8])], [vi("y", [3, 8], to)], opset=21)
    x = np.concatenate([RNG.standard_normal(16).astype(np.float32) * 4,
                        np.array([np.inf, -np.inf, np.nan, 1e6, -1e6, 0.0, -0.0, 3e-5], np.float32)]).reshape(3, 8)
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = trnsim.compile_onnx(m.SerializeToString()).run({"x": x})["y"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_shape_operand_computed_from_an_input_is_a_typed_refusal_naming_the_tensor():
    # Reshape's shape is Add(s, s): computed at run time but not itself a graph input, so it
    # cannot be specialised; the refusal is a ConstantRequiredError naming 's2', and the
    # message is the importer's usual one-line "unsupported: ...".
    g = h.make_graph([h.make_node("Add", ["s", "s"], ["s2"]), h.make_node("Reshape", ["x", "s2"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [6, 4]), h.make_tensor_value_info("s", T.INT64, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    with pytest.raises(trnsim.ConstantRequiredError) as e:
        trnsim.compile_onnx(m.SerializeToString())
    assert e.value.tensors == ["s2"]
    assert isinstance(e.value, trnsim.UnsupportedError)
    assert str(e.value) == ("unsupported: op Reshape (input 1 's2' computed at run time; it must be constant) "
                            "at node 'Reshape_1'")
