"""trnsim.serve and `trnsim serve` on the llm cost model: the closed-form targets with real step
costs (a lone request's TTFT is `trnsim llm`'s prefill; offline saturation is `trnsim llm`'s
batch throughput), the CLI and Python giving the same result, and bad input as one-line errors
with exit status 2."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import trnsim
from cli_path import trnsim_cli

ROOT = Path(__file__).resolve().parents[2]
CONV = ROOT / "data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv"
DEPLOY = dict(model="llama-3.1-8b", system="trn2.48xlarge", tp=4)


def test_lone_request_ttft_is_the_llm_prefill_time():
    # serve costs each sequence's own context (a paged kernel): trnsim llm with exact KV buckets.
    llm = trnsim.llm(**DEPLOY, batch=1, input=700, output=16, kv_buckets="exact")
    r = trnsim.serve(**DEPLOY, rate=0.02, requests=20, input=700, output=16, seed=3)
    assert r["kind"] == "serve" and r["requests"] == 20
    assert r["mean_ttft_s"] == pytest.approx(llm["ttft_s"], rel=1e-9)
    assert r["max_ttft_s"] == pytest.approx(llm["ttft_s"], rel=1e-9)
    # 15 decode steps over contexts 700..714, as trnsim llm evaluates them.
    assert r["mean_e2e_s"] == pytest.approx(llm["e2e_s"], rel=1e-9)


def test_offline_saturation_is_the_llm_batch_throughput():
    B, I, O = 16, 256, 32
    llm = trnsim.llm(**DEPLOY, batch=B, input=I, output=O, kv_buckets="exact")
    r = trnsim.serve(**DEPLOY, offline=True, requests=4 * B, input=I, output=O, max_seqs=B, max_batched_tokens=B * I)
    assert r["output_token_throughput_tps"] == pytest.approx(llm["output_tokens_per_s"], rel=1e-9)


def test_cli_json_equals_python_and_littles_law_holds():
    args = ["--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "4", "--replicas", "2", "--trace", str(CONV),
            "--requests", "400", "--slo", "mlperf-interactive", "--fail", "replica:1@20", "--json"]
    cli = json.loads(subprocess.run([trnsim_cli(), "serve", *args], capture_output=True, text=True, check=True).stdout)
    py = trnsim.serve(**DEPLOY, replicas=2, trace=str(CONV), requests=400, slo="mlperf-interactive",
                      fail=["replica:1@20"])
    assert cli == py
    assert py["littles_law_mean_in_system"] == pytest.approx(py["littles_law_rate_x_latency"], rel=1e-9)
    assert py["requests"] == 400 and py["incidents"][0]["what"] == "replica"
    assert py["retries"] == py["incidents"][0]["retried_requests"]


def test_timeline_and_progress_are_quiet_in_json_mode(tmp_path):
    out = tmp_path / "series.csv"
    p = subprocess.run([trnsim_cli(), "serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "4",
                        "--rate", "4", "--duration", "20", "--timeline", str(out), "--json"],
                       capture_output=True, text=True, check=True)
    assert p.stderr == ""
    rows = out.read_text().splitlines()
    assert rows[0].startswith("t_s,arrivals,completions,output_tokens")
    assert sum(int(r.split(",")[1]) for r in rows[1:]) == json.loads(p.stdout)["requests"]


@pytest.mark.parametrize("text,needle", [
    ("TIMESTAMP,ContextTokens\n1,5\n", "no column 'GeneratedTokens'"),
    ("TIMESTAMP,ContextTokens,GeneratedTokens\n1,5,-3\n", "row 2, GeneratedTokens: -3 is negative"),
    ("TIMESTAMP,ContextTokens,GeneratedTokens\n2,5,3\n1,5,3\n", "row 3, TIMESTAMP 1 is earlier"),
    ("TIMESTAMP,ContextTokens,GeneratedTokens\n1,131000,100\n", "past the model's context of 131072"),
])
def test_bad_traces_are_one_line_errors(tmp_path, text, needle):
    trace = tmp_path / "t.csv"
    trace.write_text(text)
    p = subprocess.run([trnsim_cli(), "serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "4",
                        "--trace", str(trace)], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.startswith("trnsim: error:") and needle in p.stderr and p.stderr.count("\n") == 1
    with pytest.raises(trnsim.TrnsimError, match=needle.split(",")[0]):
        trnsim.serve(**DEPLOY, trace=str(trace))


def test_deployment_that_does_not_fit_is_an_error():
    p = subprocess.run([trnsim_cli(), "serve", "--model", "llama-3.1-70b", "--system", "trn2.48xlarge", "--tp", "1",
                        "--rate", "1", "--requests", "5"], capture_output=True, text=True)
    assert p.returncode == 2 and "GiB" in p.stderr and p.stderr.count("\n") == 1
    with pytest.raises(trnsim.TrnsimError):
        trnsim.serve("llama-3.1-70b", "trn2.48xlarge", 1, rate=1, requests=5)
    with pytest.raises(trnsim.TrnsimError, match="unknown option 'bogus'"):
        trnsim.serve(**DEPLOY, rate=1, requests=5, bogus=3)


def test_progress_is_silent_on_short_runs_and_shown_by_the_callback(capsys):
    # A short run with progress on prints nothing (the simulator reports only after 2 s of wall).
    r = trnsim.serve(**DEPLOY, rate=0.02, requests=5, input=100, output=4, seed=3, progress=True)
    assert r["requests"] == 5
    assert capsys.readouterr().err == ""
    # The callback the simulator calls shows the requests done (plain lines off a terminal).
    from trnsim.serve import _ProgressCallback
    cb = _ProgressCallback()
    cb(12.0, 7, 10)
    cb.close(finished=False)
    err = capsys.readouterr().err
    assert "serve" in err and "7" in err and "10" in err


def test_link_mtbf_option_reaches_the_simulator():
    kw = dict(DEPLOY, rate=2, requests=200, input=200, output=20, seed=1, link_mtbf_hours=0.001, link_repair_s=1)
    a, b = trnsim.serve(**kw), trnsim.serve(**kw)
    assert a == b  # same seed, same result
    links = [i for i in a["incidents"] if "link" in str(i)]
    assert links and a.get("retries", 0) == 0
