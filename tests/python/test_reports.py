"""trnsim report: the data reductions against numpy, every kind renders (partial results too),
bad input is a one-line error, and a large serving report stays small."""
import json
import subprocess
import sys

import numpy as np
import pytest

from cli_path import ROOT, trnsim_cli
from trnsim.reports import ReportInputError, report_html
from trnsim.reports import samples
from trnsim.reports.render_sweep import pareto
from trnsim.reports.section import cdf_points, downsample_series


def test_cdf_points_match_numpy_quantiles_in_the_tail():
    v = np.random.default_rng(3).lognormal(0, 1, 100_000)
    x, q = cdf_points(v, 600)
    assert len(x) <= 600 and np.all(np.diff(x) >= 0) and np.all(np.diff(q) > 0)
    for p in (0.5, 0.9, 0.99, 0.999):
        i = int(np.argmin(np.abs(q - p)))
        assert abs(q[i] - p) < 2e-3 * (1 if p < 0.99 else 0.5)
        assert x[i] == pytest.approx(np.quantile(v, q[i]), rel=1e-12)


def test_downsample_keeps_the_mean_and_bounds_the_size():
    t = np.arange(100_003, dtype=float)
    y = np.sin(t / 1000) + t * 1e-5
    x2, ys = downsample_series(t, {"y": y}, 1000)
    assert len(x2) == 1000
    edges = np.linspace(0, len(t), 1001).astype(int)
    counts = np.diff(edges)
    assert np.sum(ys["y"] * counts) / counts.sum() == pytest.approx(y.mean(), rel=1e-12)
    assert ys["y"][0] == pytest.approx(y[:counts[0]].mean(), rel=1e-12)


def test_pareto_front_matches_brute_force():
    rng = np.random.default_rng(5)
    pts = [(float(a), float(b), i) for i, (a, b) in enumerate(rng.random((300, 2)))]
    brute = {i for x, y, i in pts if not any((x2 <= x and y2 <= y) and (x2 < x or y2 < y) for x2, y2, _ in pts)}
    assert {i for *_, i in pareto(pts)} == brute
    brute_max = {i for x, y, i in pts if not any((x2 <= x and y2 >= y) and (x2 < x or y2 > y) for x2, y2, _ in pts)}
    assert {i for *_, i in pareto(pts, maximise_y=True)} == brute_max


def _figures(html: str) -> int:
    return html.count('class="trnsim-fig"')


@pytest.mark.parametrize("kind,result", [
    ("llm", samples.llm()), ("serve", samples.serve(500, fail_at_s=5)), ("train", samples.train()),
    ("compare", samples.compare()), ("tco", samples.tco())])
def test_every_kind_draws_its_plots(kind, result):
    html = report_html([result])
    assert _figures(html) >= 2, kind
    assert "plotly-gz" in html and "cdn.plot.ly" not in html  # embedded, offline


@pytest.mark.parametrize("kind", ["kernel", "run", "collective", "llm", "serve", "train", "tco", "compare", "sweep"])
def test_a_result_with_only_its_kind_and_time_is_a_report_with_notes(kind):
    html = report_html([{"kind": kind, "time_s": 1.0}])
    assert "not drawn" in html or "0 points" in html or kind in ("tco",)


def test_bad_inputs_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ReportInputError, match=r"bad.json: not valid JSON"):
        report_html([bad])
    with pytest.raises(ReportInputError, match=r"kind \"gpu\" is not one of"):
        report_html([{"kind": "gpu"}])
    with pytest.raises(ReportInputError, match=r"no \"kind\" field and not recognisable"):
        report_html([{"x": 1}])
    p = subprocess.run([sys.executable, "-m", "trnsim", "report", str(bad), "-o", str(tmp_path / "r.html")],
                       capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "python")})
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and p.stderr.startswith("trnsim: error: ")


def test_serving_report_of_20000_requests_stays_small(tmp_path):
    html = report_html([samples.serve(20_000, rate_per_s=50, fail_at_s=30)])
    assert len(html.encode()) < 3_000_000  # ~2 MB of it is plotly itself


def test_trnsim_report_hands_over_from_the_cpp_command(tmp_path):
    exe = trnsim_cli()
    k = subprocess.run([exe, "kernel", "matmul", "--m", "256", "--k", "256", "--n", "256", "--timing-only", "--json"],
                       capture_output=True, text=True, check=True).stdout
    c = subprocess.run([exe, "collective", "--op", "all-reduce", "--system", "trn2.48xlarge", "--sizes", "1K:1M",
                        "--step-factor", "32", "--json"], capture_output=True, text=True, check=True).stdout
    assert json.loads(k)["kind"] == "kernel" and {r["kind"] for r in json.loads(c)} == {"collective"}
    (tmp_path / "k.json").write_text(k)
    (tmp_path / "c.json").write_text(c)
    out = tmp_path / "r.html"
    p = subprocess.run([exe, "report", str(tmp_path / "k.json"), str(tmp_path / "c.json"), "-o", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    html = out.read_text()
    assert "Roofline" in html and "Bus bandwidth vs message size" in html


def test_serve_in_the_layout_of_trnsim_serve_json_with_its_timeline(tmp_path):
    # fields as `trnsim serve --json` and `--timeline F.json` print them (flat percentiles, incidents at/back)
    serve = {"kind": "serve", "time_s": 150.0, "model": "m", "system": "trn2.48xlarge", "replicas": 2,
             "requests": 3000, "request_throughput_rps": 19.9, "goodput_rps": 18.9, "mean_kv_utilization": 0.04,
             "peak_kv_utilization": 0.11, "preemptions": 0, "output_token_throughput_tps": 2541.0,
             "incidents": [{"at_s": 60.0, "back_s": 68.3, "what": "replica", "retried_requests": 57,
                            "p99_ttft_during_s": 4.4, "time_to_recover_s": 8.3}]}
    for m, base in (("ttft", 0.1), ("tpot", 0.05), ("itl", 0.04), ("e2e", 6.0), ("queue", 0.03)):
        for i, p in enumerate(("mean", "p50", "p90", "p95", "p99", "max")):
            serve[f"{p}_{m}_s"] = base * (1 + i)
    timeline = [{"t_s": float(t), "arrivals": 20, "completions": 19, "kv_utilization": 0.01 * (t % 7),
                 "running": 50 + t % 9, "waiting": 0, "replicas_up": 2 - (60 <= t < 68),
                 "output_token_throughput_tps": 2500.0} for t in range(150)]
    (tmp_path / "serve.json").write_text(json.dumps(serve))
    (tmp_path / "tl.json").write_text(json.dumps(timeline))
    html = report_html([tmp_path / "serve.json", tmp_path / "tl.json"])
    for title in ("TTFT latency percentiles", "TTFT latency CDF (from the percentiles)", "Requests over time",
                  "KV-cache utilisation over time", "Running and queued sequences, replicas up",
                  "Request throughput and goodput", "retried_requests"):
        assert title in html, title
    with pytest.raises(ReportInputError, match="a serve timeline goes after its serve result"):
        report_html([tmp_path / "tl.json"])
