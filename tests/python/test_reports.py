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
