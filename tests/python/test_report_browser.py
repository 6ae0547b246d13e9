"""Reports of every kind opened in a real browser (headless Chromium over the DevTools pipe):
no console errors, every plot drawn with data, a screenshot kept under
build/test-artifacts/reports/. Skipped, with the reason shown, where Chromium is missing;
under CI=true a missing Chromium fails (scripts/install-deps.sh installs it)."""
import json
import os
import subprocess

import pytest

from cli_path import ROOT, trnsim_cli
from trnsim.reports import build_report, samples
from trnsim.reports.browser import Chromium, find_chromium
from trnsim.reports.page import render_page
from trnsim.reports.section import Section, Table

ARTIFACTS = ROOT / "build" / "test-artifacts" / "reports"


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        msg = "no Chromium: the browser test of the reports did not run (apt-get install chromium)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    with Chromium() as b:
        yield b


def _json(exe, *argv, env=None):
    return json.loads(subprocess.run([exe, *argv, "--json"], capture_output=True, text=True, check=True,
                                     env=env).stdout)


def _real_results(tmp_path):
    exe = trnsim_cli()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # the llm cost cache, not the user's
    out = {"llm": [_json(exe, "llm", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "8", "--batch", str(b),
                         "--input", str(i), "--output", "64", env=env) for b, i in ((1, 512), (8, 512), (8, 2048))],
           "train": [_json(exe, "train", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--nodes", "4",
                           "--tp", str(tp), "--pp", str(pp), "--dp", "16", "--global-batch", "256", "--seq", "4096",
                           env=env) for tp, pp in ((8, 2), (4, 4))]}
    for name, argv in (("kernel", ["kernel", "matmul", "--m", "512", "--k", "512", "--n", "512", "--dtype", "bf16",
                                   "--timing-only"]),
                       ("collective", ["collective", "--op", "all-reduce", "--system", "trn2.48xlarge",
                                       "--sizes", "1K:64M", "--step-factor", "8"])):
        out[name] = json.loads(subprocess.run([exe, *argv, "--json"], capture_output=True, text=True, check=True).stdout)
    onnx = pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((128, 256)).astype(np.float32), "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 128])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 256])], [w])
    model = tmp_path / "mlp.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), model)
    out["run"] = json.loads(subprocess.run([exe, "run", str(model), "--timing-only", "--json"], capture_output=True,
                                           text=True, check=True).stdout)
    return out


def _sweep_rows():
    rows = [{"point_id": f"p{i}", "status": "ok", "tp": tp, "batch": b, "ttft_p99_s": 0.05 * b / tp + 0.01 * tp,
             "usd_per_million_tokens": 0.2 * tp / b ** 0.5, "energy_j_per_token": 0.1 * tp / b ** 0.3}
            for i, (tp, b) in enumerate((tp, b) for tp in (2, 4, 8) for b in (1, 4, 16))]
    rows.append({"point_id": "bad", "status": "error", "tp": 16, "batch": 1, "error": "does not fit"})
    return {"kind": "sweep", "axes": ["tp", "batch"], "rows": rows}


def test_every_kind_opens_in_chromium_with_all_plots_drawn(browser, tmp_path):
    real = _real_results(tmp_path)
    # real results of the commands this tree has; samples in the issues' layouts for the others
    reports = {"kernel": [real["kernel"]], "run": [real["run"]], "collective": [real["collective"]],
               "llm": real["llm"], "train": real["train"],
               "serve": [samples.serve(3000, fail_at_s=40), samples.serve(3000, rate_per_s=30, seed=2)],
               "compare": [samples.compare()], "tco": [samples.tco(), samples.tco("p5.48xlarge", 1.4)],
               "sweep": [_sweep_rows()]}
    failures = []
    for kind, results in reports.items():
        html = build_report(results, tmp_path / f"{kind}.html")
        check = browser.check(html, ARTIFACTS / f"{kind}.png")
        assert check.plots, f"{kind}: no plots"
        if check.console_errors or check.empty_plots:
            failures.append(f"{kind}: errors {check.console_errors}, empty plots {check.empty_plots}")
        assert check.screenshot.stat().st_size > 10_000
    assert not failures, failures


def test_the_check_catches_a_console_error_and_an_empty_plot(browser, tmp_path):
    import plotly.graph_objects as go
    s = Section("broken", figures=[go.Figure(go.Bar(x=["a"], y=[1])), go.Figure().update_layout(title="empty")])
    html = render_page("broken", [s], Table(["x"], [])).replace("</body>", "<script>console.error('boom')</script></body>")
    p = tmp_path / "broken.html"
    p.write_text(html)
    check = browser.check(p)
    assert any("boom" in e for e in check.console_errors)
    assert check.empty_plots == ["empty"]
