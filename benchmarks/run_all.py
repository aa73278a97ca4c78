"""Run every ``benchmarks/bench_*.py`` in turn (each in its own process).

    python benchmarks/run_all.py            # full sizes; each benchmark updates RESULTS.md
    python benchmarks/run_all.py --quick    # smoke run of every benchmark
    python benchmarks/run_all.py --only retrieval startup

Exits non-zero if any benchmark failed, after running the rest.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def discover() -> list[Path]:
    return sorted(BENCH_DIR.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    parser.add_argument("--only", nargs="+", help="names like 'retrieval' or 'bench_retrieval'")
    args = parser.parse_args(argv)
    scripts = discover()
    if args.only:
        wanted = {w.removeprefix("bench_").removesuffix(".py") for w in args.only}
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in wanted]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    failed = []
    for script in scripts:
        cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        print(f"=== {script.name} {'--quick' if args.quick else ''}", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call(cmd, env=env)
        print(f"=== {script.name}: exit {rc} in {time.perf_counter() - t0:.1f}s", flush=True)
        if rc != 0:
            failed.append(script.name)
    if failed:
        print("FAILED: " + ", ".join(failed), flush=True)
        return 1
    print(f"all {len(scripts)} benchmarks finished", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
