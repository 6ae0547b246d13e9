"""The fixes the architecture sweep (test_architectures.py) needed, each on its own:

- op units, through trnsim.compile_onnx (fp32 policy) against onnx.reference
  (ReferenceEvaluator): Concat with an empty input (Phi-3's partial rotary gave NaN), ReduceL1 /
  ReduceL2 / ReduceSumSquare (rtol 1e-5: sums in another order), integer Mod with fmod=0 at run
  time and folded (exact), a pooling window covering the whole input with ceil_mode
  (EfficientNet's pooler; against PyTorch: onnx.reference refuses the window), ScatterND with
  int64 updates and reduction=max (exact);
- trnsim.torch_export_ops against PyTorch eager: histc, diff with prepend, the grouped MoE
  matmul, exported by the TorchScript exporter and run on the chip (|d| <= 1e-5 + 1e-5 |want|).
"""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
torch = pytest.importorskip("torch")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402
import trnsim.torch_export_ops  # noqa: E402
from test_compile_onnx import model  # noqa: E402  (a graph of these nodes)
from test_op_units import check  # noqa: E402  (onnx.reference against trnsim, shapes and values)

RNG = np.random.default_rng(23)


def _model18(nodes, inputs, outputs, inits=()):
    return model(nodes, inputs, outputs, inits, opset=18)  # Reduce* take axes as an input


def test_concat_drops_an_empty_input():
    x = RNG.standard_normal((2, 4, 8, 8)).astype(np.float32)
    cos = RNG.standard_normal((1, 1, 8, 8)).astype(np.float32)
    nodes = [h.make_node("Slice", ["x", "s0", "e0", "ax"], ["rot"]),   # all 8 lanes
             h.make_node("Slice", ["x", "s1", "e1", "ax"], ["pass"]),  # 0 lanes
             h.make_node("Mul", ["rot", "cos"], ["m"]),
             h.make_node("Concat", ["m", "pass"], ["y"], axis=-1)]
    inits = [nh.from_array(np.array(v, np.int64), n) for n, v in
             [("s0", [0]), ("e0", [8]), ("s1", [8]), ("e1", [100]), ("ax", [3])]]
    m = _model18(nodes, [h.make_tensor_value_info("x", T.FLOAT, x.shape), h.make_tensor_value_info("cos", T.FLOAT, cos.shape)],
               [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    check(m, {"x": x, "cos": cos}, rtol=1e-6)


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2", "ReduceSumSquare"])
@pytest.mark.parametrize("axes,keep", [([1], 1), ([0, 2], 0), ([2], 1)])
def test_reduce_norms(op, axes, keep):
    x = RNG.standard_normal((3, 5, 7)).astype(np.float32)
    m = _model18([h.make_node(op, ["x", "axes"], ["y"], keepdims=keep)], [h.make_tensor_value_info("x", T.FLOAT, x.shape)],
               [h.make_tensor_value_info("y", T.FLOAT, None)], [nh.from_array(np.array(axes, np.int64), "axes")])
    check(m, {"x": x}, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("folded", [False, True])
def test_integer_mod(fmod, folded):
    a = np.array([7, -7, 7, -7, 0, 5, -5, 12, -13, 3, 1000, -999], np.int64)
    b = np.array([3, 3, -3, -3, 4, 5, 2, -5, 4, 7, -7, 8], np.int64)
    ins = [h.make_tensor_value_info("z", T.INT64, a.shape)]
    nodes = [h.make_node("Mod", ["a", "b"], ["m"], fmod=fmod), h.make_node("Add", ["m", "z"], ["y"])]
    feeds = {"z": np.zeros_like(a)}
    inits = [nh.from_array(a, "a"), nh.from_array(b, "b")] if folded else []
    if not folded:
        ins += [h.make_tensor_value_info("a", T.INT64, a.shape), h.make_tensor_value_info("b", T.INT64, b.shape)]
        feeds.update(a=a, b=b)
    m = _model18(nodes, ins, [h.make_tensor_value_info("y", T.INT64, None)], inits)
    got = trnsim.compile_onnx(m.SerializeToString()).run(feeds)["y"]
    np.testing.assert_array_equal(got, np.mod(a, b) if fmod == 0 else np.fmod(a, b))


@pytest.mark.parametrize("pool", ["avg", "max"])
def test_pool_window_over_the_whole_input(pool):
    """A 64x64 kernel (4096+ elements) with ceil_mode over a 5x5 map: one window, the mean or max
    of the map (PyTorch's AvgPool2d/MaxPool2d as the reference)."""
    x = torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(3))
    mod = torch.nn.AvgPool2d(70, ceil_mode=True) if pool == "avg" else torch.nn.MaxPool2d(70, ceil_mode=True)
    traced = trnsim.trace(mod, x)
    with torch.no_grad():
        torch.testing.assert_close(traced(x), mod(x), rtol=1e-5, atol=1e-6)


def test_scatter_nd_int64_max():
    data = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    idx = np.array([[0], [2], [0]], np.int64)
    upd = np.array([[9, -1], [0, 8], [4, 7]], np.int64)
    m = _model18([h.make_node("ScatterND", ["data", "idx", "upd"], ["y"], reduction="max")],
               [h.make_tensor_value_info("data", T.INT64, data.shape), h.make_tensor_value_info("idx", T.INT64, idx.shape),
                h.make_tensor_value_info("upd", T.INT64, upd.shape)], [h.make_tensor_value_info("y", T.INT64, None)])
    check(m, {"data": data, "idx": idx, "upd": upd})


class _Histc(torch.nn.Module):
    def forward(self, x):
        return torch.histc(x, bins=5, min=0, max=4) * 1.0


class _Diff(torch.nn.Module):
    def forward(self, p):
        return torch.diff(p, prepend=p[:, :1] - 1, dim=-1)


class _GroupedMM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, 8, 8, generator=torch.Generator().manual_seed(5)))

    def forward(self, x):
        offs = torch.tensor([2, 5, 7], dtype=torch.int32)
        return torch._grouped_mm(x, self.w, offs=offs)


@pytest.mark.parametrize("name,module,x", [
    ("histc", _Histc(), torch.tensor([0.0, 1.0, 1.0, 4.0, 3.0, 3.0, 3.0, 2.0, 4.0, 0.5])),
    ("diff", _Diff(), torch.tensor([[0, 1, 2, 0, 1], [3, 4, 5, 6, 0]])),
    ("grouped_mm", _GroupedMM(), torch.randn(7, 8, generator=torch.Generator().manual_seed(6))),
])
def test_export_ops_run_on_the_chip(name, module, x):
    if name == "grouped_mm" and not hasattr(torch, "_grouped_mm"):
        pytest.skip("this torch has no _grouped_mm")
    with torch.no_grad():
        want = module(x)
        got = trnsim.trace(module, x)(x)
    torch.testing.assert_close(got.to(want.dtype), want, rtol=1e-5, atol=1e-5)


def test_grouped_mm_reference_matches_torch():
    if not hasattr(torch, "_grouped_mm"):
        pytest.skip("this torch has no _grouped_mm")
    g = torch.Generator().manual_seed(8)
    x, w = torch.randn(9, 8, generator=g), torch.randn(3, 8, 4, generator=g)
    offs = torch.tensor([3, 3, 9], dtype=torch.int32)  # an expert with no rows
    torch.testing.assert_close(trnsim.torch_export_ops._grouped_mm_reference(x, w, offs),
                               torch._grouped_mm(x, w, offs=offs), rtol=1e-5, atol=1e-5)
