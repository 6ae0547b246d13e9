"""Differential fuzz of the PyTorch front end: torch.compile(m, backend="trnsim") vs eager.

    cd /work/main && PYTHONPATH=python nice -n 10 .venv/bin/python fuzz/torch_diff/run.py [-j 2] [--only SUBSTR] [--json out.json]

Each case runs in its own subprocess (60 s). Outcomes: PASS, WRONG, REFUSED (FallbackWarning /
TrnsimError naming why), SILENT_CPU (a graph ran on the CPU with no warning, or nothing ran on
the chip), CRASH, TIMEOUT."""
import argparse, json, os, subprocess, sys, time, math
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

def F(): import torch.nn.functional as F; return F

# ---------------------------------------------------------------- the case list
def case_list():
    C = {}
    acts = ["gelu", "gelu_tanh", "silu", "relu", "hardswish", "mish"]
    for i, a in enumerate(acts):
        C[f"lin_{a}"] = ("lin_chain", dict(act=a))
        C[f"lin_{a}_big"] = ("lin_chain", dict(act=a, rows=129 + 37 * i, h=[64, 96, 128, 192, 256, 160][i]))
    C["lin_nobias_300"] = ("lin_chain", dict(act="relu", rows=300, h=256, bias=False, depth=3))
    for k in ["ln", "rms", "lnln", "lnln_aff"]:
        C[f"norm_{k}"] = ("norm_linear", dict(kind=k))
        C[f"norm_{k}_big"] = ("norm_linear", dict(kind=k, rows=200, h=128))
        C[f"norm_{k}_b3"] = ("norm_linear", dict(kind=k, rows=131, h=64, batch=2))
    for mode in ["plain", "causal", "fmask", "bmask", "drop0", "scale"]:
        C[f"sdpa_{mode}"] = ("sdpa", dict(mode=mode))
    C["sdpa_causal_rect"] = ("sdpa", dict(mode="causal", sq=4, sk=8))
    C["sdpa_causal_big"] = ("sdpa", dict(mode="causal", sq=160, sk=160, d=32))
    C["sdpa_fmask_big"] = ("sdpa", dict(mode="fmask", sq=130, sk=140, d=64))
    C["sdpa_gqa"] = ("sdpa", dict(mode="gqa", hq=4, hkv=2))
    C["sdpa_gqa_causal"] = ("sdpa", dict(mode="gqa_causal", hq=6, hkv=2, sq=9, sk=9))
    C["hand_attn"] = ("hand_attn", dict())
    C["hand_attn_nc"] = ("hand_attn", dict(causal=False))
    C["hand_attn_rope"] = ("hand_attn", dict(rope=True))
    C["hand_attn_rope_big"] = ("hand_attn", dict(rope=True, S=150, h=64, heads=4))
    C["emb"] = ("emb", dict())
    C["emb_big"] = ("emb", dict(V=300, h=128, B=1, S=200))
    for s in ["dense", "gather", "index_add", "gatherp"]:
        C[f"moe_{s}"] = ("moe", dict(style=s))
    C["moe_dense_big"] = ("moe", dict(style="dense", T=150, h=64, E=8, k=2))
    C["conv2d_max"] = ("conv", dict(dim=2, pool="max"))
    C["conv2d_avg"] = ("conv", dict(dim=2, pool="avg"))
    C["conv1d_max"] = ("conv", dict(dim=1, pool="max"))
    C["conv1d_avg"] = ("conv", dict(dim=1, pool="avg", S=40))
    # lambdas: (name, expr-body, shapes, lin)
    L = {
        "clamp_inf_lo": ("torch.clamp(a[0], min=float('-inf'), max=1.0)", [(8, 16)]),
        "clamp_inf_hi": ("torch.clamp(a[0], min=-1.0, max=float('inf'))", [(8, 16)]),
        "clamp_inf_both": ("torch.clamp(a[0], min=float('-inf'), max=float('inf')) + 1", [(8, 16)]),
        "clamp_min_only": ("a[0].clamp(min=0.5) * 2", [(8, 16)]),
        "clamp_lo_pinf": ("torch.clamp(a[0], min=float('inf'))", [(4, 8)]),
        "where": ("torch.where(a[0] > a[1], a[0], a[1] * 2)", [(8, 16), (8, 16)]),
        "where_scalar": ("torch.where(a[0] > 0, a[0], 0.0)", [(8, 16)]),
        "where_inf": ("torch.where(a[0] > 0, a[0], float('-inf')).softmax(-1)", [(8, 16)]),
        "masked_fill_ninf": ("a[0].masked_fill(a[1] > 1.0, float('-inf')).softmax(-1)", [(8, 16), (8, 16)]),
        "masked_fill_row_allinf": ("a[0].masked_fill(torch.arange(16) >= 0, float('-inf')).softmax(-1)", [(4, 16)]),
        "masked_fill_ninf_nosm": ("a[0].masked_fill(a[1] > 1.0, float('-inf')) * 1.0", [(8, 16), (8, 16)]),
        "cumsum_last": ("a[0].cumsum(-1)", [(8, 16)]),
        "cumsum_0": ("a[0].cumsum(0)", [(8, 16)]),
        "cumsum_big": ("a[0].cumsum(1)", [(2, 300, 64)]),
        "cumsum_rev": ("a[0].flip(-1).cumsum(-1).flip(-1)", [(8, 16)]),
        "softmax_dim0": ("a[0].softmax(0)", [(8, 16)]),
        "softmax_dim1_3d": ("a[0].softmax(1)", [(2, 8, 16)]),
        "softmax_dim1_4d": ("a[0].softmax(1)", [(2, 5, 6, 7)]),
        "logsoftmax_dim0": ("torch.log_softmax(a[0], 0)", [(8, 16)]),
        "softmax_dim0_big": ("a[0].softmax(0)", [(200, 130)]),
        "permute_chain": ("a[0].permute(2, 0, 1).reshape(16, -1).t().contiguous().view(2, 4, 4, 4).sum(1)", [(2, 4, 16)]),
        "transpose_matmul": ("a[0].transpose(0, 1) @ a[1]", [(16, 8), (16, 12)]),
        "transpose_lin_big": ("self.lin(a[0].transpose(-1, -2)).transpose(-1, -2)", [(2, 64, 150)], 64),
        "reshape_lin": ("self.lin(a[0].reshape(-1, 32)).reshape(4, 5, 32).permute(1, 0, 2)", [(20, 32)], 32),
        "inplace_add": ("a[0].add_(1.0).mul_(2.0) + a[0]", [(8, 16)]),
        "inplace_relu": ("torch.relu_(self.lin(a[0])) * 2", [(8, 16)], 16),
        "inplace_slice": ("(lambda y: (y[:, :4].mul_(0.0), y)[1])(a[0].clone()) + 1", [(8, 16)]),
        "inplace_input_mut": ("(a[0].mul_(3.0), a[0].sum(-1))[1]", [(8, 16)]),
        "residual_chain": ("(lambda h: self.lin(h) + h)(self.lin(a[0]) + a[0])", [(8, 32)], 32),
        "maxmin_reduce": ("a[0].amax(-1) - a[0].amin(0).sum()", [(8, 16)]),
        "norm_l2": ("torch.nn.functional.normalize(a[0], dim=-1)", [(8, 16)]),
        "div_zero": ("a[0] / (a[1] > 0).float()", [(8, 16), (8, 16)]),
        "log_neg": ("torch.log(a[0])", [(8, 16)]),
        "sqrt_neg": ("torch.sqrt(a[0]) + 1", [(8, 16)]),
        "exp_big": ("torch.exp(a[0] * 40)", [(8, 16)]),
        "pow_int": ("a[0] ** 3 - a[0].pow(2)", [(8, 16)]),
        "erf_tanh": ("torch.erf(a[0]) + torch.tanh(a[0]) + torch.sigmoid(a[0])", [(8, 16)]),
        "var_mean": ("a[0].var(-1, keepdim=True) + a[0].mean(0)", [(8, 16)]),
        "std_unbiased0": ("a[0].std(0)", [(8, 16)]),
        "expand_bcast": ("a[0].unsqueeze(1).expand(4, 3, 16) * a[1].unsqueeze(0)", [(4, 16), (3, 16)]),
        "cat_split": ("torch.cat(a[0].chunk(4, -1)[::-1], -1)", [(8, 16)]),
        "tril_mask": ("a[0].tril() + a[0].triu(1) * 2", [(8, 8)]),
        "argmax_gather": ("torch.gather(a[0], 1, a[0].argmax(1, keepdim=True))", [(8, 16)]),
        "sort_vals": ("a[0].sort(-1).values", [(8, 16)]),
        "topk_vals_idx": ("(lambda t: t.values + t.indices.float())(a[0].topk(3, dim=-1))", [(8, 16)]),
        "topk_dim0": ("a[0].topk(2, dim=0).values", [(8, 16)]),
        "scatter_add": ("torch.zeros(4, 16).scatter_add(0, (a[0].abs() * 10).long() % 4, a[0])", [(8, 16)]),
        "index_select": ("a[0].index_select(0, torch.tensor([3, 1, 1, 0]))", [(8, 16)]),
        "neg_index": ("a[0][:, -3:] * a[0][-2:].sum(0)[-3:]", [(8, 16)]),
        "strided_slice": ("a[0][::2, 1::3]", [(8, 16)]),
        "abs_sign": ("a[0].abs() * a[0].sign()", [(8, 16)]),
        "round_floor": ("a[0].round() + a[0].floor() + a[0].ceil()", [(8, 16)]),
        "fmod_rem": ("torch.remainder(a[0], 1.5) + torch.fmod(a[0], 1.5)", [(8, 16)]),
        "max_pairwise": ("torch.maximum(a[0], a[1]) - torch.minimum(a[0], a[1])", [(8, 16), (8, 16)]),
        "bmm_big": ("a[0] @ a[1]", [(2, 150, 64), (2, 64, 130)]),
        "lin3d_big": ("torch.nn.functional.gelu(self.lin(a[0]))", [(3, 129, 256)], 256),
        "leaky_elu": ("torch.nn.functional.leaky_relu(a[0], 0.1) + torch.nn.functional.elu(a[0]) + torch.nn.functional.softplus(a[0])", [(8, 16)]),
        "hardsig_relu6": ("torch.nn.functional.hardsigmoid(a[0]) + torch.nn.functional.relu6(a[0]) + torch.nn.functional.hardtanh(a[0], -2, 2)", [(8, 16)]),
        "int_arith": ("(a[0] * 4).long() // 3 % 5", [(8, 16)]),
        "bool_logic": ("((a[0] > 0) & (a[1] < 0) | ~(a[0] > 1)).float()", [(8, 16), (8, 16)]),
        "mean_multi": ("a[0].mean((0, 2))", [(3, 4, 5)]),
        "prod": ("a[0].prod(-1)", [(4, 6)]),
        "logsumexp": ("torch.logsumexp(a[0] * 10, -1)", [(8, 16)]),
        "floordiv_float": ("a[0] // 3", [(8, 16)]),
        "floordiv_int": ("a[0].long() // 3", [(8, 16)]),
        "div_floor_float": ("torch.div(a[0], 3, rounding_mode='floor')", [(8, 16)]),
        "div_floor_int": ("torch.div(a[0].long(), 3, rounding_mode='floor')", [(8, 16)]),
        "inplace_view_t": ("(lambda y: (y.t().add_(1.0), y)[1])(a[0].clone()) * 2", [(8, 16)]),
        "inplace_view_row_relu": ("(lambda y: (y[0].relu_(), y)[1])(a[0].clone()) * 2", [(8, 16)]),
        "inplace_base_read_view": ("(lambda y, v: (y.add_(100.0), v * 1)[1])(*(lambda y: (y, y.view(-1)))(a[0].clone()))", [(8, 16)]),
        "inplace_input_slice": ("(a[0][:, :2].mul_(0.0), a[0].sum(-1))[1]", [(8, 16)]),
        "setitem_slice": ("(lambda y: (y.__setitem__((slice(None), slice(0, 2)), 0.0), y)[1])(a[0].clone()) + 1", [(8, 16)]),
        "inplace_lin_view": ("(lambda y: (y[:, :8].mul_(0.5), self.lin(y))[1])(self.lin(a[0]))", [(130, 64)], 64),
        "nan_input": ("self.lin(a[0]) + torch.where(a[0] > 3, torch.tensor(float('nan')), torch.tensor(0.0))", [(8, 16)], 16),
    }
    for n, v in L.items():
        C["op_" + n] = ("lam", dict(f=v[0], shapes=v[1], lin=v[2] if len(v) > 2 else None))
    # modules called with different shapes
    C["multi_lin_rows"] = ("multi", dict(build="lin", shapes=[[(4, 32)], [(7, 32)], [(140, 32)], [(4, 32)]]))
    C["multi_ln_rows"] = ("multi", dict(build="lnlin", shapes=[[(2, 8, 32)], [(2, 130, 32)], [(1, 3, 32)]]))
    C["multi_attn_seq"] = ("multi", dict(build="attn", shapes=[[(1, 5, 32)], [(1, 9, 32)], [(1, 129, 32)], [(1, 5, 32)]]))
    C["multi_softmax_dim0"] = ("multi", dict(build="sm0", shapes=[[(4, 8)], [(6, 8)], [(200, 8)]]))
    C["multi_cumsum"] = ("multi", dict(build="cumsum", shapes=[[(3, 8)], [(3, 17)], [(3, 300)]]))
    C["decode_cat"] = ("decode", dict(steps=5, h=16))
    C["decode_cat_big"] = ("decode", dict(steps=3, h=64, start=128))
    C["decode_static"] = ("decode_static", dict(steps=5, h=16, L=8))
    return C


