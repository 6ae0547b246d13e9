"""Seed corpora for `make fuzz` (docs/hardening.md), written to OUT/<target>/:
onnx: every ONNX backend node-test model shipped with the onnx wheel (the same cases as
      tests/python/onnx_node_suite.py); tpg: a few of them compiled to saved programs with
      the trnsim CLI; yaml: the chip and system presets; npz: small np.savez and
      np.savez_compressed archives of every dtype the reader takes; serve: heads of the Azure
      traces and trnsim.serve option sets as JSON; sweep: sweep files (YAML).
Round 3 adds (seeds and a mutator the earlier campaigns did not use): onnx: every axis-taking
op on a rank-0 input and on a huge dim, and OUT/onnx.dict, a libFuzzer dictionary of the ONNX
op and attribute names (plain and as their protobuf fields), for `-dict=`.
Round 5 adds OUT/onnx_models/: whole-model graphs (the nine light_* CNNs of the onnx wheel and
a transformer-style MLP block), many kernels each, so the onnx_run target's linker meets
cross-kernel dependencies (the node tests are mostly one node, one kernel).
Round 6 adds OUT/onnx_passes/: small models the passes since round 5 rewrite (sbuf-residency:
MatMul chains with residuals and LayerNorm, batched with M not a multiple of 128, a Reshape
alias; batchnorm-folding: Conv + BatchNormalization (+ Add + Relu), grouped, without a conv
bias, with a shared conv output that must not fold; the patchify Conv of a ViT stem), and
OUT/onnx_huge/: ops planned before the HBM plan with one dim of 2^62 or INT64_MAX.
Usage: python fuzz/make_seeds.py OUT"""
import hashlib
import io
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TPG_CASES = ("test_relu", "test_add", "test_matmul_2d", "test_softmax_axis_1", "test_layer_normalization_2d_axis0",
             "test_gather_0", "test_transpose_default", "test_sigmoid")
# Round 3: more op kinds (conv, pooling, reductions, movement, top-k, scan), compiled with
# other options too (bf16, fp8, one core, LNC 1), so the loader sees other instruction mixes.
TPG_MORE = ("test_conv_with_strides_padding", "test_maxpool_2d_default", "test_averagepool_2d_pads",
            "test_gemm_default_no_bias", "test_reduce_sum_default_axes_keepdims_example", "test_concat_2d_axis_0",
            "test_cumsum_1d", "test_top_k", "test_argmax_default_axis_example", "test_where_example",
            "test_slice", "test_tile", "test_expand_dim_changed", "test_batchnorm_example", "test_gelu_default_1",
            "test_resize_upsample_scales_nearest", "test_scatter_elements_with_axis", "test_onehot_with_axis",
            "test_einsum_batch_matmul", "test_instancenorm_example")
TPG_OPTIONS = ((), ("--dtype", "bf16"), ("--dtype", "fp8", "--cores", "1"), ("--lnc", "1", "--cores", "2"))


def write(out: Path, data: bytes) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)


def onnx_seeds(out: Path) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            from onnx.backend.test.case import node
            cases = {c.name: c for c in node.collect_testcases(None)}
    for c in cases.values():
        write(out / "onnx", c.model.SerializeToString())
    return cases


AXIS_OPS = ("Softmax", "LogSoftmax", "Hardmax", "ArgMax", "ArgMin", "Concat", "Split", "Gather", "GatherElements",
            "Flatten", "LayerNormalization", "TopK", "CumSum", "OneHot", "ScatterElements", "Squeeze", "Unsqueeze",
            "ReduceSum", "ReduceMax", "ReduceMean", "Slice", "Pad", "Resize", "Transpose", "Compress", "GatherND",
            "DepthToSpace", "Trilu", "Tile", "Expand", "Reshape")


def shape_seeds(out: Path) -> None:
    """Each axis-taking op on a rank-0 input, and on a [1, 2^40] input, with axis 0 and -1 and
    its other inputs int64 constants: the shapes where the issue's crashes were."""
    from onnx import TensorProto, helper
    for op in AXIS_OPS:
        for shape in ([], [1, 1 << 40], [2, 3]):
            for axis in (0, -1):
                extra = [helper.make_tensor(f"c{i}", TensorProto.INT64, [1], [axis if i == 0 else 1]) for i in range(3)]
                node = helper.make_node(op, ["x"] + [t.name for t in extra[:1 if op in ("Softmax", "Flatten") else 3]],
                                        ["y"], axis=axis)
                g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=extra)
                write(out / "onnx", helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())


