"""trnsim llm / trnsim.llm(): the CLI's JSON equals the Python API, bit for bit and warm or
cold; the result's fields and units; closed forms (KV-cache bytes, parameters); one-line errors
with exit status 2."""
import json
import os
import subprocess

import pytest

import trnsim
from cli_path import trnsim_cli

ARGS = dict(model="llama-3-8b", system="trn1.32xlarge", tp=8, batch=2, input=200, output=16)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([trnsim_cli(), "llm", *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))


def cli_args(a: dict) -> list[str]:
    return ["--model", a["model"], "--system", a["system"], "--tp", str(a["tp"]), "--batch", str(a["batch"]),
            "--input", str(a["input"]), "--output", str(a["output"])]


def test_cli_json_equals_python_api_cold_and_warm():
    api = trnsim.llm(**ARGS)
    p = run(*cli_args(ARGS), "--json")
    assert p.returncode == 0, p.stderr
    cli = json.loads(p.stdout)
    assert cli["simulations"] == 0  # the API's run filled the disk cache
    for key in ("ttft_s", "tpot_s", "e2e_s", "time_s", "output_tokens_per_s", "memory_bytes_per_core"):
        assert cli[key] == api[key], key  # warm == cold, bit for bit


def test_concurrent_cold_runs_measure_each_shape_once(cache_dir):
    """Three `trnsim llm` processes started together on one empty cache (a sweep's points) measure
    each kernel shape once between them (a miss reads what the others appended; a shape being
    measured is waited for), and give the result of a run with no disk cache at all, bit for bit."""
    a = cli_args({**ARGS, "tp": 4, "input": 600}) + ["--json"]
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "HOME")}  # memory-only cache
    fresh = json.loads(subprocess.run([trnsim_cli(), "llm", *a], capture_output=True, text=True, timeout=120,
                                      env=env, check=True).stdout)
    procs = [subprocess.Popen([trnsim_cli(), "llm", *a], stdout=subprocess.PIPE, text=True, env=dict(os.environ))
             for _ in range(3)]
    outs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert sum(o["simulations"] for o in outs) == fresh["simulations"] > 10
    lines = [ln.split()[0] for f in (cache_dir / "trnsim").glob("*.txt") for ln in f.read_text().splitlines()]
    assert len(lines) == len(set(lines))  # no shape written twice
    bookkeeping = ("simulations", "simulation_wall_s")
    for o in outs:
        assert {k: v for k, v in o.items() if k not in bookkeeping} == {k: v for k, v in fresh.items() if k not in bookkeeping}


def test_fields_and_closed_forms():
    r = trnsim.llm(**ARGS)
    assert r["kind"] == "llm" and r["time_s"] == r["e2e_s"]
    assert r["e2e_s"] == pytest.approx(r["ttft_s"] + (ARGS["output"] - 1) * r["tpot_s"], rel=1e-12)
    assert r["output_tokens_per_s"] == pytest.approx(ARGS["batch"] * ARGS["output"] / r["e2e_s"], rel=1e-12)
    # KV cache: 32 layers x (K + V) x 1 KV head per rank (8 over 8 ranks) x 128 x 2 bytes, for
    # batch x (input + output) tokens.
    assert r["kv_cache_bytes_per_core"] == 32 * 2 * 1 * 128 * 2 * ARGS["batch"] * (ARGS["input"] + ARGS["output"])
    b = r["decode_step_breakdown"]
    assert sum(b.values()) == pytest.approx(r["tpot_s"], rel=1e-9)
    m = trnsim.llm_model("llama-3.1-8b")
    assert m["parameters"] == pytest.approx(8.03e9, rel=0.01)  # Meta's model card
    assert "llama-3.1-405b" in trnsim.llm_models()


def test_longer_prompt_costs_more():
    short = trnsim.llm(**{**ARGS, "input": 128})
    long = trnsim.llm(**{**ARGS, "input": 1024})
    assert long["ttft_s"] > 4 * short["ttft_s"]
    assert long["tpot_s"] > short["tpot_s"]


@pytest.mark.parametrize("args, message", [
    (["--model", "no-such-model"], "no model named 'no-such-model'"),
    (["--tp", "64"], "ranks"),
    (["--weights", "int4"], "--weights"),
    (["--model", "llama-3.1-405b", "--system", "trn2.48xlarge"], "needs"),
])
def test_errors_are_one_line_with_exit_status_2(args, message):
    base = dict(zip(cli_args(ARGS)[::2], cli_args(ARGS)[1::2]))
    base.update(dict(zip(args[::2], args[1::2])))
    p = run(*[x for kv in base.items() for x in kv])
    assert p.returncode == 2
    assert p.stderr.startswith("trnsim: error:") and message in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1


def test_trace_is_a_chrome_trace(tmp_path):
    f = tmp_path / "llm.json"
    trnsim.llm(**ARGS, trace=str(f))
    events = json.loads(f.read_text())["traceEvents"]
    layers = [e for e in events if e.get("ph") == "X" and e["name"].endswith("qkv_proj")]
    assert len(layers) == 2 * 32  # every layer of the prefill and of the first decode step