def build(kind, kw, seed):
    import torch, cases as K
    torch.manual_seed(seed)
    if kind == "lam":
        src = kw["f"]
        f = eval("lambda self, *a: " + src, {"torch": torch, "float": float})
        return K.lam(seed, f, kw["shapes"], kw["lin"])
    if kind == "multi":
        import torch.nn as nn
        b = kw["build"]
        mk = {"lin": lambda: nn.Sequential(nn.Linear(32, 48), nn.GELU(), nn.Linear(48, 8)),
              "lnlin": lambda: K.NormLinear(32, "ln"),
              "attn": lambda: K.HandAttn(32, 2, True, True),
              "sm0": lambda: K.Lam(lambda s, x: x.softmax(0) * 2),
              "cumsum": lambda: K.Lam(lambda s, x: x.cumsum(-1))}[b]
        return K.multi_shape(seed, kw["shapes"], mk)
    if kind in ("decode", "decode_static"):
        return None
    return getattr(K, kind)(seed, **kw)


def compare(e, t):
    import torch
    if isinstance(e, (tuple, list)):
        if not isinstance(t, (tuple, list)) or len(e) != len(t):
            return False, f"structure {type(e)} vs {type(t)}"
        errs = [compare(a, b) for a, b in zip(e, t)]
        bad = [m for ok, m in errs if not ok]
        return (not bad), ("; ".join(bad) if bad else errs[0][1])
    if not isinstance(e, torch.Tensor):
        return e == t, f"{e} vs {t}"
    if tuple(e.shape) != tuple(t.shape):
        return False, f"shape {tuple(e.shape)} vs {tuple(t.shape)}"
    if e.dtype != t.dtype:
        if e.dtype.is_floating_point != t.dtype.is_floating_point or e.dtype == torch.bool or t.dtype == torch.bool:
            return False, f"dtype {e.dtype} vs {t.dtype}"
    e = e.detach().double(); t = t.detach().double()
    if e.numel() == 0:
        return True, "empty"
    fe, ft = torch.isfinite(e), torch.isfinite(t)
    if not torch.equal(torch.isnan(e), torch.isnan(t)) or not torch.equal(fe, ft) \
            or not torch.equal(e[torch.isinf(e)], t[torch.isinf(e)] if torch.isinf(e).any() else e[torch.isinf(e)]):
        return False, (f"non-finite mismatch: eager nan={int(torch.isnan(e).sum())} inf={int(torch.isinf(e).sum())}, "
                       f"trnsim nan={int(torch.isnan(t).sum())} inf={int(torch.isinf(t).sum())}")
    if not fe.any():
        return True, "all non-finite, same places"
    err = (e[fe] - t[fe]).abs().max().item(); ref = e[fe].abs().max().item()
    tol = 1e-3 * max(1.0, ref)
    return err <= tol, f"max_abs_err={err:.3g} tol={tol:.3g} max|eager|={ref:.3g}"


