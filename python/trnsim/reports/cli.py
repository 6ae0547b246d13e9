"""`python -m trnsim report RESULT... -o report.html` (what `trnsim report` hands over to)."""
from __future__ import annotations

import argparse
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", help="result files: --json output of any trnsim command, or a sweep's .parquet")
    p.add_argument("-o", "--output", default="report.html", help="the HTML file to write (default report.html)")
    p.add_argument("--title", default=None, help="the report's title (default: the kinds it shows)")


def run(args: argparse.Namespace) -> int:
    try:
        from trnsim.reports import ReportInputError, build_report
    except ImportError as e:
        print(f"trnsim: error: report needs {e.name} (pip install -r requirements.txt)", file=sys.stderr)
        return 2
    try:
        # A title from a non-UTF-8 argument (surrogate escapes) cannot be written as UTF-8 HTML.
        title = None if args.title is None else args.title.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        out = build_report(args.results, args.output, title)
    except (ReportInputError, OSError) as e:
        print(f"trnsim: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)
    return 0
