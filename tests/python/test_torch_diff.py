"""Round 9 of hardening, the PyTorch frontend (`fuzz/torch_diff/`, FINDINGS.md): two silent
wrong answers of `torch.compile(backend="trnsim")`, each against eager PyTorch (exact: these
are copies, signs and integer or small float arithmetic).

1. An in-place method through a view (`y[:, :2].mul_(0)`, `y.t().add_(1)`, a base updated and
   read through an earlier view, a graph input updated through a slice) was lost by the
   functionalising rewrite, on the chip, with no warning. Such a graph now runs eagerly with a
   FallbackWarning naming the update; results and the caller's tensors equal eager's.
2. `a // b` of floats exported as a truncating Div (torch's TorchScript exporter): -5.0 // 3
   gave -1. It floors now, on the chip."""
import warnings

import pytest

torch = pytest.importorskip("torch")

import trnsim  # noqa: E402,F401
from trnsim import torch_backend as tb  # noqa: E402


def compiled(f, x):
    class M(torch.nn.Module):
        def forward(self, x):
            return f(x)
    torch._dynamo.reset()
    tb.reset_session()
    xe, xt = x.clone(), x.clone()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        want = M()(xe)
        got = torch.compile(M(), backend="trnsim", dynamic=False)(xt)
    fallbacks = [str(a.message) for a in w if "Fallback" in type(a.message).__name__]
    return want, got, xe, xt, tb.session_report(), fallbacks


X = torch.arange(12.).reshape(3, 4) - 5


def slice_mul(x):
    y = x.clone()
    y[:, :2].mul_(0.0)
    return y + 1


def t_add(x):
    y = x.clone()
    y.t().add_(1.0)
    return y * 2


def base_add_read_view(x):
    y = x.clone()
    v = y.view(-1)
    y.add_(100.0)
    return v * 1


def input_slice_mul(x):
    x[:, :2].mul_(0.0)
    return x.sum(-1)


@pytest.mark.parametrize("f", [slice_mul, t_add, base_add_read_view, input_slice_mul])
def test_in_place_through_a_view_falls_back_with_a_warning(f):
    want, got, xe, xt, report, fallbacks = compiled(f, X)
    assert torch.equal(want, got) and torch.equal(xe, xt)
    assert report["runs_on_chip"] == 0 and len(fallbacks) == 1 and "in-place" in fallbacks[0], fallbacks


def test_in_place_on_a_plain_tensor_still_runs_on_the_chip():
    """What functionalising is for (a KV cache's add_ on a tensor no view reads) is unchanged."""
    def f(x):
        y = x * 2
        y.add_(1.0)
        return y
    want, got, *_, report, fallbacks = compiled(f, X)
    assert torch.equal(want, got) and report["runs_on_chip"] == 1 and not fallbacks


@pytest.mark.parametrize("f", [lambda x: x // 3, lambda x: x // -3, lambda x: x // (x.abs() + 1)],
                         ids=["float", "float-neg", "tensor"])
def test_floor_divide_floors_on_the_chip(f):
    """Floats. Integers of opposite signs still truncate (torch's symbolic, kept for the shape
    arithmetic it folds: docs/hardening.md, round 9)."""
    want, got, *_, report, fallbacks = compiled(f, X)
    assert torch.equal(want, got), (want, got)
    assert report["runs_on_chip"] == 1 and not fallbacks
