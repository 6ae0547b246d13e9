"""Where the GPU baseline's offline step goes, part by part, against public figures (issue 15).

For one offline (trtllm-bench-style) steady-state iteration it prints, per GPU: the simulated
time of each part (GEMMs, attention, tensor-parallel all-reduces, non-GEMM ops with launches and
the per-iteration overhead) beside a hand roofline of the same work at public efficiency figures,
and the efficiency the simulation implies (GEMM FLOPs / (dense peak x GEMM time)).

Then, for every published row (the calibration CSV and the MLPerf check), the end-to-end model
FLOPs utilisation the *published* throughput implies: published output tokens/s x model FLOPs
per output token / (GPUs x dense peak). Model FLOPs per output token = 2 x (non-embedding
parameters) x (in + out) / out + 2 x hidden x vocab (LM head) + causal attention FLOPs per
sequence / out. No implementation reaches 100%; large FP8 GEMMs alone reach ~70-78% (below).

Public figures used (none verified in this session, no network; all recalled):
  GEMM     FP8 dense GEMMs on Hopper at large M: ~1,300-1,550 TFLOP/s, 66-78% of 1,979 (DeepSeek's
           DeepGEMM README, "up to 1550 TFLOPS" on H800, same SM count and clock as H100 SXM;
           NVIDIA cuBLAS 12 / CUTLASS FP8 GEMM benchmarks report the same range). 0.75 used.
  attention FlashAttention-3 (Shah et al., 2024): FP8 forward "close to 1.2 PFLOP/s" (head dim 256,
           long sequences); head dim 128 is lower (~1.0). 1.0 PFLOP/s used for prefill attention.
  memory   decode GEMMs/attention and elementwise kernels at ~80% of HBM bandwidth (typical
           STREAM-like / memcpy figures on H100; an estimate).
  all-reduce NCCL all-reduce bus bandwidth on an 8x H100 NVSwitch node ~450 GB/s for large
           messages (nccl-tests, NVIDIA DGX H100 figures); 400 GB/s used per direction.

    PYTHONPATH=python .venv/bin/python bench/gpu_step_breakdown.py [--model llama-2-70b --system p5.48xlarge
        --tp 2 --input 700 --output 300]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

import trnsim

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
PEAK = {("p5.48xlarge", "fp8"): 1979e12, ("p5en.48xlarge", "fp8"): 1979e12,  # [hw] dense
        ("p6-b200.48xlarge", "fp8"): 4500e12, ("p6-b200.48xlarge", "fp4"): 9000e12}
PUBLIC = {"gemm": 0.75, "attention_flops_s": 1.0e15, "memory": 0.80, "allreduce_bps": 400e9}


def model_shape(name: str) -> dict:
    c = json.loads((REPO / "configs/models" / f"{name}.json").read_text())
    h, heads = c["hidden_size"], c["num_attention_heads"]
    hd = c.get("head_dim") or h // heads
    return {"h": h, "layers": c["num_hidden_layers"], "heads": heads, "kv": c.get("num_key_value_heads", heads),
            "hd": hd, "inter": c["intermediate_size"], "vocab": c["vocab_size"]}


def layer_params(s: dict) -> float:
    return s["h"] * (s["heads"] + 2 * s["kv"]) * s["hd"] + s["heads"] * s["hd"] * s["h"] + 3 * s["h"] * s["inter"]


def flops_per_output_token(s: dict, n_in: int, n_out: int) -> float:
    """Model FLOPs per output token of one sequence's whole life (prefill + decode)."""
    attn_unit = 4 * s["heads"] * s["hd"] * s["layers"]  # FLOPs per (query, key) pair over all layers
    attn = attn_unit * (n_in * n_in / 2 + n_out * (n_in + n_out / 2))
    return 2 * s["layers"] * layer_params(s) * (n_in + n_out) / n_out + 2 * s["h"] * s["vocab"] + attn / n_out


def gpu_yaml(system: str) -> dict:
    sysf = yaml.safe_load((REPO / "configs/gpus" / f"{system}.yaml").read_text())
    return yaml.safe_load((REPO / "configs/gpus" / f"{sysf['gpu']}.yaml").read_text())


def hbm_bps(gpu: dict) -> float:
    value, unit = gpu["hbm"]["bandwidth"].split()
    return float(value) * {"TB/s": 1e12, "GB/s": 1e9}[unit]


