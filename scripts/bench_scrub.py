#!/usr/bin/env python
"""Scrubber throughput with and without the maintained rule set (detect-secrets' regex plugins).

    python scripts/bench_scrub.py [--kb 200] [--repeat 5]

Texts: ordinary trajectory-like text (tool calls as JSON, log lines, prose, code, hashes and
uuids; a few secrets) and the held-out secret corpus repeated. Prints the best of ``--repeat``
runs in MB/s for each scrubber and the slowdown; the machine load is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def ordinary_text(kb: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    words = ("order refund booking check the user tool result status shipped password reset link "
             "token budget api key parameter admin override stale value ignore cached price").split()
    while sum(map(len, parts)) < kb * 1024:
        pick = rng.random()
        if pick < 0.3:
            parts.append(json.dumps({"tool": "lookup_order", "args": {"order_id": f"ORD-{rng.randint(1, 10**6)}"},
                                     "result": {"status": "shipped", "trace": str(uuid.UUID(int=rng.getrandbits(128)))}}))
        elif pick < 0.55:
            parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(8, 30))) + ".")
        elif pick < 0.7:
            parts.append(f"2025-03-14T09:{rng.randint(10, 59)}:00Z INFO commit {rng.getrandbits(160):040x} deployed")
        elif pick < 0.85:
            parts.append("def handler(event, context):\n    client = Client(timeout=30)\n    return client.get(event['id'])")
        elif pick < 0.98:
            parts.append(f"GET https://api.example.com/v1/items?limit=10&page={rng.randint(1, 99)} 200 12ms")
        else:
            parts.append(f"export API_TOKEN=ghp_{''.join(rng.choice('abcdefXYZ0123456789') for _ in range(36))}")
    return "\n".join(parts)


def best_mb_per_s(scrub, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        scrub(text)
        best = min(best, time.perf_counter() - t0)
    return len(text.encode()) / 1e6 / best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from heldout_corpus import secrets

    from skillbank._scrub import Scrubber, maintained_rules

    own, full = Scrubber(maintained=False), Scrubber()
    print(f"maintained rules: {len(maintained_rules())} (detect-secrets regex plugins); "
          f"own patterns: {len(own.kinds)}")
    texts = {"ordinary text": ordinary_text(args.kb),
             "held-out secrets x20": "\n".join(c.text for c in secrets()) * 20}
    for name, text in texts.items():
        a = best_mb_per_s(own, text, args.repeat)
        b = best_mb_per_s(full, text, args.repeat)
        print(f"{name} ({len(text) // 1024} KB): own patterns {a:.2f} MB/s, own + detect-secrets {b:.2f} MB/s, "
              f"slowdown {a / b:.2f}x")
    print(f"load: {open('/proc/loadavg').read().strip()}" if os.path.exists("/proc/loadavg") else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
