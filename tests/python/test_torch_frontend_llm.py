"""PyTorch front end for LLMs: meta-device models in timing mode, generate() on the simulated
chip, no silent fallback, torch.compile(dynamic=True).

References: closed-form matmul FLOPs (2 x tokens x K x N per projection); eager PyTorch logits
(fp32 policy, |got - want| <= 1e-4 + 1e-3 |want|) and greedy tokens (exact); the initializer
path's report (weights as shapes must time identically)."""
from __future__ import annotations

import warnings

import pytest

import trnsim

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
transformers = pytest.importorskip("transformers")

from trnsim import torch_backend as tb  # noqa: E402
from trnsim.models import logits_module as _Logits  # noqa: E402

H, I, HEADS, KV_HEADS, LAYERS, VOCAB = 64, 128, 4, 2, 2, 256


def _cfg(attn="eager"):
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=H, intermediate_size=I,
                                   num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                   num_key_value_heads=KV_HEADS, max_position_embeddings=128)
    cfg._attn_implementation = attn
    return cfg


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    tb.reset_session()
    yield
    torch._dynamo.reset()


def _ids(seq, seed=1):
    return torch.randint(0, VOCAB, (1, seq), generator=torch.Generator().manual_seed(seed))


def test_meta_device_llama_traces_in_timing_mode():
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(_cfg())
    assert all(p.is_meta for p in model.parameters())
    seq = 4
    ids, mask = _ids(seq), torch.ones(1, seq, dtype=torch.long)
    traced = trnsim.trace(_Logits(model), (ids, mask), chip="trn2", dtype="bf16", mode="timing")
    out = traced(ids, mask)
    assert out.is_meta and tuple(out.shape) == (1, seq, VOCAB)
    r = traced.report
    assert r["time_s"] > 0 and r["mode"] == "timing"
    # closed form: every projection is 2 x tokens x K x N; the MatMul nodes also count the
    # TensorE transposes of the activations (identity matmuls, 2 x tokens x K x tokens per
    # 128-column tile), <= tokens / N of each, 4/32 here at most
    kv = KV_HEADS * H // HEADS
    closed = 2 * seq * (LAYERS * (2 * H * H + 2 * H * kv + 3 * H * I) + H * VOCAB)
    matmul = sum(o["tensor_flops"] for o in r["ops"] if o["op"] == "MatMul")
    assert closed <= matmul <= closed * 1.08, (matmul, closed)
    # no weight bytes: the exported graph holds no initializers' data
    assert len(traced.onnx_bytes) < 200_000


def test_weights_as_shapes_time_like_real_weights():
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(_cfg()).eval()
    ids, mask = _ids(8), torch.ones(1, 8, dtype=torch.long)
    with torch.device("meta"):
        meta = transformers.AutoModelForCausalLM.from_config(_cfg()).eval()
    timing = trnsim.trace(_Logits(meta), (ids, mask), dtype="bf16", mode="timing")
    timing(ids, mask)
    onnx_bytes, _ = tb.export_onnx(_Logits(model), (ids, mask))
    real = trnsim.compile_onnx(onnx_bytes, chip="trn2", dtype="bf16", mode="timing")
    real.run({}, mode="timing")
    assert timing.report["time_s"] == pytest.approx(real.report["time_s"], rel=1e-6)
    assert timing.report["hbm_bytes"] == real.report["hbm_bytes"]


def test_meta_model_refuses_functional_mode():
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(_cfg())
    with pytest.raises(trnsim.UnsupportedError, match="mode='timing'"):
        trnsim.trace(_Logits(model), (_ids(4), torch.ones(1, 4, dtype=torch.long)))


