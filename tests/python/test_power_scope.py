"""Power caps on a chip, an instance or a rack (hw/power_cap.h: the hosts' and the rack's fixed
power off first, the rest shared by the chips), on a GPU (its SM clock's operating points), and
the power counter track of llm and serve traces (docs/power-and-cost.md). Each against the
system files' numbers or the result's own energy."""
import json
import subprocess

import pytest

from cli_path import trnsim_cli
import trnsim


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([trnsim_cli(), *args], capture_output=True, text=True, timeout=300)


def cli_json(*args: str) -> dict:
    p = cli(*args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


LLM = ["llm", "--model", "llama-3-8b", "--system", "trn1.32xlarge", "--tp", "2", "--batch", "1", "--input", "256",
       "--output", "4"]  # one trn1 chip
# 8 requests at once on one trn2 chip (tp 4 logical cores of 2), or one H100.
SERVE = ["serve", "--model", "llama-3.1-8b", "--offline", "--requests", "8", "--input", "128", "--output", "8"]
TRN2 = ["--system", "trn2.48xlarge", "--tp", "4"]
P5 = ["--system", "p5.48xlarge", "--tp", "1"]
# configs/systems/trn1.32xlarge.yaml: 16 chips and a 1,500 W host per instance, 4 instances and
# 1,500 W of switches/power shelves per rack; trn2.48xlarge: 16 chips, 2,500 W, 2 per rack, 1,500 W.
TRN1_SCOPES = {"instance": (16, 1500.0), "rack": (64, 4 * 1500.0 + 1500.0)}


def check_cap(pc: dict, cap: float, scope: str, chips: int, fixed: float):
    assert pc["scope"] == scope and pc["chips_in_scope"] == chips
    assert pc["fixed_power_w"] == pytest.approx(fixed, rel=1e-12)
    assert pc["chip_cap_w"] == pytest.approx((cap - fixed) / chips, rel=1e-12)
    assert pc["met"] and pc["clock_scale"] < 1
    assert 0.99 * cap <= pc["scope_power_w"] <= cap * (1 + 1e-12)  # the cap held within 1%
    assert pc["scope_power_w"] == pytest.approx(pc["power_w"] * chips + fixed, rel=1e-12)


@pytest.mark.parametrize("scope", ["instance", "rack"])
def test_llm_instance_and_rack_caps_hold_within_one_percent(scope):
    top = cli_json(*LLM)
    chip_w = top["average_power_w"]  # one chip
    chips, fixed = TRN1_SCOPES[scope]
    cap = 0.9 * chip_w * chips + fixed
    j = cli_json(*LLM, "--power-cap", f"{cap:.9f}", "--power-cap-scope", scope)
    check_cap(j["power_cap"], cap, scope, chips, fixed)
    assert j["average_power_w"] == pytest.approx(j["power_cap"]["power_w"], rel=1e-9)  # the run is the throttled one
    assert j["time_s"] > top["time_s"]
    # The same budget per chip as a chip cap settles on the same clock.
    per_chip = cli_json(*LLM, "--power-cap", f"{(cap - fixed) / chips:.9f}")["power_cap"]
    assert per_chip["clock_scale"] == pytest.approx(j["power_cap"]["clock_scale"], abs=1e-6)


def test_serve_rack_and_train_instance_caps():
    top = cli_json(*SERVE, *TRN2, "--power-cap", "1000")["power_cap"]  # above it: the busy power per chip
    chips, fixed = 32, 2 * 2500.0 + 1500.0
    cap = 0.9 * top["power_w"] * chips + fixed
    j = cli_json(*SERVE, *TRN2, "--power-cap", f"{cap:.9f}", "--power-cap-scope", "rack")
    check_cap(j["power_cap"], cap, "rack", chips, fixed)
    assert j["clock_scale"] == j["power_cap"]["clock_scale"]
    train = ["train", "--model", "llama-2-7b", "--system", "trn1.32xlarge", "--nodes", "2", "--tp", "8", "--zero", "1",
             "--global-batch", "64", "--seq", "2048"]
    free = cli_json(*train)
    cap = 0.9 * free["average_power_w"] / free["chips"] * 16 + 1500.0
    t = cli_json(*train, "--power-cap", f"{cap:.9f}", "--power-cap-scope", "instance")
    check_cap(t["power_cap"], cap, "instance", 16, 1500.0)
    assert t["average_power_w"] / t["chips"] == pytest.approx(t["power_cap"]["power_w"], rel=1e-9)


def test_python_llm_power_cap_equals_the_cli():
    top = cli_json(*LLM)
    cap = 0.9 * top["average_power_w"] * 16 + 1500.0
    c = cli_json(*LLM, "--power-cap", f"{cap:.9f}", "--power-cap-scope", "instance")
    p = trnsim.llm("llama-3-8b", "trn1.32xlarge", 2, batch=1, input=256, output=4, power_cap=float(f"{cap:.9f}"),
                   power_cap_scope="instance")
    assert p["power_cap"] == c["power_cap"] and p["time_s"] == c["time_s"] and p["energy_j"] == c["energy_j"]


def test_bad_scopes_are_one_line_errors():
    for args, msg in ((["--power-cap", "300", "--power-cap-scope", "pod"], "expected chip, instance or rack"),
                      (["--power-cap", "1000", "--power-cap-scope", "instance"], "leaves nothing for the chips"),
                      (["--power-cap", "7000", "--power-cap-scope", "rack"], "leaves nothing for the chips")):
        p = cli(*LLM, *args)
        assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr
    p = cli("llm", "--model", "llama-3-8b", "--system", "trn1.2xlarge", "--tp", "2", "--batch", "1", "--input", "256",
            "--output", "4", "--power-cap", "5000", "--power-cap-scope", "rack")
    assert p.returncode == 2 and "instances_per_rack" in p.stderr, p.stderr
    with pytest.raises(trnsim.ConfigError, match="expected chip, instance or rack"):
        trnsim.llm("llama-3-8b", "trn1.32xlarge", 2, batch=1, input=256, output=4, power_cap=300, power_cap_scope="pod")


def voltage_at(f: float) -> float:
    """configs/gpus/h100.yaml's operating points, interpolated linearly."""
    pts = [(1.0, 1.0), (0.9, 0.94), (0.8, 0.88), (0.7, 0.83), (0.6, 0.78), (0.5, 0.74)]
    for (f1, v1), (f0, v0) in zip(pts, pts[1:]):
        if f >= f0:
            return v0 + (f - f0) / (f1 - f0) * (v1 - v0)
    raise ValueError(f)


def test_gpu_clock_scale_and_power_cap():
    base = ["serve", "--model", "llama-3.1-8b", "--offline", "--requests", "16", "--input", "2048", "--output", "4", *P5]
    top = cli_json(*base)
    slow = cli_json(*base, "--clock-scale", "0.8")
    assert slow["time_s"] > top["time_s"]
    # The same FLOPs at V(0.8)^2 per FLOP; static power x V; HBM per byte unchanged.
    assert slow["energy_by_unit_j"]["SM"] == pytest.approx(top["energy_by_unit_j"]["SM"] * 0.88 ** 2, rel=1e-9)
    assert slow["energy_by_unit_j"]["HBM"] == pytest.approx(top["energy_by_unit_j"]["HBM"], rel=1e-9)
    assert slow["idle_power_per_replica_w"] == pytest.approx(175.0 * 0.88, rel=1e-12)  # H100 static 175 W
    busy = cli_json(*base, "--power-cap", "1000")["power_cap"]
    assert busy["clock_scale"] == 1 and busy["power_w"] < 700  # under the H100's 700 W TDP
    cap = 0.85 * busy["power_w"]
    j = cli_json(*base, "--power-cap", f"{cap:.9f}")
    pc = j["power_cap"]
    assert pc["met"] and 0.99 * cap <= pc["power_w"] <= cap and pc["clock_scale"] < 1
    assert pc["voltage_scale"] == pytest.approx(voltage_at(pc["clock_scale"]), rel=1e-12)
    assert j["time_s"] > top["time_s"]
    assert j["energy_by_unit_j"]["SM"] == pytest.approx(top["energy_by_unit_j"]["SM"] * pc["voltage_scale"] ** 2, rel=1e-9)


def integrate_power(trace: dict) -> tuple[float, list]:
    """The "power" counter's integral (each value held until the next event), J, and its events."""
    ev = sorted((e for e in trace["traceEvents"] if e.get("ph") == "C" and e["name"] == "power"), key=lambda e: e["ts"])
    joules = sum(a["args"]["power_w"] * (b["ts"] - a["ts"]) * 1e-6 for a, b in zip(ev, ev[1:]))
    return joules, ev


def test_llm_trace_power_counter_integrates_to_the_energy(tmp_path):
    path = tmp_path / "llm.json"
    j = cli_json(*LLM, "--trace", str(path))
    joules, ev = integrate_power(json.loads(path.read_text()))
    assert joules == pytest.approx(j["energy_j"], rel=0.01)
    assert ev[-1]["ts"] * 1e-6 == pytest.approx(j["e2e_s"], rel=1e-9) and ev[-1]["args"]["power_w"] == 0
    for e in ev[:-1]:
        assert e["args"]["per_chip_w"] * j["chips"] == pytest.approx(e["args"]["power_w"], rel=1e-12)


def test_serve_power_trace_integrates_to_the_energy(tmp_path):
    path = tmp_path / "serve.json"
    j = cli_json("serve", "--model", "llama-3.1-8b", "--rate", "20", "--requests", "200", "--input", "256", "--output",
                 "64", *TRN2, "--replicas", "2", "--power-trace", str(path))
    joules, ev = integrate_power(json.loads(path.read_text()))
    assert joules == pytest.approx(j["energy_j"], rel=0.01)
    assert len(ev) > 5  # one per 1 s bin
    # Two one-chip replicas held all along: the per-chip power is half the fleet's.
    assert ev[0]["args"]["per_chip_w"] * 2 == pytest.approx(ev[0]["args"]["power_w"], rel=1e-9)


def test_compare_caps_every_system():
    j = cli_json("compare", "--model", "llama-3.1-8b", "--systems", "trn2.48xlarge,p5.48xlarge", "--tp",
                 "trn2.48xlarge=4,p5.48xlarge=1", "--rate", "20", "--requests", "100", "--replicas", "1",
                 "--power-cap", "300")
    for row in j["systems"]:
        pc = row["power_cap"]
        assert pc["cap_w"] == 300 and pc["scope"] == "chip" and row["clock_scale"] == pc["clock_scale"]
        assert pc["power_w"] <= 300 and (pc["unthrottled_power_w"] <= 300 or pc["power_w"] >= 0.99 * 300)
    gpu = j["systems"][1]["power_cap"]
    assert gpu["unthrottled_power_w"] > 300 and gpu["clock_scale"] < 1  # an H100 busy draws more
