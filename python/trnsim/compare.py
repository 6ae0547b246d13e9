"""The same serving workload on several systems: the numbers of ``trnsim compare``.

``compare(model, ["trn2.48xlarge", "p5.48xlarge"], tp={"trn2.48xlarge": 4}, rate=20,
requests=2000)`` runs the serving workload (every ``trnsim serve`` keyword, same seed) on each
system with the fleet sized to the SLO (the fewest replicas whose run reaches ``attainment``),
and returns the dict of ``trnsim compare --json``: ``kind`` "compare", ``time_s`` (all runs'
simulated time), ``systems`` (one dict per system: latency percentiles, replicas, chips,
``usd_per_million_output_tokens_on_demand`` / ``_reserved``, ``j_per_output_token_facility``,
``output_tokens_per_s_per_mw_facility``, ``price`` with sources, ``ratio_to_first``) and
``assumptions``. Bad input raises ``trnsim.TrnsimError`` subclasses (one line).
"""
from __future__ import annotations

import json

from trnsim import _core
from trnsim.api_args import checked, json_request

__all__ = ["compare"]


@checked
def compare(model: str, systems, tp: int | dict = 1, *, price: str = "on-demand", price_estimate: dict | None = None,
            pue: float = 1.15, kwh_usd: float = 0.08, attainment: float = 0.99, max_replicas: int = 256,
            **serve_options) -> dict:
    """Compare serving ``model`` on ``systems`` (a list or "a,b"); ``tp`` an int or {system: tp}."""
    if isinstance(systems, str):
        systems = [s for s in systems.split(",") if s]
    if not isinstance(systems, (list, tuple)) or not all(isinstance(s, str) for s in systems):
        raise _core.ConfigError(f"trnsim.compare: systems = {systems!r:.60} ({type(systems).__name__}), "
                                "expected a list of system names or 'a,b'")
    serve = {"model": model}
    for key, value in serve_options.items():
        if value is None or value is False:
            continue
        serve[key] = value
    spec = {"systems": list(systems), "tp": tp, "price": price, "price_estimates": dict(price_estimate or {}),
            "pue": pue, "kwh_usd": kwh_usd, "attainment": attainment, "max_replicas": max_replicas, "serve": serve}
    return json.loads(_core.compare.compare(json_request("trnsim.compare", spec)))