def test_generate_matches_eager_token_for_token_all_on_chip():
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_cfg("sdpa")).eval()
    ids = _ids(6)
    kw = dict(max_new_tokens=5, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        want = model.generate(ids, **kw)
        model.forward = torch.compile(model.forward, backend="trnsim")
        with warnings.catch_warnings():
            warnings.simplefilter("error", tb.FallbackWarning)
            got = model.generate(ids, **kw)
    assert got.tolist() == want.tolist()
    s = tb.last_report(all=True)
    assert s["all_on_chip"] and s["fallbacks"] == [] and s["runs_on_cpu"] == 0
    assert s["steps"] == 5 and s["tokens"] == 5
    assert s["ttft_s"] > 0 and s["tpot_s"] > 0
    assert s["time_s"] == pytest.approx(s["ttft_s"] + 4 * s["tpot_s"], rel=1e-9)
    assert s["graphs_compiled"] >= 2


def test_sdpa_enable_gqa_converts():
    import torch.nn.functional as F

    class Attn(torch.nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, n, 8, 16, generator=g) for n in (4, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", tb.FallbackWarning)
        got = torch.compile(Attn(), backend="trnsim")(q, k, v)
    torch.testing.assert_close(got, Attn()(q, k, v), rtol=1e-3, atol=1e-4)
    assert tb.session_report()["runs_on_chip"] == 1


def test_refused_graph_and_graph_break_warn():
    class Det(torch.nn.Module):
        def forward(self, x):
            y = torch.linalg.det(x) + 1
            print("", end="")  # a Dynamo graph break
            return y * 2

    x = torch.randn(2, 3, 3, generator=torch.Generator().manual_seed(3))
    with pytest.warns(tb.FallbackWarning) as w:
        got = torch.compile(Det(), backend="trnsim")(x)
    torch.testing.assert_close(got, Det()(x))
    text = " ".join(str(m.message) for m in w)
    assert "Det" in text and "graph break" in text, text
    s = tb.session_report()
    assert not s["all_on_chip"] and s["runs_on_cpu"] >= 1 and len(s["fallbacks"]) >= 2


@pytest.mark.parametrize("which", ["bert", "llama", "resnet"])
def test_torch_compile_dynamic_true(which):
    from trnsim import models
    g = torch.Generator().manual_seed(5)
    if which == "llama":
        model, _ = models.tiny_llama(seed=0)
        inputs = [(torch.randint(0, 64, (1, s), generator=g),) for s in (8, 12)]
    elif which == "bert":
        cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                      intermediate_size=64, max_position_embeddings=64)
        cfg._attn_implementation = "eager"
        torch.manual_seed(0)
        bert = transformers.BertModel(cfg).eval()
        model = lambda ids, m: bert(input_ids=ids, attention_mask=m).last_hidden_state  # noqa: E731
        inputs = [(torch.randint(0, 100, (2, s), generator=g), torch.ones(2, s, dtype=torch.long)) for s in (8, 12)]
    else:
        model = models.tiny_resnet(seed=0)
        inputs = [(torch.randn(1, 3, s, s, generator=g),) for s in (32, 40)]
    f = torch.compile(model, backend="trnsim", dynamic=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", tb.FallbackWarning)
        for x in inputs:
            torch.testing.assert_close(f(*x), model(*x), rtol=1e-3, atol=1e-4)
    s = tb.session_report()
    assert s["all_on_chip"] and s["runs_on_chip"] == len(inputs)


def test_generate_static_cache_one_decode_program_per_bucket():
    """Neuron's layout: a fixed-length KV cache (the bucket), written at the new positions and
    masked beyond them; every decode step of both generations reuses one program."""
    torch.manual_seed(0)
    cfg = _cfg("sdpa")
    model = transformers.LlamaForCausalLM(cfg).eval()
    eager, bucket = model.forward, tb.kv_bucket(9 + 4, buckets=(16, 32))
    assert bucket == 16
    compiled = torch.compile(eager, backend="trnsim")
    for plen in (6, 9):
        ids = _ids(plen, seed=plen)
        kw = dict(max_new_tokens=4, do_sample=False, pad_token_id=0)
        with torch.no_grad():
            model.forward = eager
            want = model.generate(ids, **kw)
            model.forward = compiled
            with warnings.catch_warnings():
                warnings.simplefilter("error", tb.FallbackWarning)
                cache = transformers.StaticCache(config=cfg, max_cache_len=bucket)
                got = model.generate(ids, past_key_values=cache, **kw)
        assert got.tolist() == want.tolist()
    s = tb.session_report()
    assert s["all_on_chip"] and s["runs_on_chip"] == 8
    decode = [p for p in s["programs"] if p["input_shapes"][0] == [1, 1]]
    assert len(decode) == 1 and [1, KV_HEADS, bucket, H // HEADS] in decode[0]["input_shapes"]
    assert s["graphs_compiled"] == 3  # two prompt lengths, one decode bucket


def test_meta_device_default_attention_traces():
    """transformers' default (SDPA) attention reads the mask's values in eager mode (all ones?),
    which a meta tensor cannot give: the trace's own outputs stand in for an eager run."""
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=H, intermediate_size=I, num_hidden_layers=LAYERS,
                                   num_attention_heads=HEADS, num_key_value_heads=KV_HEADS)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg)
    ids, mask = _ids(8), torch.ones(1, 8, dtype=torch.long)
    traced = trnsim.trace(_Logits(model), (ids, mask), dtype="bf16", mode="timing")
    out = traced(ids, mask)
    assert out.is_meta and tuple(out.shape) == (1, 8, VOCAB) and traced.report["time_s"] > 0