def breakdown(model: str, system: str, tp: int, n_in: int, n_out: int) -> dict:
    """Simulated parts of one steady-state iteration beside a hand roofline at public figures."""
    r = trnsim.gpu_offline(model, system, tp=tp, dtype="fp8", input_tokens=n_in, output_tokens=n_out)
    s, gpu, peak = model_shape(model), gpu_yaml(system), PEAK[(system, "fp8")]
    b = r["batch"]
    rows = b * (1 + n_in / n_out)
    gemm_flops = (2 * rows * s["layers"] * layer_params(s) + 2 * b * s["h"] * s["vocab"]) / tp
    new_seqs = b / n_out
    kv_token = 2 * s["kv"] * s["hd"] * s["layers"] / min(tp, s["kv"])  # fp8 KV, bytes per token per GPU
    prefill_flops = new_seqs * 4 * n_in * (n_in / 2) * s["heads"] / tp * s["hd"] * s["layers"]
    decode_bytes = b * (n_in + n_out / 2) * kv_token
    bw = hbm_bps(gpu)
    eff = gpu["efficiency"]
    launches_s = s["layers"] * eff["kernels_per_layer"] * 2e-6 + float(eff["step_overhead"].split()[0]) * 1e-6
    elementwise_bytes = rows * s["h"] * 2 * 8 * s["layers"]
    ar_bytes = 0 if tp == 1 else 2 * s["layers"] * 2 * (tp - 1) / tp * rows * s["h"] * 2
    sim = r["breakdown_s"]
    hand = {"matmul": gemm_flops / (peak * PUBLIC["gemm"]),
            "attention": prefill_flops / PUBLIC["attention_flops_s"] + decode_bytes / (bw * PUBLIC["memory"]),
            "collective": ar_bytes / PUBLIC["allreduce_bps"],
            "other": elementwise_bytes / (bw * PUBLIC["memory"]) + launches_s}
    return {"model": model, "system": system, "tp": tp, "input_tokens": n_in, "output_tokens": n_out, "batch": b,
            "batch_limit": r["batch_limit"], "rows_per_step": rows, "step_time_s": r["step_time_s"], "sim_s": sim,
            "public_s": hand, "public_step_time_s": sum(hand.values()),
            "sim_gemm_efficiency": gemm_flops / (peak * sim["matmul"]),
            "prefill_attention_tflops": prefill_flops / 1e12, "decode_kv_gb": decode_bytes / 1e9,
            "launch_and_overhead_s": launches_s}