def test_pipeline_micro_batches_fill_and_drain():
    # pp 2 with two micro-batches of one sequence: (2 + 2 - 1) / 2 = 1.5 times the step of one
    # micro-batch through both stages (GPipe fill and drain), which one micro-batch takes alone.
    a = {**ARGS, "pp": 2, "batch": 2}
    two = trnsim.llm(**a)
    one = trnsim.llm(**{**a, "batch": 1, "micro_batches": 1})
    assert two["micro_batches"] == 2 and one["micro_batches"] == 1
    assert two["ttft_s"] == pytest.approx(1.5 * one["ttft_s"], rel=1e-12)
    assert two["tpot_s"] == pytest.approx(1.5 * one["tpot_s"], rel=1e-12)


def test_a_config_dict_is_a_model():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "models", "llama-3-8b.json")
    with open(path) as f:
        config = json.load(f)
    assert trnsim.llm(config, ARGS["system"], ARGS["tp"], batch=1)["tpot_s"] == \
        trnsim.llm("llama-3-8b", ARGS["system"], ARGS["tp"], batch=1)["tpot_s"]
    assert trnsim.llm_model(config)["parameters"] == trnsim.llm_model("llama-3-8b")["parameters"]


def test_sequence_parallel_splits_the_norms():
    # A long prefill: with SP the norms and residuals run on input / tp tokens per rank, and
    # each all-reduce becomes a reduce-scatter plus an all-gather of the same bytes.
    a = {**ARGS, "input": 2048, "batch": 1}
    plain, sp = trnsim.llm(**a), trnsim.llm(**a, sequence_parallel=True)
    assert sp["sequence_parallel"] and not plain["sequence_parallel"]
    assert sp["prefill_breakdown"]["other_s"] < 0.8 * plain["prefill_breakdown"]["other_s"]
    assert sp["prefill_breakdown"]["matmul_s"] == plain["prefill_breakdown"]["matmul_s"]
    assert any("reduce-scatter" in n["node"] for n in sp["decode_step_nodes"])


def test_kv_buckets_closed_forms():
    # transformers-neuronx / NxD Inference compile one token-generation bucket: every decode
    # step attends over the whole compiled length, so TPOT is one step at seq_len keys, which an
    # exact run of a single decode step from seq_len - 1 cached tokens also costs.
    a = {**ARGS, "input": 200, "output": 56}
    compiled = trnsim.llm(**a, seq_len=1024)
    one_step = trnsim.llm(**{**a, "input": 1023, "output": 2}, kv_buckets="exact")
    assert compiled["kv_buckets"] == "compiled" and compiled["seq_len"] == 1024
    assert compiled["tpot_s"] == pytest.approx(one_step["tpot_s"], rel=1e-12)  # a mean of 55 equal steps
    assert compiled["kv_cache_bytes_per_core"] == 32 * 2 * 1 * 128 * 2 * a["batch"] * 1024
    exact = trnsim.llm(**a, seq_len=1024, kv_buckets="exact")
    pow2 = trnsim.llm(**a, seq_len=1024, kv_buckets="pow2")  # buckets 256 then 512 over 200..255
    assert exact["tpot_s"] < pow2["tpot_s"] < compiled["tpot_s"]
    assert exact["ttft_s"] < pow2["ttft_s"] < compiled["ttft_s"]  # the prefill attends over 200, 256, 1024
    assert trnsim.llm(**a)["tpot_s"] < compiled["tpot_s"]  # default seq_len: input + output


def test_seq_len_shorter_than_the_generation_is_an_error():
    p = run(*cli_args(ARGS), "--seq-len", "100")
    assert p.returncode == 2 and "--seq-len 100" in p.stderr and p.stderr.count("\n") == 1
    p = run(*cli_args(ARGS), "--kv-buckets", "paged")
    assert p.returncode == 2 and "--kv-buckets 'paged'" in p.stderr


def test_prompt_longer_than_one_heads_sbuf():
    # 40,000 tokens: a head's K and V (160 KiB per partition) no longer fit in SBUF, so the
    # attention streams key chunks (flash attention over the sequence) instead of failing.
    # Causal work is linear plus quadratic in the prompt: doubling it costs 2x to 4x.
    tiny = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 1000,
            "max_position_embeddings": 131072, "rope_theta": 10000.0, "rms_norm_eps": 1e-05,
            "hidden_act": "silu", "torch_dtype": "bfloat16"}
    long = trnsim.llm(tiny, "trn1.32xlarge", 2, batch=1, input=40000, output=2)
    half = trnsim.llm(tiny, "trn1.32xlarge", 2, batch=1, input=20000, output=2)
    assert 2 < long["prefill_breakdown"]["attention_s"] / half["prefill_breakdown"]["attention_s"] < 4