def worker(name, seed):
    import warnings, copy, torch, trnsim
    from trnsim import torch_backend as tb
    kind, kw = case_list()[name]
    torch._dynamo.reset(); tb.reset_session()
    out = {"name": name}
    with warnings.catch_warnings(record=True) as W:
        warnings.simplefilter("always")
        try:
            if kind in ("decode", "decode_static"):
                ok, msg = run_decode(kind, kw, seed)
            else:
                m, inputs = build(kind, kw, seed)
                m = m.eval()
                ref_m = copy.deepcopy(m)
                cm = torch.compile(m, backend="trnsim", dynamic=False)
                ok, msgs = True, []
                for ins in inputs:
                    with torch.no_grad():
                        e = ref_m(*[x.clone() for x in ins])
                        t = cm(*[x.clone() for x in ins])
                    o, mm = compare(e, t); ok &= o; msgs.append(mm)
                msg = " | ".join(msgs)
        except trnsim.TrnsimError as ex:
            out.update(status="REFUSED", msg=f"{type(ex).__name__}: {str(ex)[:300]}"); print(json.dumps(out)); return
        except Exception as ex:
            out.update(status="CRASH", msg=f"{type(ex).__name__}: {str(ex)[:400]}"); print(json.dumps(out)); return
    fb = [str(w.message)[:300] for w in W if "Fallback" in type(w.message).__name__ or "trnsim" in str(w.message)]
    rep = tb.session_report()
    out["on_chip"] = rep.get("runs_on_chip"); out["on_cpu"] = rep.get("runs_on_cpu")
    out["fallbacks"] = [str(f)[:300] for f in rep.get("fallbacks", [])]
    if not ok:
        out.update(status="WRONG", msg=msg)
    elif out["on_cpu"] and not fb:
        out.update(status="SILENT_CPU", msg=msg)
    elif fb:
        out.update(status="REFUSED", msg=fb[0])
    elif not out["on_chip"]:
        out.update(status="SILENT_CPU", msg="nothing ran on the chip; " + msg)
    else:
        out.update(status="PASS", msg=msg)
    print(json.dumps(out))


