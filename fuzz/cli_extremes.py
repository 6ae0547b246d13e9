"""Every command's flags at extreme values (issue 17, docs/hardening.md round 8).

For each subcommand, every option read from its `--help` is tried alone on an otherwise valid
command line with adversarial values (0, -1, 2^31, 2^63, 1e308, nan, inf, 1e-300, "", a 100 kB
string, non-UTF-8 bytes; for files /dev/zero, a directory, a missing file; for outputs /dev/full
and a directory), plus rank-0 and huge shapes where a command takes sizes. Each case runs under
a 60 s timeout and TRNSIM_MAX_MEMORY=2G; exit status, wall time, peak RSS and stderr are kept.

A finding: an exit status other than 0 or 2; exit 2 whose stderr is not one line starting
`trnsim: error: `; a traceback; a timeout; a peak RSS far above the limit; exit 0 with NaN, inf
or a negative time/energy/cost in the JSON result. Exit 0 with a value that has no meaning
(negative, non-finite, empty, past int64) is listed as "accepted" for review.

    nice -n 10 .venv/bin/python fuzz/cli_extremes.py [--jobs 2] [--only CMD,...] [--out DIR]
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXE = str(ROOT / "build" / "src" / "trnsim")
TIMEOUT = 60
LIMIT_KB = 2 * 1024 * 1024  # TRNSIM_MAX_MEMORY=2G

LONG = "7" * 100_000
NON_UTF8 = b"\xff\xfe\x80"
NUMBERS = ["0", "-1", "1", "2147483648", "9223372036854775808", "1e308", "-1e308", "nan", "inf", "-inf",
           "1e-300"]
STRINGS = ["", LONG, NON_UTF8]
# Values with no meaning for a size, count, rate or fraction: accepted with exit 0, they are listed.
MEANINGLESS = {"-1", "9223372036854775808", "1e308", "-1e308", "nan", "inf", "-inf", "", LONG}

BOOL_FLAGS = {"--help", "-h", "--json", "--causal", "--timing-only", "--functional", "--list", "--in-program",
              "--check", "--dump-ir", "--sequence-parallel", "--no-chunked-prefill", "--prefix-caching",
              "--offline", "--compile", "--cold", "--per-channel", "--per-tensor"}
# Options whose value is a file read (preset names allowed) or written.
IN_FILES = {"--chip", "--system", "--model", "--inputs", "--calibrate", "--result", "--serve", "--train"}
OUT_FILES = {"--output", "-o", "--timeline", "--power-trace"}
# serve/compare print no types: their numeric options by name.
UNTYPED_NUMERIC = {"--tp", "--pp", "--ep", "--lnc", "--clock-scale", "--power-cap", "--pue", "--replicas",
                   "--prefill-replicas", "--max-seqs", "--max-batched-tokens", "--block-tokens",
                   "--hbm-utilization", "--kv-blocks", "--swap-gb", "--swap-gbps", "--prefix-groups",
                   "--prefix-tokens", "--rate", "--burstiness", "--on-s", "--off-s", "--ramp-to", "--ramp-s",
                   "--concurrency", "--trace-speedup", "--requests", "--duration", "--seed", "--mtbf-hours",
                   "--link-mtbf-hours", "--link-repair-s", "--repair-s", "--autoscale-interval-s",
                   "--scale-up-queue", "--scale-down-utilization", "--load-gbps", "--program-load-s",
                   "--compile-s", "--warmup-iterations", "--kv-transfer-gbps", "--kv-transfer-latency-us",
                   "--timeline-bin-s", "--max-replicas", "--attainment", "--kwh-usd", "--local"}
# Options with their own syntax: adversarial values of that syntax besides the generic ones.
SPECIAL = {
    "--sizes": ["0", "0:1G", "1K:0", "1G:1K", "-1", "1:16E", "1e308", "nan", "1K:1G:0", ",", "1K,,2K",
                "1:9223372036854775807", "99999999999999999999"],
    "--dim": ["seq=0", "seq=-1", "seq=9223372036854775807", "seq=nan", "=4", "seq=", "seq", "seq=1e308",
              "seq=2147483648"],
    "--fail": ["replica@nan", "replica@-1", "replica@inf", "replica:999999@1", "chip:-1@1", "link@1+nan",
               "link@1+-5", "degrade=nan@1", "degrade=0@1", "degrade=-1@1", "degrade=2@1", "replica@1e308",
               "chip@"],
    "--input": ["0", "0:0", "5:1", "1:9223372036854775807", "-1:4", "fit:/dev/zero", "fit:/nonexistent.csv",
                "nan", "1e308"],
    "--output": ["0", "0:0", "5:1", "1:9223372036854775807", "-1:4", "fit:/dev/zero", "nan"],
    "--buckets": ["0", "-1", "9223372036854775807", "nan", "1e308"],
    "--slo": ["ttft=0s,tpot=0ms", "ttft=-1s", "ttft=nan", "ttft=infs", "ttft=1e308s", "tpot=-1ms", "ttft=",
              "mlperf-nothing"],
    "--autoscale": ["0:0", "5:1", "-1:4", "1:9223372036854775807", "nan:1", "1:2147483648"],
    "--tp": ["trn2.48xlarge=0", "trn2.48xlarge=-1", "trn2.48xlarge=9223372036854775808", "nosuch=4", "=",
             "trn2.48xlarge=nan"],
    "--price": ["-1", "nan", "inf", "0", "1e308"],
    "--price-estimate": ["trn2.48xlarge=-1", "trn2.48xlarge=nan", "trn2.48xlarge=inf", "x=", "=1"],
    "--fail-at": ["-1", "0", "9223372036854775807", "nan"],
    "--query": ["SELECT count(*) FROM results", "SELECT * FROM nosuch", "DROP VIEW results", "SELECT repeat('x', 1000000000)"],
    "--address": ["ray://127.0.0.1:1", "nosuch:99999", "auto"],
    "--trace-file": ["/dev/zero", "/nonexistent.csv"],
}


def make_fixtures(d: Path) -> dict:
    """A small ONNX model with symbolic batch and seq axes, inputs for it, and result JSONs."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32), "W")
    g = helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["Y0"]), helper.make_node("Relu", ["Y0"], ["Y"])],
                          "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", "seq", 64])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", "seq", 64])], [w])
    model = d / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(model))
    npz = d / "x.npz"
    np.savez(npz, X=np.ones((1, 8, 64), np.float32))
    serve = d / "serve.json"
    serve.write_bytes(subprocess.run([EXE, "serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp",
                                      "4", "--rate", "5", "--requests", "40", "--json"], capture_output=True,
                                     check=True).stdout)
    train = d / "train.json"
    train.write_bytes(subprocess.run([EXE, "train", "--model", "llama-3.1-8b", "--global-batch", "8", "--seq", "512",
                                      "--tp", "32", "--json"], capture_output=True, check=True).stdout)
    trace = d / "trace.csv"
    trace.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" +
                     "".join(f"2023-11-16 18:15:{i:02d}.0000000,{100 + i},{20 + i}\n" for i in range(20)))
    sweep = d / "sweep.yaml"
    sweep.write_text(f"command: collective\nsystem: trn2.48xlarge\nop: all-reduce\nsizes: 64K\ntrnsim: {EXE}\n"
                     "axes:\n  algorithm: [ring, direct]\n")
    empty_dir = d / "a_directory"
    empty_dir.mkdir()
    return {"model": str(model), "npz": str(npz), "serve": str(serve), "train": str(train), "trace": str(trace),
            "sweep": str(sweep), "dir": str(empty_dir), "out": str(d / "out")}


