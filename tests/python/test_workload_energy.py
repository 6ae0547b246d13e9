"""Energy of llm, serve and train results and power caps on them (docs/power-and-cost.md): each
result's energy is the sum of its units'; serve's is the iterations' dynamic energy (its
timeline) plus the chips' static power over the replicas' held time, with the per-token and
per-MW figures derived by their formulas; a GPU system reports the same fields; a chip power
cap's throttled clock holds the cap within 1% (instance, rack and GPU caps: test_power_scope.py)."""
import json
import subprocess

import pytest

from cli_path import trnsim_cli


def cli_json(*args: str) -> dict:
    p = subprocess.run([trnsim_cli(), *args, "--json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


LLM = ["llm", "--model", "llama-3-8b", "--system", "trn1.32xlarge", "--tp", "2", "--batch", "1", "--input", "256",
       "--output", "4"]
SERVE = ["serve", "--model", "llama-3.1-8b", "--rate", "20", "--requests", "200", "--input", "256", "--output", "64"]
TRAIN = ["train", "--model", "llama-2-7b", "--system", "trn1.32xlarge", "--nodes", "2", "--tp", "8", "--zero", "1",
         "--global-batch", "64", "--seq", "2048"]


def units_sum(j: dict) -> float:
    return sum(j["energy_by_unit_j"].values())


def test_llm_energy_is_the_sum_of_its_units():
    j = cli_json(*LLM)
    assert j["energy_j"] == pytest.approx(units_sum(j), rel=1e-12)
    assert j["average_power_w"] == pytest.approx(j["energy_j"] / j["e2e_s"], rel=1e-12)
    assert j["energy_j"] == pytest.approx(j["prefill_energy_j"] + 3 * j["decode_step_energy_j"], rel=1e-9)
    assert j["energy_by_unit_j"]["static"] == pytest.approx(75.0 * j["e2e_s"], rel=1e-9)  # one trn1 chip, 75 W
    assert j["peak_power_w"] >= j["average_power_w"] > 75.0
    # Not TDP x time: the chip is far from full TensorE in decode.
    assert j["average_power_w"] < 250.0


@pytest.mark.parametrize("system,tp", [("trn2.48xlarge", "4"), ("p5.48xlarge", "1")])
def test_serve_energy_from_iterations_and_idle_power(system, tp):
    j = cli_json(*SERVE, "--system", system, "--tp", tp, "--timeline", "/dev/null")
    assert j["energy_j"] == pytest.approx(units_sum(j), rel=1e-12)
    assert j["energy_by_unit_j"]["static"] == pytest.approx(j["idle_power_per_replica_w"] * j["replica_seconds"], rel=1e-12)
    tokens = j["output_tokens"]
    assert j["energy_per_output_token_j"] == pytest.approx(j["energy_j"] / tokens, rel=1e-12)
    assert j["energy_per_request_j"] == pytest.approx(j["energy_j"] / j["requests"], rel=1e-12)
    assert j["server_energy_j"] == pytest.approx(j["energy_j"] + j["host_power_per_replica_w"] * j["replica_seconds"],
                                                 rel=1e-12)
    assert j["facility_energy_j"] == pytest.approx(j["server_energy_j"] * 1.15, rel=1e-12)
    for level, e in (("chip", "energy_j"), ("server", "server_energy_j"), ("facility", "facility_energy_j")):
        assert j[f"output_tokens_per_s_per_mw_{level}"] == pytest.approx(tokens / j[e] * 1e6, rel=1e-12)
    assert j["average_power_w"] == pytest.approx(j["energy_j"] / j["duration_s"], rel=1e-12)
    assert j["peak_power_w"] >= j["average_power_w"] * 0.999
    if system.startswith("p5"):
        assert j["energy_by_unit_j"]["SM"] > 0


def test_serve_dynamic_energy_matches_its_timeline(tmp_path):
    out = tmp_path / "t.json"
    j = cli_json(*SERVE, "--system", "trn2.48xlarge", "--tp", "4", "--timeline", str(out))
    dynamic = sum(b["dynamic_energy_j"] for b in json.loads(out.read_text()))
    assert dynamic + j["energy_by_unit_j"]["static"] == pytest.approx(j["energy_j"], rel=1e-9)


def test_train_energy_and_clock_scale():
    top = cli_json(*TRAIN)
    assert top["energy_j"] == pytest.approx(units_sum(top), rel=1e-12)
    assert top["energy_by_unit_j"]["static"] == pytest.approx(75.0 * top["chips"] * top["time_s"], rel=1e-9)
    assert top["energy_per_token_j"] == pytest.approx(top["energy_j"] / (64 * 2048), rel=1e-12)
    assert top["peak_power_w"] >= top["average_power_w"]
    low = cli_json(*TRAIN, "--clock-scale", "0.8")
    assert low["clock_scale"] == 0.8
    assert top["time_s"] < low["time_s"] <= top["time_s"] / 0.8 * 1.0001
    v = 0.88  # trn1's operating point at clock 0.8 (configs/chips/trn1.yaml)
    assert low["energy_by_unit_j"]["TensorE"] == pytest.approx(top["energy_by_unit_j"]["TensorE"] * v * v, rel=1e-6)


@pytest.mark.parametrize("args,chips", [(LLM, 1), (TRAIN, 32)])
def test_power_cap_holds_within_one_percent(args, chips):
    top = cli_json(*args)
    cap = 0.9 * top["average_power_w"] / chips  # per chip, below the unthrottled power
    j = cli_json(*args, "--power-cap", f"{cap:.6f}")
    pc = j["power_cap"]
    assert pc["met"] and pc["clock_scale"] < 1
    assert 0.99 * cap <= pc["power_w"] <= cap
    assert pc["unthrottled_power_w"] == pytest.approx(top["average_power_w"] / chips, rel=1e-9)
    # The reported run is the throttled one: its power per chip is the search's last measure.
    assert j["average_power_w"] / chips == pytest.approx(pc["power_w"], rel=1e-9)
    assert j["time_s"] > top["time_s"]


def test_serve_power_cap_and_errors():
    # Small (each candidate clock measures its node costs once): 8 requests at once.
    base = ["serve", "--model", "llama-3.1-8b", "--offline", "--requests", "8", "--input", "128", "--output", "8",
            "--system", "trn2.48xlarge", "--tp", "4"]
    top = cli_json(*base, "--power-cap", "1000")["power_cap"]  # above it: no throttling, the busy power
    assert top["clock_scale"] == 1 and top["searched_runs"] == 1
    cap = 0.9 * top["power_w"]
    j = cli_json(*base, "--power-cap", f"{cap:.6f}")
    pc = j["power_cap"]
    assert pc["met"] and 0.99 * cap <= pc["power_w"] <= cap and pc["clock_scale"] < 1
    assert j["clock_scale"] == pc["clock_scale"] and j["time_s"] > top["time_s"]
    for bad, msg in ((["--power-cap", "-5", "--system", "p5.48xlarge", "--tp", "1"], "--power-cap"),
                     (["--pue", "0.5", "--system", "trn2.48xlarge", "--tp", "4"], "--pue")):
        p = subprocess.run([trnsim_cli(), *SERVE, *bad], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_tco_training_to_a_token_budget(tmp_path):
    train = cli_json(*TRAIN)
    path = tmp_path / "train.json"
    path.write_text(json.dumps(train))
    j = cli_json("tco", "--system", "trn1.32xlarge", "--train", str(path), "--tokens", "1e12")
    job = j["job"]
    hours = 1e12 / train["tokens_per_s"] / 3600
    instances = train["chips"] / 16
    assert job["time_s"] == pytest.approx(hours * 3600, rel=1e-12)
    assert job["cloud_usd"] == pytest.approx(21.50 * instances * hours, rel=1e-12)  # trn1.32xlarge on-demand
    facility = (train["average_power_w"] + 1500 * instances) * hours * 3600 * 1.15  # host 1,500 W per instance
    assert job["facility_energy_j"] == pytest.approx(facility, rel=1e-9)
    assert job["facility_energy_mwh"] == pytest.approx(facility / 3.6e9, rel=1e-12)
    assert job["chip_energy_j"] == pytest.approx(train["energy_per_token_j"] * 1e12, rel=1e-9)
    assert 0 < job["owned_usd"] < job["cloud_usd"]


def test_tco_reads_a_serve_result(tmp_path):
    serve = cli_json(*SERVE, "--system", "trn2.48xlarge", "--tp", "4")
    path = tmp_path / "serve.json"
    path.write_text(json.dumps(serve))
    j = cli_json("tco", "--system", "trn2.48xlarge", "--serve", str(path), "--price", "30")
    a = j["assumptions"]
    assert a["replica_tokens_per_s"] == pytest.approx(serve["output_token_throughput_tps"], rel=1e-12)
    assert a["replica_chips"] == serve["chips"]
    assert a["busy_chip_power_w"] == pytest.approx(serve["average_power_w"] / serve["chips"], rel=1e-12)
