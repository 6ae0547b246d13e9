"""Runs every benchmark driver in bench/ in turn (`make bench`). Each driver measures trnsim
beside a peer in the same run and prints the ratio; this script only sequences them."""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DRIVERS = ["numerics_convert.py", "sim_speed.py", "collective_calibration.py",
           "minilm_vs_onnxruntime.py", "serve_speed.py"]


def main() -> int:
    failed = []
    for name in DRIVERS:
        path = HERE / name
        if not path.exists():
            continue
        print(f"\n=== {name} ===", flush=True)
        if subprocess.call([sys.executable, str(path)]) != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