def bases(fx: dict) -> dict:
    """Valid command lines, and which options each one varies (None: every option of the command)."""
    m, o = fx["model"], fx["out"]
    llm = ["--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "4", "--batch", "1", "--input", "128",
           "--output", "16", "--json"]
    serve = ["--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "4", "--rate", "5", "--requests", "40",
             "--json"]
    return {
        "specs": [(["specs", "--chip", "trn2", "--json"], None)],
        "kernel": [(["kernel", "matmul", "--json"], {"--m", "--k", "--n", "--dtype", "--chip", "--trace", "--seed",
                                                    "--clock-scale", "--power-cap", "name"}),
                   (["kernel", "matmul", "--timing-only", "--json"], {"--m", "--k", "--n"}),
                   (["kernel", "layernorm", "--rows", "128", "--cols", "1024", "--json"], {"--rows", "--cols", "--chunk"}),
                   (["kernel", "softmax", "--timing-only", "--json"], {"--rows", "--cols", "--chunk"}),
                   (["kernel", "activation", "--json"], {"--func", "--rows", "--cols"}),
                   (["kernel", "attention", "--json"], {"--heads", "--seq", "--head-dim"}),
                   (["kernel", "attention", "--timing-only", "--json"], {"--heads", "--seq", "--head-dim"}),
                   (["kernel", "transpose", "--json"], {"--method", "--rows", "--cols"})],
        "run": [(["run", m, "--dim", "seq=8", "--json"], None),
                (["run", m, "--dim", "seq=8", "--timing-only", "--json"], {"--batch", "--dim", "--cores", "--lnc",
                                                                           "--in-flight", "--clock-scale"}),
                (["run", m, "--dim", "seq=8", "--system", "trn2.48xlarge", "--timing-only", "--json"], {"--tp"})],
        "compile": [(["compile", m, "--dim", "seq=8", "-o", o + ".tpg", "--json"], None)],
        "collective": [(["collective", "--op", "all-reduce", "--system", "trn2.48xlarge", "--sizes", "1M", "--json"],
                        None)],
        "llm": [(["llm", *llm], None)],
        "serve": [(["serve", *serve], None),
                  (["serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "4", "--concurrency", "4",
                    "--requests", "40", "--json"], {"--concurrency", "--requests"}),
                  (["serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "4", "--trace",
                    fx["trace"], "--requests", "40", "--json"], {"--trace", "--trace-speedup"})],
        "train": [(["train", "--model", "llama-3.1-8b", "--global-batch", "8", "--seq", "512", "--tp", "32", "--json"],
                   None)],
        "tco": [(["tco", "--system", "trn2.48xlarge", "--result", fx["serve"], "--json"], None),
                (["tco", "--system", "trn2.48xlarge", "--model", "llama-3.1-8b", "--json"],
                 {"--tp", "--dtype", "--weights", "--kv-dtype", "--input", "--output", "--model"})],
        "compare": [(["compare", "--model", "llama-3.1-8b", "--systems", "trn2.48xlarge,p5.48xlarge", "--tp",
                      "trn2.48xlarge=4,p5.48xlarge=1", "--rate", "5", "--requests", "40", "--replicas", "1",
                      "--json"], None)],
        "report": [(["report", fx["serve"], "-o", o + ".html"], None)],
        "sweep": [([ "sweep", fx["sweep"], "-o", o + ".parquet", "--local", "0", "--json"], None)],
        "convert": [(["convert", m, "--dim", "seq=8", "-o", o + "-c.tpg", "--quantize", "int8", "--json"], None)],
    }