def gemm_by_size(model: str = "llama-2-70b", system: str = "p5.48xlarge", tp: int = 2) -> list[dict]:
    """The baseline's GEMM throughput by rows for the model's per-GPU shapes, beside the weight-
    streaming bound (every fp8 weight once through HBM at full bandwidth) and the dense peak."""
    from trnsim import _core
    s, peak = model_shape(model), PEAK[(system, "fp8")]
    bw = hbm_bps(gpu_yaml(system))
    shapes = {"qkv": (s["h"], (s["heads"] + 2 * s["kv"]) * s["hd"] // tp), "o": (s["heads"] * s["hd"] // tp, s["h"]),
              "gate+up": (s["h"], 2 * s["inter"] // tp), "down": (s["inter"] // tp, s["h"])}
    out = []
    for rows in (16, 64, 188, 512, 1667, 4096, 16384):
        for name, (k, n) in shapes.items():
            g = json.loads(_core.gpu.gemm(model, system, tp, "fp8", rows, k, n))
            out.append({"rows": rows, "gemm": name, "k": k, "n": n, "tflops": g["tflops"],
                        "fraction_of_peak": g["tflops"] * 1e12 / peak,
                        "hbm_bound_tflops": 2 * rows * k * n / (k * n / bw) / 1e12})
    return out


def print_gemm_by_size(rows: list[dict]) -> None:
    print("\nGEMM throughput by size (llama-2-70b per-GPU shapes at tp2 on H100, fp8), TFLOP/s (% of dense peak);"
          "\n  'HBM bound' = the weights once through HBM at the full 3.35 TB/s; public large-M figure ~1,300-1,550")
    names = list(dict.fromkeys(r["gemm"] for r in rows))
    print(f"  {'rows':>6} " + " ".join(f"{n:>17}" for n in names) + f" {'HBM bound':>10}")
    for m in dict.fromkeys(r["rows"] for r in rows):
        cells = [r for r in rows if r["rows"] == m]
        print(f"  {m:>6} " + " ".join(f"{c['tflops']:>9.0f} ({c['fraction_of_peak']:>4.0%})" for c in cells) +
              f" {cells[0]['hbm_bound_tflops']:>10.0f}")


def implied_mfu(model: str, system: str, gpus: int, n_in: int, n_out: int, tokens_per_s: float, dtype: str = "fp8") -> float:
    return tokens_per_s * flops_per_output_token(model_shape(model), n_in, n_out) / (gpus * PEAK[(system, dtype)])


def print_breakdown(d: dict) -> None:
    print(f"\n{d['model']} on {d['system']} tp{d['tp']} fp8 {d['input_tokens']}/{d['output_tokens']}: batch {d['batch']} "
          f"({d['batch_limit']}), {d['rows_per_step']:.0f} tokens per iteration")
    print(f"  {'part':<11} {'simulated ms':>13} {'share':>6} {'public-figure ms':>17}")
    for k in ("matmul", "attention", "collective", "other"):
        print(f"  {k:<11} {1e3 * d['sim_s'][k]:>13.2f} {d['sim_s'][k] / d['step_time_s']:>6.1%} {1e3 * d['public_s'][k]:>17.2f}")
    print(f"  {'step':<11} {1e3 * d['step_time_s']:>13.2f} {'':>6} {1e3 * d['public_step_time_s']:>17.2f}")
    print(f"  output tokens/s per GPU: simulated {d['batch'] / d['step_time_s'] / d['tp']:.0f}, at the public figures "
          f"{d['batch'] / d['public_step_time_s'] / d['tp']:.0f}")
    print(f"  simulated GEMM efficiency {d['sim_gemm_efficiency']:.1%} of the dense fp8 peak (public large-M figure "
          f"{PUBLIC['gemm']:.0%}); prefill attention {d['prefill_attention_tflops']:.1f} TFLOP, decode KV "
          f"{d['decode_kv_gb']:.1f} GB; launches + iteration overhead {1e3 * d['launch_and_overhead_s']:.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model")
    ap.add_argument("--system", default="p5.48xlarge")
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--input", type=int, default=700)
    ap.add_argument("--output", type=int, default=300)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    cases = ([(a.model, a.system, a.tp, a.input, a.output)] if a.model else
             [("llama-2-70b", "p5.48xlarge", 2, 700, 300), ("llama-2-70b", "p5en.48xlarge", 1, 700, 300),
              ("llama-3.3-70b", "p5.48xlarge", 2, 1000, 1000), ("llama-3.1-8b", "p5en.48xlarge", 1, 128, 128),
              ("llama-3.3-70b", "p5.48xlarge", 2, 20000, 2000)])
    parts = [breakdown(*c) for c in cases]
    import calibration_gpu as cg
    import gpu_published_check as gp
    mfu = []
    for r in cg.rows():
        model = cg.MODELS[r["row"].split()[0]]
        system = cg.SYSTEMS[" ".join(r["row"].split()[1:3])]
        tp, lens = int(r["row"].split()[3][2:]), r["row"].split()[4]
        n_in, n_out = map(int, lens.split("/"))
        mfu.append({"row": r["row"], "published": r["published"], "published_mfu": implied_mfu(model, system, tp, n_in, n_out, r["published"]),
                    "simulated_mfu": implied_mfu(model, system, tp, n_in, n_out, r["simulated"])})
    for r in gp.rows():
        if r["kind"] != "throughput":
            continue
        mfu.append({"row": r["row"], "published": r["published"],
                    "published_mfu": implied_mfu(r["model"], r["system"], r["gpus"], r["input_tokens"], r["output_tokens"], r["published"], r["dtype"]),
                    "simulated_mfu": implied_mfu(r["model"], r["system"], r["gpus"], r["input_tokens"], r["output_tokens"], r["simulated"], r["dtype"])})
    sizes = gemm_by_size()
    if a.json:
        print(json.dumps({"breakdown": parts, "gemm_by_size": sizes, "implied_mfu": mfu}, indent=2))
        return
    for d in parts:
        print_breakdown(d)
    print_gemm_by_size(sizes)
    print("\nEnd-to-end model-FLOPs utilisation (of the dense peak of the row's dtype) implied by each published figure (and by the simulation)")
    print(f"  {'row':<52} {'published':>10} {'MFU pub':>8} {'MFU sim':>8}")
    for m in mfu:
        print(f"  {m['row']:<52} {m['published']:>10.0f} {m['published_mfu']:>8.1%} {m['simulated_mfu']:>8.1%}")


if __name__ == "__main__":
    main()
