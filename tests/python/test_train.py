"""`trnsim train` and trnsim.train(): one result from both, the breakdown summing to the step,
the 1F1B bubble against (p-1)/(m+p-1), memory-fit and option errors as one line with exit code
2, goodput against Daly's closed form and a seeded Monte-Carlo run, the failure timeline."""
import json
import subprocess

import pytest

import trnsim
from cli_path import trnsim_cli

LLAMA = dict(model="llama-2-7b", system="trn1.32xlarge", nodes=16, tp=8, zero=1, global_batch=1024, seq=4096)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([trnsim_cli(), "train", *args], capture_output=True, text=True, timeout=120)


def test_cli_and_python_give_the_same_bits():
    out = cli("--model", "llama-2-7b", "--system", "trn1.32xlarge", "--nodes", "16", "--tp", "8", "--zero", "1",
              "--global-batch", "1024", "--seq", "4096", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    p = trnsim.train(**LLAMA)
    assert r["kind"] == "train" and p["kind"] == "train"
    assert r["time_s"] == p["time_s"] == trnsim.train(**LLAMA)["time_s"]
    s = r["step"]
    parts = s["compute_s"] + s["exposed_comm_s"] + s["bubble_s"] + s["optimizer_s"]
    assert parts == pytest.approx(r["time_s"], rel=1e-9)
    assert r["sequences_per_s"] == pytest.approx(1024 / r["time_s"], rel=1e-12)
    assert r["layout"]["dp"] == 64 and r["chips"] == 256


def test_one_f_one_b_bubble_is_the_closed_form():
    # GPT-3 23B: pp 4, 32 micro-batches per data-parallel rank; stages equal but the head.
    r = trnsim.train("gpt3-23b", nodes=32, tp=8, pp=4, global_batch=1024, seq=2048, precision="bf16-sr")
    p, m = 4, r["layout"]["micro_batches"]
    assert m == 32
    assert r["step"]["bubble_percent"] / 100 == pytest.approx((p - 1) / (m + p - 1), rel=0.25)


def test_layout_that_does_not_fit_is_one_line_with_the_excess():
    out = cli("--model", "llama-2-70b", "--nodes", "1", "--tp", "8", "--global-batch", "4", "--seq", "4096")
    assert out.returncode == 2
    # A cold cost cache also prints the progress channel's protocol lines (common/progress.h).
    lines = [x for x in out.stderr.strip().splitlines() if not x.startswith("trnsim-progress:")]
    assert len(lines) == 1 and lines[0].startswith("trnsim: error: train: llama-2-70b does not fit")
    assert "over by" in lines[0] and "GiB" in lines[0]
    with pytest.raises(trnsim.ShapeError, match="over by"):
        trnsim.train("llama-2-70b", tp=8, global_batch=4, seq=4096)


@pytest.mark.parametrize("args, needle", [
    (["--zero", "5"], "--zero"),
    (["--recompute", "some"], "--recompute"),
    (["--dp", "3"], "--dp 3"),
    (["--micro-batch", "3"], "--micro-batch 3"),
])
def test_bad_options_are_config_errors(args, needle):
    base = ["--model", "llama-2-7b", "--nodes", "16", "--tp", "8", "--global-batch", "1024", "--seq", "4096"]
    out = cli(*(base + args))
    assert out.returncode == 2, out.stdout
    assert out.stderr.startswith("trnsim: error:") and needle in out.stderr
    with pytest.raises(trnsim.ConfigError, match="unknown option 'tpp'"):
        trnsim.train("llama-2-7b", global_batch=8, seq=128, tpp=2)


def test_goodput_matches_daly_and_a_simulated_run():
    # A short MTBF so failures matter: 512 chips at 2,000 h each, 32 nodes.
    r = trnsim.train("gpt3-23b", nodes=32, tp=8, pp=4, global_batch=1024, seq=2048, precision="bf16-sr",
                     tokens=2e11, mtbf_hours=2000)
    t = r["train"]
    rate_per_h = 512 / 2000 + 32 / t["node_mtbf_hours"] + 32 / t["link_mtbf_hours"]
    assert t["mtbf_s"] == pytest.approx(3600 / rate_per_h, rel=1e-12)
    assert t["work_s"] == pytest.approx(t["steps"] * r["time_s"], rel=1e-12)
    # Daly's optimum, then his expected wall time, recomputed here from the reported inputs.
    import math
    d, M, R, tau = t["checkpoint_s"], t["mtbf_s"], t["restart_s"], t["checkpoint_interval_s"]
    x = d / (2 * M)
    assert tau == pytest.approx(math.sqrt(2 * d * M) * (1 + math.sqrt(x) / 3 + x / 9) - d, rel=1e-9)
    expected = M * math.exp(R / M) * math.expm1((tau + d) / M) * t["work_s"] / tau
    assert t["expected_s"] == pytest.approx(expected, rel=1e-9)
    assert t["simulated_s"] == pytest.approx(expected, rel=0.05)  # Monte-Carlo of the same process
    assert 0 < t["goodput_percent"] < 100
    assert t["goodput_percent"] + t["lost_percent"] == pytest.approx(100)


def test_injected_failures_make_a_timeline():
    r = trnsim.train(**LLAMA, steps=200, fail_at=[50, 150], checkpoint_interval_s=20 * 15.0)
    t = r["train"]
    events = [e["event"] for e in t["timeline"]]
    assert events == ["failure", "restart", "failure", "restart", "done"]
    assert t["timeline_s"] > 200 * r["time_s"] + 2 * t["restart_s"]
    out = cli("--model", "llama-2-7b", "--nodes", "16", "--tp", "8", "--zero", "1", "--global-batch", "1024",
              "--seq", "4096", "--steps", "100", "--fail-at", "10,60")
    assert out.returncode == 0, out.stderr
    assert "failure" in out.stdout and "restart" in out.stdout and "goodput" in out.stdout
