"""Synthetic results of every kind, in the field layout the llm/serve/train/power issues name,
for the report tests, the browser test and the report-size benchmark. Their numbers are random
draws with plausible magnitudes, NOT simulator output; real results replace them as those
commands land (the tests also run real kernel/run/collective results)."""
from __future__ import annotations

import numpy as np


def llm(batch: int = 8, input_len: int = 512, tp: int = 8, model: str = "llama-3.1-8b") -> dict:
    """In the layout of `trnsim llm --json`."""
    ttft = 0.02 * batch * input_len / 512 + 0.01
    tpot = 0.006 + 0.0004 * batch + 1e-6 * input_len
    return {"kind": "llm", "model": model, "system": "trn2.48xlarge", "tp": tp, "batch": batch,
            "input_tokens": input_len, "output_tokens": 128, "ttft_s": ttft, "tpot_s": tpot, "e2e_s": ttft + 127 * tpot,
            "time_s": ttft + 127 * tpot, "output_tokens_per_s": batch / tpot,
            "decode_step_breakdown": {"matmul_s": 0.6 * tpot, "attention_s": 0.2 * tpot, "collective_s": 0.15 * tpot,
                                      "other_s": 0.05 * tpot},
            "prefill_breakdown": {"matmul_s": 0.7 * ttft, "attention_s": 0.1 * ttft, "collective_s": 0.15 * ttft,
                                  "other_s": 0.05 * ttft},
            "decode_step_nodes": [{"category": "matmul", "node": "layer qkv_proj", "repeat": 32, "time_s": 0.3 * tpot / 32},
                                  {"category": "attention", "node": "layer attention", "repeat": 32,
                                   "time_s": 0.2 * tpot / 32}],
            "memory_bytes_per_core": 16e9 / tp + 2e8 * batch + 5e8, "weight_bytes_per_core": 16e9 / tp,
            "kv_cache_bytes_per_core": 2e8 * batch, "activation_bytes_per_core": 5e8}


def serve(requests: int = 2000, rate_per_s: float = 20.0, seed: int = 0, fail_at_s: float | None = None) -> dict:
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(1 / rate_per_s, requests))
    queue = rng.exponential(0.02, requests)
    ttft = queue + rng.lognormal(np.log(0.08), 0.4, requests)
    tpot = rng.lognormal(np.log(0.012), 0.2, requests)
    out_tokens = rng.integers(16, 512, requests)
    e2e = ttft + tpot * (out_tokens - 1)
    if fail_at_s is not None:  # requests in the incident window wait for the replica's cold start
        hit = (arrival > fail_at_s) & (arrival < fail_at_s + 30)
        ttft[hit] += 30 - (arrival[hit] - fail_at_s)
        e2e[hit] += 30 - (arrival[hit] - fail_at_s)
    duration = float(arrival[-1] + e2e[-1])
    secs = np.arange(int(np.ceil(duration)))
    done_at = arrival + e2e
    per_s = np.bincount(np.minimum(done_at.astype(int), len(secs) - 1), minlength=len(secs))
    tok_per_s = np.bincount(np.minimum(done_at.astype(int), len(secs) - 1), weights=out_tokens, minlength=len(secs))
    sec_of = np.minimum(arrival.astype(int), len(secs) - 1)
    ttft_mean = np.bincount(sec_of, weights=ttft, minlength=len(secs)) / np.maximum(np.bincount(sec_of, minlength=len(secs)), 1)

    def pct(v):
        return {"mean": float(v.mean()), "p50": float(np.percentile(v, 50)), "p90": float(np.percentile(v, 90)),
                "p95": float(np.percentile(v, 95)), "p99": float(np.percentile(v, 99)), "max": float(v.max())}

    slo = (ttft < 0.5) & (tpot < 0.05)
    r = {"kind": "serve", "model": "llama-3.1-8b", "system": "trn2.48xlarge", "tp": 8, "replicas": 2,
         "time_s": duration, "requests_completed": requests, "ttft_s": pct(ttft), "tpot_s": pct(tpot),
         "itl_s": pct(tpot), "e2e_s": pct(e2e), "queue_s": pct(queue),
         "request_throughput_per_s": requests / duration, "output_tokens_per_s": float(out_tokens.sum() / duration),
         "goodput_requests_per_s": float(slo.sum() / duration), "goodput_fraction": float(slo.mean()),
         "requests": [{"arrival_s": float(a), "ttft_s": float(t), "tpot_s": float(p), "e2e_s": float(e),
                       "queue_s": float(q)} for a, t, p, e, q in zip(arrival, ttft, tpot, e2e, queue)],
         "timeseries": [{"t_s": float(s), "requests_per_s": float(n), "output_tokens_per_s": float(k),
                         "ttft_mean_s": float(m), "kv_utilisation": float(min(1.0, 0.3 + 0.5 * np.sin(s / 200) ** 2)),
                         "running": float(8 + 4 * np.sin(s / 50))}
                        for s, n, k, m in zip(secs, per_s, tok_per_s, ttft_mean)]}
    if fail_at_s is not None:
        r["incidents"] = [{"kind": "replica 1 lost", "start_s": fail_at_s, "end_s": fail_at_s + 30}]
    return r


