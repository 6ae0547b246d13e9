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
