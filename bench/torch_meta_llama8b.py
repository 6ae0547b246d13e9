"""Llama-3-8B built on PyTorch's meta device through trnsim.trace(mode="timing").

No weight exists: the model is `AutoModelForCausalLM.from_config` under `torch.device("meta")`
(16 GB of bf16 weights if materialised, over protobuf's 2 GB), exported with its weights as
shapes (trnsim.torch_weightless) and simulated in timing mode. Prints wall time, peak RSS,
the simulated prefill time and the matmul FLOPs against the closed form 2 x tokens x (matmul
parameters) + attention. Run: PYTHONPATH=python .venv/bin/python bench/torch_meta_llama8b.py [seq]
"""
import json
import resource
import sys
import time

t0 = time.time()
import torch
from transformers import LlamaConfig, AutoModelForCausalLM

import trnsim
from trnsim.models import logits_module

seq = int(sys.argv[1]) if len(sys.argv) > 1 else 128
# Llama-3-8B (meta-llama/Meta-Llama-3-8B config.json)
cfg = LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192,
                  rope_theta=500000.0, torch_dtype="bfloat16")
cfg._attn_implementation = "eager"
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16).eval()


ids = torch.zeros(1, seq, dtype=torch.long)
mask = torch.ones(1, seq, dtype=torch.long)
t1 = time.time()
traced = trnsim.trace(logits_module(model), (ids, mask), chip="trn2", dtype="bf16", mode="timing")
t2 = time.time()
traced(ids, mask)
t3 = time.time()
r = traced.report
h, i, kv, L, V = 4096, 14336, 8 * 128, 32, 128256
per_layer = h * h + 2 * h * kv + h * h + 3 * h * i
matmul_closed = 2 * seq * (L * per_layer + h * V)
matmul = sum(o["tensor_flops"] for o in r["ops"] if o["op"] == "MatMul")
out = {"kind": "run", "time_s": r["time_s"], "seq": seq, "load_s": t1 - t0, "trace_compile_s": t2 - t1,
       "simulate_s": t3 - t2, "wall_s": t3 - t0, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
       "onnx_bytes": len(traced.onnx_bytes), "matmul_flops": matmul, "matmul_flops_closed_form": matmul_closed,
       "matmul_flops_ratio": matmul / matmul_closed, "tensor_flops": r["tensor_flops"], "hbm_bytes": r["hbm_bytes"]}
print(json.dumps(out, indent=1))
