"""`serve` results: latency CDFs and percentiles, throughput and latency over time, goodput, KV
utilisation and incident windows. Per-request data is reduced to CDF quantiles and time series
to bucket means, so a 100,000-request run draws as a report of a few hundred kB of data."""
from __future__ import annotations

import plotly.graph_objects as go

from trnsim.reports.fields import PERCENTILES, columns, matching, percentiles, time_column
from trnsim.reports.render_llm import param
from trnsim.reports.section import Result, Section, Table, cdf_points, downsample_series, get, number

THROUGHPUT = ("request_throughput_rps", "request_throughput_per_s", "requests_per_s", "throughput.requests_per_s")
TOKENS = ("output_token_throughput_tps", "output_tokens_per_s", "throughput.output_tokens_per_s")
METRICS = (("ttft", "TTFT"), ("tpot", "TPOT"), ("itl", "ITL"), ("e2e", "end-to-end"), ("queue", "queueing"))
MAX_SERIES_POINTS = 1500


def per_request(d: dict) -> dict[str, list] | None:
    return columns(get(d, "requests", "per_request", "request_latencies"))


def timeseries(d: dict) -> dict[str, list] | None:
    return columns(get(d, "timeseries", "time_series", "timeline", "per_second"))


def incidents(d: dict) -> list[tuple[float, float, str]]:
    """(start, end, what) windows of failures and incidents, for shading time-series plots."""
    out = []
    for ev in get(d, "incidents", "failures", "incident_windows", default=[]) or []:
        if not isinstance(ev, dict):
            continue
        start = number(get(ev, "start_s", "time_s", "at_s", "t_s"))
        end = number(get(ev, "end_s", "back_s", "recovered_s", "recovery_end_s"))
        if end is None and start is not None:
            dur = number(get(ev, "duration_s", "recovery_s", "time_to_recover_s"))
            end = start + dur if dur is not None else None
        if start is not None:
            out.append((start, end if end is not None else start, str(get(ev, "kind", "what", "type", "name", default="incident"))))
    return out


def _shade(fig: go.Figure, windows: list[tuple[float, float, str]]) -> None:
    for a, b, what in windows:
        if b > a:
            fig.add_vrect(x0=a, x1=b, fillcolor="red", opacity=0.12, line_width=0, annotation_text=what,
                          annotation_position="top left")
        else:
            fig.add_vline(x=a, line={"color": "red", "dash": "dot"}, annotation_text=what)


def _percentile_figures(results: list[Result], s: Section) -> None:
    drawn = False
    for m, name in METRICS:
        fig = go.Figure()
        for r in results:
            p = percentiles(r.data, m)
            if p:
                keys = [k for k in PERCENTILES if k in p]
                fig.add_bar(name=r.label, x=keys, y=[p[k] * 1e3 for k in keys])
        if fig.data:
            drawn = True
            s.figures.append(fig.update_layout(title=f"{name} latency percentiles", barmode="group",
                                               yaxis={"title": "ms"}))
    if not drawn:
        s.skip("Latency percentiles", "ttft_s/tpot_s/e2e_s percentile")


def _cdf_figures(results: list[Result], s: Section) -> None:
    reqs = [(r, per_request(r.data)) for r in results]
    if not any(c for _, c in reqs):
        _cdf_from_percentiles(results, s)
        return
    for m, name in METRICS:
        fig = go.Figure()
        for r, c in reqs:
            col = next((k for k in (f"{m}_s", m) if c and k in c), None)
            if col:
                x, q = cdf_points(c[col])
                if len(x):
                    fig.add_scatter(x=x * 1e3, y=q, mode="lines", name=r.label)
        if fig.data:
            s.figures.append(fig.update_layout(title=f"{name} latency CDF", xaxis={"title": "ms", "type": "log"},
                                               yaxis={"title": "fraction of requests", "range": [0, 1.01]}))


def _cdf_from_percentiles(results: list[Result], s: Section) -> None:
    """Without per-request data: the CDF's known points (p50 ... p99, max), joined by straight lines."""
    at = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p99.9": 0.999, "max": 1.0}
    drawn = False
    for m, name in METRICS[:4]:
        fig = go.Figure()
        for r in results:
            p = percentiles(r.data, m)
            pts = sorted((p[k], q) for k, q in at.items() if k in p)
            if len(pts) >= 2:
                fig.add_scatter(x=[x * 1e3 for x, _ in pts], y=[q for _, q in pts], mode="lines+markers", name=r.label)
        if fig.data:
            drawn = True
            s.figures.append(fig.update_layout(title=f"{name} latency CDF (from the percentiles)",
                                               xaxis={"title": "ms", "type": "log"},
                                               yaxis={"title": "fraction of requests", "range": [0, 1.01]}))
    s.notes.append("Latency CDFs: the result has no per-request latencies (requests); drawn through its percentiles."
                   if drawn else "Latency CDFs: not drawn, the result has no requests or percentile fields.")