def model_seeds(out: Path) -> None:
    """Whole-model graphs: the onnx wheel's light_* models and a LayerNorm-MatMul-Gelu-MatMul-
    residual-Softmax block with a symbolic batch."""
    import onnx
    from onnx import TensorProto, helper
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    for f in sorted(light.glob("light_*.onnx")):
        write(out / "onnx_models", f.read_bytes())
    rng = np.random.default_rng(5)
    w = lambda n, *shape: helper.make_tensor(n, TensorProto.FLOAT, shape, rng.standard_normal(shape).ravel() * 0.1)  # noqa: E731
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1),
             helper.make_node("MatMul", ["n", "w1"], ["h"]), helper.make_node("Gelu", ["h"], ["a"]),
             helper.make_node("MatMul", ["a", "w2"], ["o"]), helper.make_node("Add", ["o", "x"], ["r"]),
             helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
    g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 128, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[w("g", 256), w("b", 256), w("w1", 256, 1024), w("w2", 1024, 256)])
    write(out / "onnx_models", helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]).SerializeToString())


def pass_seeds(out: Path) -> None:
    """Models for the passes since round 5: sbuf-residency, batchnorm-folding, patchify Conv."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(6)
    w = lambda n, *shape: helper.make_tensor(n, TensorProto.FLOAT, shape, rng.standard_normal(shape).ravel() * 0.1)  # noqa: E731
    pos = lambda n, *shape: helper.make_tensor(n, TensorProto.FLOAT, shape, rng.uniform(0.5, 1.5, shape).ravel())  # noqa: E731
    node = helper.make_node

    def save(nodes, inputs, inits, opset=17):
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
        write(out / "onnx_passes", helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString())

    for shape in ([256, 128], [2, 200, 128], ["B", 130, 128]):  # an encoder's post-attention block
        d = 128
        save([node("MatMul", ["x", "wo"], ["o"]), node("Add", ["o", "x"], ["r"]),
              node("LayerNormalization", ["r", "g", "b"], ["n"], axis=-1), node("MatMul", ["n", "w1"], ["h"]),
              node("Relu", ["h"], ["a"]), node("MatMul", ["a", "w2"], ["f"]), node("Add", ["f", "n"], ["y"])],
             [("x", shape)], [w("wo", d, d), pos("g", d), w("b", d), w("w1", d, 256), w("w2", 256, d)])
    save([node("MatMul", ["x", "w1"], ["h"]), node("Reshape", ["h", "s"], ["hr"]), node("MatMul", ["hr", "w2"], ["y"])],
         [("x", [1, 256, 64])], [w("w1", 64, 64), helper.make_tensor("s", TensorProto.INT64, [3], [1, 256, 64]),
                                 w("w2", 64, 32)])
    c = 8
    bn = [pos("s", c), w("bb", c), w("m", c), pos("v", c)]
    save([node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1]), node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"]),
          node("Add", ["n", "x"], ["a"]), node("Relu", ["a"], ["y"])], [("x", [1, c, 16, 16])], [w("w", c, c, 3, 3), w("cb", c)] + bn)
    save([node("Conv", ["x", "w"], ["c"], group=2), node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["y"], epsilon=0.0)],
         [("x", [2, c, 9, 7])], [w("w", c, c // 2, 1, 1)] + bn)
    save([node("Conv", ["x", "w"], ["c"]), node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"]),
          node("Add", ["n", "c"], ["y"])], [("x", [1, c, 5, 5])], [w("w", c, c, 1, 1)] + bn)
    save([node("Conv", ["x", "w1", "b1"], ["c"], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["r"]),
          node("Conv", ["r", "w2", "b2"], ["y"], pads=[1, 1, 1, 1])], [("x", [1, 4, 12, 12])],
         [w("w1", c, 4, 3, 3), w("b1", c), w("w2", 4, c, 3, 3), w("b2", 4)])
    save([node("Conv", ["x", "w", "b"], ["p"], strides=[16, 16], kernel_shape=[16, 16]),
          node("Reshape", ["p", "s"], ["f"]), node("Transpose", ["f"], ["t"], perm=[0, 2, 1]), node("MatMul", ["t", "w2"], ["y"])],
         [("x", [1, 3, 64, 64])], [w("w", 32, 3, 16, 16), w("b", 32), helper.make_tensor("s", TensorProto.INT64, [3], [1, 32, 16]),
                                   w("w2", 32, 32)])


def huge_dim_seeds(out: Path) -> None:
    """Round 6: ops whose estimates and band planning run before the HBM plan (MatMul chains,
    Conv, depthwise Conv, pooling, Gather, element-wise, reductions), each with one declared
    dim of 2^62 or INT64_MAX at every position, to OUT/onnx_huge/ (the grid that found the
    round's core-split, conv-planning and SBUF-residency overflows)."""
    from onnx import TensorProto as T, helper as h
    def save(nodes, inputs, inits=(), types=None):
        vi = [h.make_tensor_value_info(n, (types or {}).get(n, T.FLOAT), s) for n, s in inputs]
        g = h.make_graph(nodes, "g", vi, [h.make_tensor_value_info("y", T.FLOAT, None)], initializer=list(inits))
        write(out / "onnx_huge", h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString())
    node = h.make_node
    for big in ((1 << 63) - 1, 1 << 62):
        for rank in (2, 3, 4):
            for pos in range(rank):
                x = [1] * rank
                x[pos] = big
                save([node("MatMul", ["x", "w"], ["c"]), node("MatMul", ["c", "v"], ["y"])], [("x", x), ("w", [1, 1]), ("v", [1, 1])])
                save([node("Relu", ["x"], ["y"])], [("x", x)])
                save([node("ReduceMax", ["x"], ["y"])], [("x", x)])
                save([node("Gather", ["d", "i"], ["y"])], [("d", [4, 4]), ("i", x)], types={"i": T.INT64})
                if rank == 4:
                    save([node("MaxPool", ["x"], ["y"], kernel_shape=[1, 1])], [("x", x)])
                    save([node("Conv", ["x", "w"], ["y"])], [("x", x), ("w", [1, 1, 1, 1])])
                    save([node("Conv", ["x", "w"], ["y"], group=x[1])], [("x", x), ("w", [x[1], 1, 1, 1])])


def varint(n: int) -> bytes:
    b = bytearray()
    while True:
        b.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(b)


def onnx_dict(out: Path) -> None:
    """libFuzzer dictionary: op names (NodeProto.op_type, field 4) and attribute names
    (AttributeProto.name, field 1), each plain and with its protobuf tag and length, plus
    int64 attribute values (AttributeProto.i, field 3) at the edges of the ranges."""
    import onnx.defs
    ops, attrs = set(), set()
    for s in onnx.defs.get_all_schemas():
        if s.domain == "":
            ops.add(s.name)
            attrs.update(s.attributes)
    entries = []
    for name in sorted(ops):
        entries += [name.encode(), b"\x22" + bytes([len(name)]) + name.encode()]
    for name in sorted(attrs):
        entries += [name.encode(), b"\x0a" + bytes([len(name)]) + name.encode()]
    for v in (0, 1, 2, 3, 127, 128, 4096, 65536, (1 << 31) - 1, 1 << 31, 1 << 32, 1 << 40, (1 << 62), (1 << 63) - 1):
        entries.append(b"\x18" + varint(v))
    for v in (-1, -2, -(1 << 31), -(1 << 63)):  # negative int64 as protobuf writes them
        entries.append(b"\x18" + varint(v & ((1 << 64) - 1)))
    def esc(b: bytes) -> str:
        return "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\x{c:02x}" for c in b)
    out.mkdir(parents=True, exist_ok=True)
    (out / "onnx.dict").write_text("".join(f'"{esc(e)}"\n' for e in entries))