def options(cmd: str) -> list[tuple[str, str]]:
    """(option, kind) from `trnsim CMD --help`; kind is flag, int, float, text, in, out."""
    text = subprocess.run([EXE, cmd, "--help"], capture_output=True, text=True).stdout
    opts = []
    for line in text.splitlines():
        mt = re.match(r"^\s+(?:(-\w),\s*)?(--[\w-]+)(?:[ =]+([A-Z]+))?", line)
        ma = re.match(r"^\s+(-\w), (--[\w-]+) ([A-Z]+)", line)  # argparse: -o OUTPUT, --output OUTPUT
        if ma:
            mt = ma
        if not mt:
            continue
        name, typ = mt.group(2), mt.group(3)
        if name in BOOL_FLAGS or name == "--help":
            continue
        if cmd in ("serve", "compare") and typ is None:
            typ = "FLOAT" if name in UNTYPED_NUMERIC else "TEXT"
        if name == "--output" and cmd in ("llm", "serve", "compare", "tco"):
            kind = "num" if typ in ("INT", "FLOAT") else "text"
        elif name in OUT_FILES or (name == "--trace" and cmd in ("kernel", "run", "llm")):
            kind = "out"
        elif name in IN_FILES or (name == "--trace" and cmd in ("serve", "compare")):
            kind = "in"
        elif typ in ("INT", "UINT", "FLOAT", "N") or name in UNTYPED_NUMERIC:
            kind = "num"
        else:
            kind = "text"
        opts.append((name, kind))
    positional = {"kernel": ("name", "text"), "run": ("model", "in"), "compile": ("model", "in"),
                  "convert": ("model", "in"), "report": ("results", "in"), "sweep": ("spec", "in")}
    if cmd in positional:
        opts.append(positional[cmd])
    seen, out = set(), []
    for o in opts:
        if o[0] not in seen:
            seen.add(o[0])
            out.append(o)
    return out