def _kv(results: list[Result], s: Section) -> None:
    rows = [(r.label, number(get(r.data, "mean_kv_utilization", "mean_kv_utilisation", "kv_utilization.mean")),
             number(get(r.data, "peak_kv_utilization", "peak_kv_utilisation", "kv_utilization.max")),
             number(get(r.data, "preemptions"))) for r in results]
    rows = [x for x in rows if x[1] is not None or x[2] is not None]
    if rows:
        fig = go.Figure()
        fig.add_bar(name="mean", x=[x[0] for x in rows], y=[100 * (x[1] or 0) for x in rows])
        fig.add_bar(name="peak", x=[x[0] for x in rows], y=[100 * (x[2] or 0) for x in rows])
        s.figures.append(fig.update_layout(title="KV-cache utilisation (preemptions: " +
                                           ", ".join(f"{x[0]} {int(x[3] or 0)}" for x in rows) + ")",
                                           barmode="group", yaxis={"title": "% of the KV cache"}))


def _time_figures(results: list[Result], s: Section) -> None:
    series = [(r, timeseries(r.data)) for r in results]
    if not any(c for _, c in series):
        s.skip("Throughput and latency over time", "timeseries")
        return
    groups = (("Requests over time", ("request", "arrivals", "completions", "retries"),
               ("latency", "ttft", "tpot", "e2e", "token"), "requests per bin"),
              ("Tokens over time", ("token",), ("latency", "ttft", "tpot", "e2e"), "tokens (per s or per bin)"),
              ("Latency over time", ("ttft", "tpot", "e2e", "latency", "queue_s", "queueing"), ("per_s",), "ms"),
              ("KV-cache utilisation over time", ("kv",), ("per_s",), "fraction"),
              ("Running and queued sequences, replicas up", ("running", "batch", "queued", "waiting", "replicas"),
               ("per_s", "kv"), "count"))
    for title, needles, exclude, unit in groups:
        fig = go.Figure()
        for r, c in series:
            t = time_column(c) if c else None
            if not t:
                continue
            keys = [k for k in matching(c, *needles, exclude=exclude) if k != t]
            if not keys:
                continue
            x, ys = downsample_series(c[t], {k: [number(v) or 0.0 for v in c[k]] for k in keys}, MAX_SERIES_POINTS)
            scale = 1e3 if unit == "ms" else 1.0
            for k, y in ys.items():
                fig.add_scatter(x=x, y=y * scale, mode="lines", name=f"{r.label}: {k}" if len(results) > 1 else k)
        if fig.data:
            for r, _ in series:
                _shade(fig, incidents(r.data))
            s.figures.append(fig.update_layout(title=title, xaxis={"title": "simulated time (s)"}, yaxis={"title": unit}))


def _goodput(results: list[Result], s: Section) -> None:
    fig = go.Figure()
    rows = []
    for r in results:
        thr = number(get(r.data, *THROUGHPUT))
        good = number(get(r.data, "goodput_rps", "goodput_requests_per_s", "goodput.requests_per_s", "goodput_per_s"))
        frac = number(get(r.data, "goodput_fraction", "goodput.fraction", "slo_attainment"))
        if good is None and frac is not None and thr is not None:
            good = thr * frac
        if thr is not None or good is not None:
            rows.append((r.label, thr, good))
    if rows:
        fig.add_bar(name="throughput", x=[r[0] for r in rows], y=[r[1] or 0 for r in rows])
        fig.add_bar(name="goodput (within SLO)", x=[r[0] for r in rows], y=[r[2] or 0 for r in rows])
        s.figures.append(fig.update_layout(title="Request throughput and goodput", barmode="group",
                                           yaxis={"title": "requests/s"}))
    else:
        s.skip("Goodput", "request_throughput_per_s/goodput_requests_per_s")


def render_serve(results: list[Result]) -> list[Section]:
    s = Section("Serving")
    s.tables.append(Table(
        ["result", "model", "system", "replicas", "requests", "duration (s)", "TTFT p99 (ms)", "TPOT p99 (ms)",
         "req/s", "output tok/s"],
        [[r.label, str(param(r.data, "model") or ""), str(param(r.data, "system") or ""), param(r.data, "replicas"),
          get(r.data, "requests_completed", "completed_requests", "num_requests", "requests_total", "requests"),
          r.data.get("time_s"), (percentiles(r.data, "ttft").get("p99") or 0) * 1e3,
          (percentiles(r.data, "tpot").get("p99") or 0) * 1e3,
          get(r.data, *THROUGHPUT), get(r.data, *TOKENS)]
         for r in results]))
    _percentile_figures(results, s)
    _cdf_figures(results, s)
    _time_figures(results, s)
    _goodput(results, s)
    _kv(results, s)
    windows = [(r.label, w) for r in results for w in incidents(r.data)]
    if windows:
        s.tables.append(Table(["result", "incident", "start (s)", "back (s)"], [[l, w[2], w[0], w[1]] for l, w in windows]))
    detail = [(r.label, ev) for r in results for ev in get(r.data, "incidents", default=[]) or [] if isinstance(ev, dict)]
    keys = list(dict.fromkeys(k for _, ev in detail for k, v in ev.items() if not isinstance(v, (dict, list))))
    if detail and len(keys) > 3:
        s.tables.append(Table(["result"] + keys, [[l] + [ev.get(k) for k in keys] for l, ev in detail]))
    return [s]