def tpg_seeds(out: Path, cases: dict) -> None:
    jobs = [(name, ()) for name in TPG_CASES] + [(name, TPG_OPTIONS[i % len(TPG_OPTIONS)]) for i, name in enumerate(TPG_MORE)]
    with tempfile.TemporaryDirectory() as tmp:
        for name, options in jobs:
            if name not in cases:
                continue
            model, tpg = Path(tmp) / f"{name}.onnx", Path(tmp) / f"{name}.tpg"
            model.write_bytes(cases[name].model.SerializeToString())
            compile_tpg(out, model, tpg, options, name)
    # Round 6: the pass seeds as programs (resident SBUF activations, folded BatchNormalization).
    with tempfile.TemporaryDirectory() as tmp:
        for i, model in enumerate(sorted((out / "onnx_passes").glob("*"))):
            compile_tpg(out, model, Path(tmp) / f"{model.name}.tpg", TPG_OPTIONS[i % 2], model.name)


def compile_tpg(out: Path, model: Path, tpg: Path, options, name: str) -> None:
    trnsim = ROOT / "build" / "src" / "trnsim"
    r = subprocess.run([str(trnsim), "compile", str(model), "-o", str(tpg), *options], capture_output=True, text=True)
    if r.returncode == 0:
        write(out / "tpg", tpg.read_bytes())
    else:
        print(f"make_seeds: {name} does not compile: {r.stderr.strip()}", file=sys.stderr)


