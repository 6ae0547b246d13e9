"""Enlarged copies of the onnx node tests: the single float input of each exported node test
(export_node_tests.py) with its axes scaled up (a leading axis past one 128-row tile, the last
axis widened), output shapes cleared; the copies are plain .onnx files that run.py feeds
seeded random inputs and checks against onnxruntime (which refuses the ones whose attributes
tie them to the original shape: those are skipped).

    .venv/bin/python fuzz/config_diff/enlarge_node_tests.py /tmp/cd/node /tmp/cd/nodebig
"""
import sys
from pathlib import Path

import onnx
from onnx import TensorProto

src, out = Path(sys.argv[1]), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
n = 0
for d in sorted(src.iterdir()):
    m = onnx.load(d / "model.onnx")
    inits = {i.name for i in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    if len(ins) != 1 or ins[0].type.tensor_type.elem_type != TensorProto.FLOAT:
        continue
    dims = ins[0].type.tensor_type.shape.dim
    if len(dims) < 2 or any(not x.HasField("dim_value") for x in dims):
        continue
    shape = [x.dim_value for x in dims]
    numel = 1
    for s in shape:
        numel *= s
    if numel == 0:
        continue
    for variant, f in (("rows", lambda s: [s[0] * max(1, 131 // max(1, s[0]) + 1)] + s[1:]),
                       ("wide", lambda s: s[:-1] + [s[-1] * max(1, 600 // max(1, s[-1]))])):
        new = f(list(shape))
        tot = 1
        for s in new:
            tot *= s
        if new == shape or tot > 600_000:
            continue
        c = onnx.ModelProto()
        c.CopyFrom(m)
        for x, v in zip(c.graph.input[[i.name for i in c.graph.input].index(ins[0].name)].type.tensor_type.shape.dim, new):
            x.dim_value = v
        for o in c.graph.output:
            o.type.tensor_type.ClearField("shape")
        del c.graph.value_info[:]
        (out / f"{d.name}__{variant}.onnx").write_bytes(c.SerializeToString())
        n += 1
print(f"{n} enlarged node tests in {out}")
