"""Element-wise fusion on a written-out RMSNorm and a SwiGLU gate ([1024, 4096] fp32), timing-only
with the Python API's core split (all NeuronCores of the chip): the nodes left after the
compiler's passes, their members and times. --save PATH writes the ONNX file, for
`trnsim run PATH --chip trn2 --timing-only --cores 1` (the one-core figures of
docs/compiler.md "Element-wise fusion": ten kernels, 2171 us, before the pass).

    PYTHONPATH=python .venv/bin/python bench/elementwise_fusion.py [--chip trn2] [--json] [--save PATH]
"""
from __future__ import annotations

import argparse
import json

import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper as nh

import trnsim

SHAPE = [1024, 4096]


def model() -> bytes:
    nodes = [h.make_node("Pow", ["x", "two"], ["p"]), h.make_node("ReduceMean", ["p"], ["m"], axes=[-1], keepdims=1),
             h.make_node("Add", ["m", "eps"], ["me"]), h.make_node("Sqrt", ["me"], ["s"]),
             h.make_node("Div", ["one", "s"], ["inv"]), h.make_node("Mul", ["x", "inv"], ["xn"]),
             h.make_node("Mul", ["xn", "w"], ["y"]),
             h.make_node("Sigmoid", ["a"], ["sg"]), h.make_node("Mul", ["a", "sg"], ["si"]), h.make_node("Mul", ["si", "b"], ["g"])]
    inits = [nh.from_array(np.array(v, np.float32), k) for k, v in (("two", 2), ("eps", 1e-6), ("one", 1))]
    inits.append(nh.from_array(np.ones(SHAPE[1], np.float32), "w"))
    g = h.make_graph(nodes, "rms_swiglu", [h.make_tensor_value_info(k, T.FLOAT, SHAPE) for k in "xab"],
                     [h.make_tensor_value_info(k, T.FLOAT, SHAPE) for k in ("y", "g")], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9).SerializeToString()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chip", default="trn2")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--save", help="also write the ONNX model to this path")
    a = ap.parse_args()
    if a.save:
        with open(a.save, "wb") as f:
            f.write(model())
    cm = trnsim.compile_onnx(model(), chip=a.chip, mode="timing")  # one NeuronCore (CompileOptions default)
    cm.run({})
    r = cm.report
    ops = [{"node": o["name"], "op": o["op"], "fused": o["fused"], "time_s": o["time_s"]} for o in r["ops"]]
    out = {"kind": "run", "time_s": r["time_s"], "nodes": len(ops), "onnx_nodes": 10, "ops": ops}
    if a.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{a.chip}: 10 ONNX nodes -> {len(ops)} kernels, {r['time_s'] * 1e6:.1f} us")
    for o in ops:
        print(f"  {o['op']:<12} {o['time_s'] * 1e6:8.1f} us  {o['node']} {'+ ' + ', '.join(o['fused']) if o['fused'] else ''}")


if __name__ == "__main__":
    main()