def values(cmd: str, name: str, kind: str, fx: dict) -> list:
    if kind == "num":
        vals = NUMBERS + STRINGS
    elif kind == "in":
        vals = ["", "/dev/zero", fx["dir"], "/nonexistent/file.yaml", LONG, NON_UTF8]
    elif kind == "out":
        vals = ["/dev/full", fx["dir"], "/nonexistent/dir/out.json", "", NON_UTF8]
    else:
        vals = STRINGS + ["0", "-1", "nan", "9223372036854775808"]
    key = "--trace-file" if (name == "--trace" and cmd in ("serve", "compare")) else name
    if key in SPECIAL and not (cmd == "tco" and name in ("--input", "--output")):
        vals = vals + SPECIAL[key]
    if cmd == "kernel" and name in ("--m", "--k", "--n", "--rows", "--cols", "--heads", "--seq", "--head-dim",
                                    "--chunk"):
        vals = vals + ["128", "512", "65536", "1048576", "4194304", "4294967296", "2305843009213693952"]
    if cmd in ("llm", "train", "serve", "run") and name in ("--batch", "--input", "--output", "--seq-len",
                                                              "--global-batch", "--seq", "--micro-batch", "--tp"):
        vals = vals + ["1048576", "4294967296", "1099511627776"]
    if cmd == "collective" and name in ("--ranks", "--systems", "--ranks-per-chip"):
        vals = vals + ["3", "1048576", "4294967296"]
    return vals


def place(base: list, name: str, value) -> list:
    """The base command line with NAME set to VALUE (replacing its value there)."""
    if name in ("name", "model", "results", "spec"):  # the positional: the first argument after the command
        return [base[0], value, *base[2:]]
    argv = list(base)
    if name in argv:
        i = argv.index(name)
        argv[i + 1] = value
        return argv
    if name == "--output" and "-o" in argv:
        i = argv.index("-o")
        argv[i + 1] = value
        return argv
    return [*argv, name, value]


def show(v):
    if isinstance(v, bytes):
        return "<non-utf8 " + v.hex() + ">"
    return v if len(v) < 80 else f"<{len(v)} chars>"



