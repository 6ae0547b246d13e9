"""trnsim llm --clock-scale (DVFS on the LLM cost model): F = 1 is bit-identical to no flag;
F = 0.5 halves the engine clocks but not HBM, so no part speeds up and none slows by more than
the clock ratio 2 (closed form: t(F) <= t(1) / F); the cost cache never returns another clock's
costs (a warm run after F = 1 equals a cold run at F = 0.5)."""
import os
import subprocess

import pytest

import trnsim
from cli_path import trnsim_cli

ARGS = dict(model="llama-3-8b", system="trn1.32xlarge", tp=2, batch=1, input=512, output=4)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a"))
    return tmp_path


def strip(r):
    return {k: v for k, v in r.items() if k not in ("simulation_wall_s", "simulations")}


def test_clock_scale_1_is_bit_identical_to_no_flag():
    assert strip(trnsim.llm(**ARGS)) == strip(trnsim.llm(**ARGS, clock_scale=1.0))


def test_half_clock_bounds_and_cache_separation(cache_dir, monkeypatch):
    full = trnsim.llm(**ARGS)
    half_warm = trnsim.llm(**ARGS, clock_scale=0.5)  # same cache dir as the F = 1 run
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_dir / "b"))
    half_cold = trnsim.llm(**ARGS, clock_scale=0.5)
    assert strip(half_warm) == strip(half_cold)
    assert half_cold["clock_scale"] == 0.5
    for phase in ("prefill_breakdown", "decode_step_breakdown"):
        for part in ("matmul_s", "attention_s", "other_s"):
            t1, t05 = full[phase][part], half_cold[phase][part]
            assert t1 * (1 - 1e-9) <= t05 <= 2 * t1 * (1 + 1e-9), (phase, part, t1, t05)
    # Attention of the prefill is engine-bound in this model: close to the clock ratio.
    ratio = half_cold["prefill_breakdown"]["attention_s"] / full["prefill_breakdown"]["attention_s"]
    assert 1.6 <= ratio <= 2.0
    assert full["ttft_s"] < half_cold["ttft_s"] <= 2 * full["ttft_s"]
    assert full["tpot_s"] <= half_cold["tpot_s"] <= 2 * full["tpot_s"]


def test_cli_clock_scale_outside_operating_points_is_one_line_error():
    p = subprocess.run([trnsim_cli(), "llm", "--model", "llama-3-8b", "--system", "trn1.32xlarge", "--tp", "2",
                        "--batch", "1", "--input", "64", "--output", "2", "--clock-scale", "0.2"],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert p.returncode == 2 and p.stderr.startswith("trnsim: error:") and "clock scale 0.2" in p.stderr
    assert p.stderr.count("\n") == 1


def test_serve_clock_scale():
    kw = dict(offline=True, requests=4, input=128, output=8)
    full = trnsim.serve("llama-3-8b", "trn1.32xlarge", 2, **kw)
    same = trnsim.serve("llama-3-8b", "trn1.32xlarge", 2, clock_scale=1.0, **kw)
    half = trnsim.serve("llama-3-8b", "trn1.32xlarge", 2, clock_scale=0.5, **kw)
    assert same["time_s"] == full["time_s"] and half["clock_scale"] == 0.5
    assert full["time_s"] < half["time_s"] <= 2 * full["time_s"]
