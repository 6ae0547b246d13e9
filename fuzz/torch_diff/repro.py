"""Minimal reproducers of fuzz/torch_diff/FINDINGS.md.
    cd /work/main && PYTHONPATH=python .venv/bin/python fuzz/torch_diff/repro.py"""
import warnings, torch, trnsim
from trnsim import torch_backend as tb


def show(name, f, x):
    class M(torch.nn.Module):
        def forward(self, x):
            return f(x)
    torch._dynamo.reset(); tb.reset_session()
    xe, xt = x.clone(), x.clone()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        e = M()(xe)
        t = torch.compile(M(), backend="trnsim", dynamic=False)(xt)
    r = tb.session_report()
    fb = [str(a.message) for a in w if "Fallback" in type(a.message).__name__]
    print(f"{name}: {'OK' if torch.equal(e, t) and torch.equal(xe, xt) else 'WRONG'}  on_chip={r['runs_on_chip']} "
          f"on_cpu={r['runs_on_cpu']} warnings={len(fb)}")
    print("   eager :", e.flatten()[:8].tolist(), " input after:", xe.flatten()[:4].tolist())
    print("   trnsim:", t.flatten()[:8].tolist(), " input after:", xt.flatten()[:4].tolist())


x = torch.arange(12.).reshape(3, 4) - 5
# Finding 1: an in-place method on a view is dropped (torch_rewrites.functionalize)
def slice_mul(x):
    y = x.clone(); y[:, :2].mul_(0.0); return y + 1
def t_add(x):
    y = x.clone(); y.t().add_(1.0); return y * 2
def base_add_read_view(x):
    y = x.clone(); v = y.view(-1); y.add_(100.0); return v * 1
def input_slice_mul(x):
    x[:, :2].mul_(0.0); return x.sum(-1)
show("1a slice.mul_", slice_mul, x)
show("1b t().add_", t_add, x)
show("1c base.add_ read through a view", base_add_read_view, x)
show("1d input[:, :2].mul_ (caller's tensor too)", input_slice_mul, x)
# Finding 2: // (floor_divide) exports as a truncating Div (PyTorch's TorchScript exporter)
show("2a float //", lambda x: x // 3, x)
show("2b int //", lambda x: x.long() // 3, x)