def train(tp: int = 8, pp: int = 4, dp: int = 8) -> dict:
    step = 10.0 * 8 / tp * 4 / pp
    return {"kind": "train", "model": "llama-3.1-70b", "system": "trn2.48xlarge", "nodes": tp * pp * dp // 64,
            "tp": tp, "pp": pp, "dp": dp, "time_s": step, "step_time_s": step, "tokens_per_s": 4e6 / step,
            "mfu": 0.38 + 0.01 * tp / 8,
            "breakdown": {"compute_s": 0.7 * step, "exposed_communication_s": 0.1 * step,
                          "bubble_s": (pp - 1) / (8 + pp - 1) * step * 0.5, "optimizer_s": 0.05 * step},
            "memory_bytes_per_core": {"weights_bytes": 140e9 / tp / pp / 2, "gradients_bytes": 140e9 / tp / pp / 2,
                                      "optimizer_bytes": 840e9 / tp / pp / dp / 2, "activations_bytes": 6e9},
            "goodput": 0.93}


def compare() -> dict:
    rows = []
    for name, usd, j, tps in (("trn2.48xlarge", 0.52, 0.31, 21000.0), ("p5.48xlarge", 0.81, 0.45, 26000.0)):
        rows.append({"system": name, "ttft_p99_s": 0.21 if name[0] == "t" else 0.17, "tpot_p99_s": 0.018,
                     "output_tokens_per_s": tps, "chips_needed": 32 if name[0] == "t" else 16,
                     "usd_per_million_tokens_on_demand": usd, "usd_per_million_tokens_reserved": usd * 0.6,
                     "j_per_token": j, "tokens_per_mw": 3.2e6 / j, "cost_ratio": usd / 0.52})
    return {"kind": "compare", "model": "llama-3.1-8b", "time_s": 120.0, "systems": rows,
            "assumptions": {"price": "on-demand, us-east-1", "pue": 1.15, "kwh_usd": 0.08}}


def tco(system: str = "trn2.48xlarge", scale: float = 1.0) -> dict:
    """In the layout of `trnsim tco --json` (power branch): cloud, owned, energy, assumptions."""
    return {"kind": "tco", "system": system, "time_s": 3600.0, "unit": "tokens",
            "assumptions": {"pue": 1.15, "kwh_usd": 0.08, "utilisation": 0.7, "amortisation_years": 4.0},
            "cloud": {"price": "on-demand", "usd_per_instance_hour": 30.0 * scale, "usd_per_million_tokens": 0.93 * scale},
            "owned": {"amortisation_usd_per_hour": 4.88 * scale, "energy_usd_per_hour": 0.81 * scale,
                      "maintenance_usd_per_hour": 0.98 * scale, "usd_per_instance_hour": 6.67 * scale,
                      "usd_per_million_tokens": 0.74 * scale},
            "energy": {"chip_power_w": 8000.0 * scale, "server_power_w": 10500.0 * scale,
                       "facility_power_w": 12075.0 * scale, "j_per_token": 3.39 * scale,
                       "tokens_per_s_per_mw_chip": 4.4e5 / scale, "tokens_per_s_per_mw_facility": 2.9e5 / scale}}
