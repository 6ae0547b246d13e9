"""One self-contained HTML page: plotly's JavaScript from its wheel (gzip + base64, unpacked by
the browser's DecompressionStream, so no CDN and ~2 MB instead of ~4.8 MB), the figures as
JSON, and a self-check that records console errors and whether every plot drew its data.

The self-check's verdict is written into ``<pre id="trnsim-selfcheck">`` as JSON, which the
headless-browser test reads back with ``chromium --dump-dom``.
"""
from __future__ import annotations

import base64
import datetime
import functools
import gzip
import html
import json
from pathlib import Path

import plotly
import plotly.io as pio

from trnsim.reports.section import Section, Table, short

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#232f3e;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header .sub{color:#ccc;font-size:13px;margin-top:4px}
main{padding:8px 24px 40px;max-width:1400px}
section{background:#fff;border:1px solid #e3e3e3;border-radius:6px;margin:16px 0;padding:8px 16px}
section h2{font-size:17px;margin:8px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:8px}
.plot{height:400px;min-width:0}
.note{color:#8a5a00;font-size:13px;margin:4px 0}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f0f0f0}
td:first-child,th:first-child{text-align:left}
#trnsim-selfcheck{display:none}
#loading{color:#666;font-size:13px}
"""

# Shared by every figure so each one's JSON stays small.
_TEMPLATE = {
    "layout": {
        "font": {"size": 12},
        "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
        "paper_bgcolor": "white", "plot_bgcolor": "white",
        "xaxis": {"gridcolor": "#eee", "zerolinecolor": "#ccc", "linecolor": "#999", "automargin": True},
        "yaxis": {"gridcolor": "#eee", "zerolinecolor": "#ccc", "linecolor": "#999", "automargin": True},
        "colorway": ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                     "#bcbd22", "#17becf"],
        "legend": {"orientation": "h", "y": -0.2},
        "hovermode": "closest",
        "title": {"x": 0.01, "xanchor": "left", "font": {"size": 14}},  # left, clear of the mode bar
    }
}

_BOOT = r"""
window.__trnsim = {errors: [], plots: [], t0: performance.now()};
window.addEventListener('error', e => __trnsim.errors.push('error: ' + (e.message || e)));
window.addEventListener('unhandledrejection', e => __trnsim.errors.push('unhandled rejection: ' + e.reason));
(function(){ const ce = console.error.bind(console);
  console.error = function(...a){ __trnsim.errors.push(a.map(String).join(' ')); ce(...a); }; })();
"""

_RUN = r"""
async function trnsimLoadPlotly(){
  const b64 = document.getElementById('plotly-gz').textContent.trim();
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  const text = await new Response(stream).text();
  const s = document.createElement('script'); s.textContent = text; document.head.appendChild(s);
}
function trnsimPoints(cd){  // points plotly computed for one trace (typed-array data included)
  let n = 0;
  for (const p of (cd || [])) {
    for (const k of ['y', 's', 'v', 'x']) if (typeof p[k] === 'number' && isFinite(p[k])) { n++; break; }
  }
  return n;
}
async function trnsimRender(){
  const check = document.getElementById('trnsim-selfcheck');
  try {
    await trnsimLoadPlotly();
    const template = JSON.parse(document.getElementById('trnsim-template').textContent);
    for (const el of document.querySelectorAll('script.trnsim-fig')){
      const fig = JSON.parse(el.textContent);
      fig.layout = fig.layout || {}; fig.layout.template = template;
      const div = document.getElementById(el.dataset.div);
      const gd = await Plotly.newPlot(div, fig.data, fig.layout, {responsive: true, displaylogo: false});
      const points = (gd.calcdata || []).reduce((n, cd) => n + trnsimPoints(cd), 0);
      const drawn = gd.querySelectorAll('g.trace').length;
      __trnsim.plots.push({id: el.dataset.div, title: el.dataset.title, traces: (gd.data || []).length,
                           points: points, drawn_traces: drawn});
    }
  } catch (e) { __trnsim.errors.push('render: ' + e); }
  document.getElementById('loading').remove();
  __trnsim.render_ms = performance.now();  // since navigation start
  check.textContent = JSON.stringify(__trnsim);
  document.body.dataset.rendered = '1';
}
window.addEventListener('load', trnsimRender);
"""


@functools.lru_cache(maxsize=1)
def plotly_js_gzip_b64() -> str:
    """plotly.min.js from the installed wheel, gzipped and base64-encoded (cached per process)."""
    js = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    return base64.b64encode(gzip.compress(js, compresslevel=9, mtime=0)).decode("ascii")


def _script_json(obj) -> str:
    # "</" would end the <script> element early.
    return obj.replace("</", "<\\/") if isinstance(obj, str) else json.dumps(obj).replace("</", "<\\/")


def _figure_json(fig) -> str:
    d = json.loads(pio.to_json(fig, validate=False))
    d.get("layout", {}).pop("template", None)
    return _script_json(json.dumps(d, separators=(",", ":")))


def _table_html(t: Table) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in t.header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(short(c) if not isinstance(c, str) else c)}</td>" for c in r)
                   + "</tr>" for r in t.rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def render_page(title: str, sections: list[Section], inputs: Table) -> str:
    parts: list[str] = []
    n = 0
    for s in sections:
        parts.append(f"<section><h2>{html.escape(s.title)}</h2>")
        parts += [f'<p class="note">{html.escape(note)}</p>' for note in s.notes]
        parts += [_table_html(t) for t in s.tables]
        if s.figures:
            parts.append('<div class="grid">')
            for fig in s.figures:
                n += 1
                fid = f"fig{n}"
                ftitle = html.escape(str(fig.layout.title.text or fid), quote=True)
                parts.append(f'<div class="plot" id="{fid}"></div>'
                             f'<script type="application/json" class="trnsim-fig" data-div="{fid}" '
                             f'data-title="{ftitle}">{_figure_json(fig)}</script>')
            parts.append("</div>")
        parts.append("</section>")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>", f"<style>{_CSS}</style>",
        f"<script>{_BOOT}</script>", "</head><body>",
        f'<header><h1>{html.escape(title)}</h1><div class="sub">trnsim report, {stamp}, plotly {plotly.__version__} '
        f"embedded (works offline)</div></header>",
        '<main><p id="loading">Drawing plots...</p>',
        f"<section><h2>Inputs</h2>{_table_html(inputs)}</section>",
        *parts, "</main>",
        f'<script type="application/json" id="trnsim-template">{_script_json(_TEMPLATE)}</script>',
        f'<script type="text/plain" id="plotly-gz">{plotly_js_gzip_b64()}</script>',
        '<pre id="trnsim-selfcheck"></pre>',
        f"<script>{_RUN}</script>", "</body></html>",
    ])