def yaml_seeds(out: Path) -> None:
    for f in sorted((ROOT / "configs").glob("*/*.yaml")):
        write(out / "yaml", f.read_bytes())


def npz_seeds(out: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {"x": rng.standard_normal((2, 3)).astype(np.float32), "ids": np.arange(4, dtype=np.int64),
              "h": np.ones(3, np.float16), "d": np.zeros((1, 2), np.float64), "b": np.array([True, False]),
              "i8": np.arange(-2, 2, dtype=np.int8), "u8": np.arange(3, dtype=np.uint8), "s": np.float32(1.5)}
    for save in (np.savez, np.savez_compressed):
        for subset in (arrays, {"x": arrays["x"]}, {}):
            buf = io.BytesIO()
            save(buf, **subset)
            write(out / "npz", buf.getvalue())


def serve_seeds(out: Path) -> None:
    """Heads of the Azure traces (both timestamp forms) and option sets of trnsim.serve."""
    import json
    for f in sorted((ROOT / "data" / "azure-llm-inference-2023").glob("*.csv")):
        lines = f.read_text().splitlines()[:40]
        write(out / "serve", ("\n".join(lines) + "\n").encode())
    write(out / "serve", b"ContextTokens,TIMESTAMP,GeneratedTokens,extra\n100,0.0,10,x\n200,0.5,20,y\n")
    for opts in ({"model": "llama-3.1-8b", "system": "trn2.48xlarge", "tp": 8, "rate": 1, "requests": 10},
                 {"model": "llama-3.1-70b", "system": "trn2.48xlarge", "tp": 32, "replicas": 2, "autoscale": "1:4",
                  "trace": "data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv", "slo": "mlperf-interactive"},
                 {"model": "llama-3.1-8b", "system": "trn2.48xlarge", "offline": True, "max_seqs": 64, "input": 700,
                  "output": 16, "prefix_groups": 2, "prefix_tokens": 128, "dtype": "fp8", "weights": "int8"}):
        write(out / "serve", json.dumps(opts).encode())


def sweep_seeds(out: Path) -> None:
    """The sweep files of the examples and tests, and a random-search one."""
    for f in sorted(ROOT.glob("docs/examples/*sweep*.yaml")):
        write(out / "sweep", f.read_bytes())
    write(out / "sweep", b"command: collective\nsystem: trn2.48xlarge\naxes:\n  op: [all-reduce, all-gather]\n"
                         b"  sizes: [1M, 64M]\n")
    write(out / "sweep", b"command: llm\nsamples: 4\nseed: 1\nargs: [llama-3.1-8b]\naxes:\n"
                         b"  batch: {min: 1, max: 64, log: true}\n  tp: [4, 8]\nenv: {X: '{point_id}'}\n")


def main() -> None:
    out = Path(sys.argv[1])
    cases = onnx_seeds(out)
    shape_seeds(out)
    model_seeds(out)
    pass_seeds(out)
    huge_dim_seeds(out)
    onnx_dict(out)
    tpg_seeds(out, cases)
    yaml_seeds(out)
    npz_seeds(out)
    serve_seeds(out)
    sweep_seeds(out)
    for t in ("onnx", "onnx_models", "onnx_passes", "onnx_huge", "tpg", "yaml", "npz", "serve", "sweep"):
        print(f"make_seeds: {len(list((out / t).glob('*')))} {t} seeds in {out / t}")


if __name__ == "__main__":
    main()
