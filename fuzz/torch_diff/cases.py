"""Small seeded torch.nn modules for the trnsim torch.compile differential (fuzz/torch_diff).
Each builder takes a seed and returns (module, [inputs tuple, ...]); several input tuples mean
the same compiled module is called with each (recompile / bucket behaviour)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTS = {"gelu": lambda: nn.GELU(), "gelu_tanh": lambda: nn.GELU(approximate="tanh"), "silu": nn.SiLU,
        "relu": nn.ReLU, "hardswish": nn.Hardswish, "mish": nn.Mish}


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__(); self.w = nn.Parameter(torch.rand(d) + 0.5); self.eps = eps
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.w


def lin_chain(seed, act="gelu", rows=4, h=32, depth=2, bias=True):
    g = torch.Generator().manual_seed(seed)
    layers = []; d = h
    for i in range(depth):
        layers += [nn.Linear(d, h, bias=bias), ACTS[act]()]
    layers.append(nn.Linear(h, 16, bias=bias))
    m = nn.Sequential(*layers)
    return m, [(torch.randn(rows, h, generator=g),)]


class NormLinear(nn.Module):
    def __init__(self, h, kind):
        super().__init__(); self.kind = kind
        self.n1 = nn.LayerNorm(h) if kind != "rms" else RMSNorm(h)
        self.n2 = nn.LayerNorm(h, elementwise_affine=(kind == "lnln_aff"))
        with torch.no_grad():
            if hasattr(self.n1, "weight") and self.n1.weight is not None:
                self.n1.weight.uniform_(0.5, 1.5); self.n1.bias.uniform_(-0.5, 0.5)
        self.l = nn.Linear(h, h)
    def forward(self, x):
        y = self.n1(x)
        if self.kind.startswith("lnln"):
            y = self.n2(y)
        return self.l(y) + x


def norm_linear(seed, kind="ln", rows=8, h=32, batch=None):
    g = torch.Generator().manual_seed(seed)
    shape = (rows, h) if batch is None else (batch, rows, h)
    return NormLinear(h, kind), [(torch.randn(*shape, generator=g),)]


class SDPA(nn.Module):
    def __init__(self, mode): super().__init__(); self.mode = mode
    def forward(self, q, k, v, *mask):
        if self.mode == "causal":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if self.mode in ("fmask", "bmask"):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask[0])
        if self.mode == "gqa":
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        if self.mode == "gqa_causal":
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True)
        if self.mode == "drop0":
            return F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
        if self.mode == "scale":
            return F.scaled_dot_product_attention(q, k, v, scale=0.3)
        return F.scaled_dot_product_attention(q, k, v)


def sdpa(seed, mode="plain", b=1, hq=2, hkv=2, sq=8, sk=8, d=16):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, hq, sq, d, generator=g); k = torch.randn(b, hkv, sk, d, generator=g)
    v = torch.randn(b, hkv, sk, d, generator=g)
    ins = (q, k, v)
    if mode == "fmask":
        m = torch.randn(sq, sk, generator=g); m[:, 0] = 0; m[torch.rand(sq, sk, generator=g) < .3] = float("-inf"); m[:, 0] = 0
        ins += (m,)
    if mode == "bmask":
        m = torch.rand(sq, sk, generator=g) < .7; m[:, 0] = True; ins += (m,)
    return SDPA(mode), [ins]


class HandAttn(nn.Module):
    def __init__(self, h, heads, causal, rope):
        super().__init__(); self.h = h; self.nh = heads; self.causal = causal; self.rope = rope
        self.qkv = nn.Linear(h, 3 * h); self.o = nn.Linear(h, h)
    def forward(self, x):
        B, S, H = x.shape; hd = H // self.nh
        q, k, v = self.qkv(x).split(H, dim=-1)
        q = q.view(B, S, self.nh, hd).transpose(1, 2); k = k.view(B, S, self.nh, hd).transpose(1, 2)
        v = v.view(B, S, self.nh, hd).transpose(1, 2)
        if self.rope:
            pos = torch.arange(S, dtype=torch.float32)
            inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
            f = torch.outer(pos, inv); emb = torch.cat([f, f], -1); cos, sin = emb.cos(), emb.sin()
            def rot(t):
                t1, t2 = t[..., :hd // 2], t[..., hd // 2:]
                return t * cos + torch.cat([-t2, t1], -1) * sin
            q, k = rot(q), rot(k)
        s = q @ k.transpose(-2, -1) / math.sqrt(hd)
        if self.causal:
            mask = torch.triu(torch.ones(S, S, dtype=torch.bool), 1)
            s = s.masked_fill(mask, float("-inf"))
        p = s.softmax(-1)
        y = (p @ v).transpose(1, 2).reshape(B, S, H)
        return self.o(y)


def hand_attn(seed, B=1, S=8, h=32, heads=2, causal=True, rope=False):
    g = torch.Generator().manual_seed(seed)
    return HandAttn(h, heads, causal, rope), [(torch.randn(B, S, h, generator=g),)]


class Emb(nn.Module):
    def __init__(self, V, h): super().__init__(); self.e = nn.Embedding(V, h); self.l = nn.Linear(h, 8)
    def forward(self, ids): return self.l(self.e(ids))


def emb(seed, V=50, h=32, B=2, S=7):
    g = torch.Generator().manual_seed(seed)
    return Emb(V, h), [(torch.randint(0, V, (B, S), generator=g),)]


class MoE(nn.Module):
    def __init__(self, h, E, k, style):
        super().__init__(); self.gate = nn.Linear(h, E, bias=False); self.k = k; self.E = E; self.style = style
        self.w = nn.Parameter(torch.randn(E, h, h) * 0.2)
    def forward(self, x):
        p = self.gate(x).softmax(-1)
        tv, ti = p.topk(self.k, dim=-1)
        tv = tv / tv.sum(-1, keepdim=True)
        if self.style == "dense":
            dense = torch.zeros_like(p).scatter(-1, ti, tv)
            ys = torch.einsum("th,ehd->ted", x, self.w)
            return (dense.unsqueeze(-1) * ys).sum(1)
        if self.style == "gather":
            ws = self.w[ti]  # [T,k,h,h]
            y = torch.einsum("th,tkhd->tkd", x, ws)
            return (tv.unsqueeze(-1) * y).sum(1)
        if self.style == "index_add":
            out = torch.zeros_like(x)
            T = x.shape[0]
            tok = torch.arange(T).repeat_interleave(self.k)
            y = torch.einsum("th,tkhd->tkd", x, self.w[ti]).reshape(T * self.k, -1) * tv.reshape(-1, 1)
            return out.index_add(0, tok, y)
        g = torch.gather(p, -1, ti)
        return g


def moe(seed, style="dense", T=6, h=16, E=4, k=2):
    g = torch.Generator().manual_seed(seed)
    return MoE(h, E, k, style), [(torch.randn(T, h, generator=g),)]


def conv(seed, dim=2, C=3, O=8, S=12, pool="max", B=2):
    g = torch.Generator().manual_seed(seed)
    if dim == 2:
        layers = [nn.Conv2d(C, O, 3, padding=1), nn.BatchNorm2d(O), nn.ReLU(),
                  nn.MaxPool2d(2) if pool == "max" else nn.AvgPool2d(2), nn.Conv2d(O, O, 3, stride=2), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        x = torch.randn(B, C, S, S, generator=g)
    else:
        layers = [nn.Conv1d(C, O, 3, padding=1), nn.BatchNorm1d(O), nn.SiLU(),
                  nn.MaxPool1d(2) if pool == "max" else nn.AvgPool1d(2), nn.Conv1d(O, O, 3, stride=2)]
        x = torch.randn(B, C, S, generator=g)
    m = nn.Sequential(*layers)
    for mod in m:
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                mod.running_mean.uniform_(-1, 1); mod.running_var.uniform_(0.5, 2); mod.weight.uniform_(0.5, 1.5); mod.bias.uniform_(-.5, .5)
    return m, [(x,)]


class Lam(nn.Module):
    def __init__(self, f, lin=None): super().__init__(); self.f = f; self.lin = nn.Linear(lin, lin) if lin else None
    def forward(self, *a):
        return self.f(self, *a)


def lam(seed, f, shapes, lin=None, ints=None):
    g = torch.Generator().manual_seed(seed)
    ins = tuple(torch.randn(*s, generator=g) * 3 for s in shapes)
    return Lam(f, lin), [ins]


def multi_shape(seed, shapes, build):
    g = torch.Generator().manual_seed(seed)
    m = build()
    return m, [tuple(torch.randn(*s, generator=g) for s in sh) for sh in shapes]


class Decode(nn.Module):
    """tiny single-head decode: append k/v for one token to a cache and attend over it."""
    def __init__(self, h):
        super().__init__(); self.q = nn.Linear(h, h); self.k = nn.Linear(h, h); self.v = nn.Linear(h, h); self.h = h
    def forward(self, x, kc, vc):
        k = torch.cat([kc, self.k(x)], 1); v = torch.cat([vc, self.v(x)], 1)
        s = self.q(x) @ k.transpose(1, 2) / math.sqrt(self.h)
        return s.softmax(-1) @ v, k, v


class StaticDecode(nn.Module):
    """static cache written in place with index_copy_ at pos, masked beyond."""
    def __init__(self, h, L):
        super().__init__(); self.q = nn.Linear(h, h); self.k = nn.Linear(h, h); self.v = nn.Linear(h, h); self.h = h; self.L = L
    def forward(self, x, kc, vc, pos):
        kc.index_copy_(1, pos, self.k(x)); vc.index_copy_(1, pos, self.v(x))
        s = self.q(x) @ kc.transpose(1, 2) / math.sqrt(self.h)
        valid = torch.arange(self.L) <= pos
        s = s.masked_fill(~valid, float("-inf"))
        return s.softmax(-1) @ vc