def run_case(argv: list, tmp: str) -> dict:
    env = dict(os.environ, TRNSIM_MAX_MEMORY="2G", PYTHONPATH=str(ROOT / "python"))
    fd, tf = tempfile.mkstemp(dir=tmp, suffix=".time")
    os.close(fd)
    t0 = time.monotonic()
    # A session of its own: on a timeout the whole group goes (killing /usr/bin/time alone
    # would leave trnsim running).
    p = subprocess.Popen(["/usr/bin/time", "-q", "-f", "%M", "-o", tf, EXE, *argv], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=tmp, start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        rc = "timeout"
    wall = time.monotonic() - t0
    try:
        rss = int(Path(tf).read_text().split()[-1])
    except (ValueError, IndexError):
        rss = -1
    os.unlink(tf)
    return {"rc": rc, "wall_s": round(wall, 3), "rss_kb": rss, "stderr": err.decode("utf-8", "replace"),
            "stdout": out[:200_000].decode("utf-8", "replace")}


def bad_numbers(obj, path=""):
    """Fields that are NaN/inf, or a negative time/energy/cost/rate."""
    bad = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            bad += bad_numbers(v, f"{path}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(list(obj)[:2000]):
            bad += bad_numbers(v, f"{path}[{i}]")
    elif isinstance(obj, float) and not math.isfinite(obj):
        bad.append(f"{path}={obj}")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool) and obj < 0:
        leaf = path.rsplit(".", 1)[-1]
        if re.search(r"(_s|_j|_w|_usd|bytes|tflops|_gbps|_tps|throughput\w*|_per_\w+)$", leaf) and \
                not re.search(r"(error|delta|change|diff|saving|saved)", leaf):
            bad.append(f"{path}={obj}")
    return bad


def judge(case: dict) -> tuple[str, str]:
    """(verdict, why): ok, refused, accepted (exit 0 on a meaningless value), or finding."""
    rc, err = case["rc"], case["stderr"]
    if rc == "timeout":
        return "finding", f"timeout > {TIMEOUT} s"
    if case["rss_kb"] > 1.5 * LIMIT_KB:
        return "finding", f"peak RSS {case['rss_kb'] // 1024} MiB above the 2 GiB limit"
    if "Traceback" in err:
        return "finding", "traceback"
    if rc == 2:
        lines = err.splitlines()
        errs = [ln for ln in lines if ln.startswith("trnsim: error: ")]
        if len(errs) != 1 or not lines[-1].startswith("trnsim: error: ") or not err.endswith("\n"):
            return "finding", "exit 2 but not one `trnsim: error:` line"
        if "internal error" in errs[0]:
            return "finding", "internal error"
        return "refused", errs[0]
    if rc != 0:
        return "finding", f"exit {rc}"
    out = case["stdout"].strip()
    if out.startswith(("{", "[")):
        try:
            doc = json.loads(out, parse_constant=lambda c: float(c))
        except json.JSONDecodeError as e:
            return "finding", f"exit 0, JSON does not parse: {e}"
        bad = bad_numbers(doc)
        if bad:
            return "finding", "exit 0 with " + ", ".join(bad[:4])
    elif re.search(r"(?<![\w-])(nan|-?inf)(?![\w-])", out, re.I):
        return "finding", "exit 0, NaN/inf in the output"
    if case["value"] in MEANINGLESS or case["value"] == NON_UTF8:
        return "accepted", "exit 0 on a meaningless value"
    return "ok", ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=str(ROOT / "build" / "cli_extremes"))
    a = ap.parse_args()
    outdir = Path(a.out)
    outdir.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="cli_extremes_")
    fx = make_fixtures(Path(tmp))
    cases = []
    for cmd, blist in bases(fx).items():
        if a.only and cmd not in a.only.split(","):
            continue
        opts = options(cmd)
        for base, which in blist:
            for name, kind in opts:
                if which is not None and name not in which:
                    continue
                for v in values(cmd, name, kind, fx):
                    cases.append({"command": cmd, "option": name, "value": v, "argv": place(base, name, v)})
    print(f"{len(cases)} cases", flush=True)
    t0 = time.monotonic()
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        futures = {pool.submit(run_case, c["argv"], tmp): c for c in cases}
        for f in cf.as_completed(futures):
            c = futures[f]
            c.update(f.result())
            c["verdict"], c["why"] = judge(c)
            if c["verdict"] == "finding":
                print(f"  ... {c['command']} {c['option']} {show(c['value'])!r}: {c['why']}", flush=True)
    counts = {}
    for c in cases:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1

    with open(outdir / "cases.jsonl", "w") as f:
        for c in cases:
            rec = {k: c[k] for k in ("command", "option", "rc", "wall_s", "rss_kb", "verdict", "why")}
            rec["value"] = show(c["value"])
            rec["argv"] = [show(x) for x in c["argv"]]
            rec["stderr"] = c["stderr"][-600:]
            f.write(json.dumps(rec) + "\n")
    for c in cases:
        if c["verdict"] in ("finding", "accepted"):
            print(f"{c['verdict']:8} {c['command']} {c['option']} {show(c['value'])!r}: {c['why']} "
                  f"| {c['stderr'].strip().splitlines()[-1][:160] if c['stderr'].strip() else ''}")
    print(f"{len(cases)} cases in {time.monotonic() - t0:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"max wall {max(c['wall_s'] for c in cases):.1f} s, max RSS {max(c['rss_kb'] for c in cases) // 1024} MiB")
    return 1 if counts.get("finding") else 0


if __name__ == "__main__":
    sys.exit(main())