def run_decode(kind, kw, seed):
    import torch, cases as K, copy
    torch.manual_seed(seed)
    h = kw["h"]; g = torch.Generator().manual_seed(seed)
    if kind == "decode":
        m = K.Decode(h).eval(); cm = torch.compile(copy.deepcopy(m), backend="trnsim", dynamic=False)
        S0 = kw.get("start", 3)
        kc = torch.randn(1, S0, h, generator=g); vc = torch.randn(1, S0, h, generator=g)
        kt, vt = kc.clone(), vc.clone(); ok = True; msgs = []
        for s in range(kw["steps"]):
            x = torch.randn(1, 1, h, generator=g)
            with torch.no_grad():
                ye, kc, vc = m(x, kc, vc); yt, kt, vt = cm(x, kt, vt)
            o, mm = compare((ye, kc, vc), (yt, kt, vt)); ok &= o; msgs.append(mm)
            kt, vt = kc.clone(), vc.clone()  # keep the cache exact so steps are independent
        return ok, " | ".join(msgs)
    L = kw["L"]; m = K.StaticDecode(h, L).eval(); cm = torch.compile(copy.deepcopy(m), backend="trnsim", dynamic=False)
    kc = torch.zeros(1, L, h); vc = torch.zeros(1, L, h); kt, vt = kc.clone(), vc.clone(); ok = True; msgs = []
    for s in range(kw["steps"]):
        x = torch.randn(1, 1, h, generator=g); pos = torch.tensor([s])
        with torch.no_grad():
            ye = m(x, kc, vc, pos); yt = cm(x, kt, vt, pos)
        o, mm = compare((ye, kc, vc), (yt, kt, vt)); ok &= o; msgs.append(mm)
    return ok, " | ".join(msgs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker"); ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-j", type=int, default=2); ap.add_argument("--only", default="")
    ap.add_argument("--json", default=""); ap.add_argument("--timeout", type=int, default=60)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.seed)
    names = [n for n in case_list() if a.only in n]
    env = dict(os.environ); env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "..", "..", "python"), env.get("PYTHONPATH", "")])
    procs = {}; results = []; todo = list(names)
    def finish(n, p, t0):
        try:
            so, se = p.communicate(timeout=max(1, a.timeout - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            p.kill(); p.communicate(); r = {"name": n, "status": "TIMEOUT", "msg": f">{a.timeout}s"}
        else:
            line = [l for l in so.splitlines() if l.startswith("{")]
            r = json.loads(line[-1]) if line else {"name": n, "status": "CRASH", "msg": f"rc={p.returncode} " + se[-400:]}
        results.append(r); print(f"{r['status']:10s} {n:28s} {r.get('msg','')[:220]}", flush=True)
    while todo or procs:
        while todo and len(procs) < a.j:
            n = todo.pop(0)
            procs[n] = (subprocess.Popen([sys.executable, __file__, "--worker", n, "--seed", str(a.seed)], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, env=env), time.time())
        done = [n for n, (p, t0) in procs.items() if p.poll() is not None or time.time() - t0 > a.timeout]
        for n in done:
            p, t0 = procs.pop(n); finish(n, p, t0)
        time.sleep(0.1)
    from collections import Counter
    print(dict(Counter(r["status"] for r in results)))
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)

if __name__ == "__main__":
    main()
