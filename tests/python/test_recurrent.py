"""RNN, GRU and LSTM (ops/recurrent.cpp: unrolled over time into MatMul and element-wise kernels
on the chip) through trnsim.compile_onnx in functional mode (fp32 policy) against onnxruntime,
(layout 1: onnx.reference, which onnxruntime lacks), and torch.nn.LSTM/GRU exported by torch.onnx.export against PyTorch. Tolerance: rtol 1e-4,
atol 1e-5 (fp32; sums in another order)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402

RNG = np.random.default_rng(7)
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def rnn_model(op, S=5, B=3, I=4, H=6, direction="forward", layout=0, bias=True, h0=False, c0=False, seq_lens=None,
              peep=False, outputs=("Y", "Y_h", "Y_c"), **attrs):
    D = 2 if direction == "bidirectional" else 1
    G = GATES[op]
    x_shape = [B, S, I] if layout else [S, B, I]
    inits = [nh.from_array((0.5 * RNG.standard_normal((D, G * H, I))).astype(np.float32), "W"),
             nh.from_array((0.5 * RNG.standard_normal((D, G * H, H))).astype(np.float32), "R")]
    ins = ["X", "W", "R", "", "", "", "", ""]
    feeds = {"X": RNG.standard_normal(x_shape).astype(np.float32)}
    inputs = [h.make_tensor_value_info("X", T.FLOAT, x_shape)]
    if bias:
        inits.append(nh.from_array(RNG.standard_normal((D, 2 * G * H)).astype(np.float32), "B"))
        ins[3] = "B"
    if seq_lens is not None:
        inits.append(nh.from_array(np.array(seq_lens, np.int32), "L"))
        ins[4] = "L"
    state = [B, D, H] if layout else [D, B, H]
    for i, (on, name) in enumerate([(h0, "h0"), (c0, "c0")]):
        if on:
            inputs.append(h.make_tensor_value_info(name, T.FLOAT, state))
            feeds[name] = RNG.standard_normal(state).astype(np.float32)
            ins[5 + i] = name
    if peep:
        inits.append(nh.from_array(RNG.standard_normal((D, 3 * H)).astype(np.float32), "P"))
        ins[7] = "P"
    while ins and not ins[-1]:
        ins.pop()
    n_out = 3 if op == "LSTM" else 2
    outs = [o if o in outputs else "" for o in ("Y", "Y_h", "Y_c")[:n_out]]
    node = h.make_node(op, ins, outs, hidden_size=H, direction=direction, **({"layout": layout} if layout else {}), **attrs)
    g = h.make_graph([node], "rnn", inputs, [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs if o], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 14)], ir_version=8), feeds


def check(m, feeds, rtol=1e-4, atol=1e-5, reference="onnxruntime"):
    if reference == "onnxruntime":
        want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    else:  # onnxruntime has no batch-first (layout = 1) kernels: the ONNX reference implementation
        from onnx.reference import ReferenceEvaluator
        want = ReferenceEvaluator(m).run(None, feeds)
    got = trnsim.compile_onnx(m.SerializeToString()).run(feeds)
    for o, w in zip(m.graph.output, want):
        assert got[o.name].shape == w.shape, o.name
        np.testing.assert_allclose(got[o.name], w, rtol=rtol, atol=atol, err_msg=o.name)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_directions_with_initial_states(op, direction):
    check(*rnn_model(op, direction=direction, h0=True, c0=op == "LSTM"))


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_defaults_batch_first_no_bias(op):
    check(*rnn_model(op, layout=1, bias=False, direction="bidirectional"), reference="onnx")


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_sequence_lengths(op, direction):
    check(*rnn_model(op, B=3, S=4, seq_lens=[4, 2, 1], direction=direction, h0=True))


def test_gru_linear_before_reset_and_lstm_peepholes_clip():
    check(*rnn_model("GRU", linear_before_reset=1, direction="bidirectional"))
    check(*rnn_model("LSTM", peep=True, clip=0.8, h0=True, c0=True))
    check(*rnn_model("RNN", activations=["Relu"], outputs=("Y_h",)))


def test_unsupported_activation_is_one_line():
    m, feeds = rnn_model("RNN", activations=["Softsign"])
    with pytest.raises(trnsim.UnsupportedError, match=r"^unsupported: op RNN \(activation Softsign.*node"):
        trnsim.compile_onnx(m.SerializeToString()).run(feeds)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_torch_export(kind, tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = getattr(torch.nn, kind)(input_size=8, hidden_size=16, num_layers=2, batch_first=True, bidirectional=True).eval()
    x = torch.randn(2, 7, 8)
    with torch.no_grad():
        want = net(x)[0].numpy()
    path = tmp_path / "rnn.onnx"
    torch.onnx.export(net, (x,), str(path), dynamo=False, input_names=["x"], output_names=["y", "h"] if kind == "GRU" else ["y", "h", "c"])
    got = trnsim.compile_onnx(str(path)).run({"x": x.numpy()})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_fused_epilogue_chain_one_row():
    """The LSTM cell update c = sigmoid(a W + x) * c + sigmoid(a W + x) * tanh(a W + x) as plain
    ONNX ops, batch 1: a MatMul with three fused operands (once wrong: the operand ring held two)."""
    N = h.make_node
    nodes = [N("MatMul", ["a", "w"], ["m1"]), N("Add", ["x", "m1"], ["p1"]), N("Sigmoid", ["p1"], ["s1"]), N("Mul", ["s1", "c"], ["fc"]),
             N("MatMul", ["a", "w"], ["m2"]), N("Add", ["x", "m2"], ["p2"]), N("Sigmoid", ["p2"], ["ig"]),
             N("MatMul", ["a", "w"], ["m3"]), N("Add", ["x", "m3"], ["p3"]), N("Tanh", ["p3"], ["cg"]),
             N("Mul", ["ig", "cg"], ["ic"]), N("Add", ["fc", "ic"], ["y"])]
    ins = [h.make_tensor_value_info(n, T.FLOAT, [1, 3]) for n in ("a", "x", "c")]
    g = h.make_graph(nodes, "g", ins, [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(RNG.standard_normal((3, 3)).astype(np.float32), "w")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)
    check(m, {n: RNG.standard_normal((1, 3)).astype(np.float32) for n in ("a", "x", "c")})
