"""Size and opening time of the report of a 100,000-request serving run.

    PYTHONPATH=python .venv/bin/python bench/report_size.py [--requests 100000] [--serve R.json [--timeline T.json]] [--json]

Without --serve the result is trnsim.reports.samples.serve (synthetic per-request latencies and
a per-second time series in the layout of `trnsim serve --json`; an incident window included);
with --serve, a real `trnsim serve --json` file. Targets: < 5 MB, opened (every plot drawn) in
< 2 s in headless Chromium. The opening time is wall time from navigation to the last plot
drawn, best and median of 3, with the machine's load average beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from trnsim.reports import build_report, samples  # noqa: E402
from trnsim.reports.browser import Chromium  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--serve", help="a real `trnsim serve --json` result instead of the synthetic one")
    ap.add_argument("--timeline", help="with --serve: its `--timeline F.json` (drawn as its time series)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        src = Path(args.serve) if args.serve else Path(d) / "serve.json"
        if not args.serve:
            src.write_text(json.dumps(samples.serve(args.requests, rate_per_s=40.0, fail_at_s=600.0)))
        t0 = time.perf_counter()
        html = build_report([src] + ([args.timeline] if args.timeline else []), Path(d) / "serve.html")
        build_s = time.perf_counter() - t0
        size = html.stat().st_size
        opens, renders = [], []
        load0 = os.getloadavg()[0]
        with Chromium() as b:
            for i in range(args.repeat):
                c = b.check(html, ROOT / "build" / "test-artifacts" / "reports" / "serve-100k.png" if i == 0 else None)
                assert not c.console_errors and not c.empty_plots, (c.console_errors, c.empty_plots)
                opens.append(c.open_s)
                renders.append(c.render_ms / 1e3)
        load1 = os.getloadavg()[0]
        r = json.loads(src.read_text())
        n = r["requests"] if isinstance(r.get("requests"), int) else len(r.get("requests", []))
    out = {"requests": n, "input_json_bytes": src.stat().st_size if args.serve else None, "report_bytes": size,
           "build_s": build_s, "open_s_best": min(opens), "open_s_median": statistics.median(opens),
           "page_render_s_best": min(renders), "loadavg_1min": [load0, load1], "machine_cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"serving report of {n} requests: {size / 1e6:.2f} MB (target < 5), built in {build_s:.1f} s; "
              f"opened in headless Chromium in {min(opens):.2f} s best, {statistics.median(opens):.2f} s median "
              f"of {args.repeat} (target < 2); load average {load0:.1f} -> {load1:.1f} on {os.cpu_count()} cores")
    return 0 if size < 5e6 else 1


if __name__ == "__main__":
    sys.exit(main())
