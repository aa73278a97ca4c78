#!/usr/bin/env python
"""Run the hardening checks at a larger scale and print the figures for the closing note.

    HF_HUB_OFFLINE=1 python scripts/hardening_report.py            # about 2-4 minutes on 2 cores
    HF_HUB_OFFLINE=1 python scripts/hardening_report.py --quick    # a smoke run
    HF_HUB_OFFLINE=1 python scripts/hardening_report.py --only scrub   # secrets / false positives only (~1 s)

Figures: agent processes x trajectories written and found; kill -9 points tried (during
skill/trajectory writes and during evolution rounds) and the problems found after them; inputs
fuzzed (hypothesis examples over the record parsers and the store); secrets in the scrub corpus
and how many were caught; look-alikes and false positives; damaged search indexes (truncated or
overwritten ``index/chroma.sqlite3``) and how ``verify``, ``search`` and ``reindex`` handled
them; injection lines imported as SKILL.md files and how many arrived quarantined, clean skills
(hand-written, and every version a demo learned) and how many the same lint flagged. Exit code 1
if any check failed.

    HF_HUB_OFFLINE=1 python scripts/hardening_report.py --only import-lint --lint-bank DIR
        # also lint every skill version stored in the bank at DIR (e.g. a full demo's)

    HF_HUB_OFFLINE=1 python scripts/hardening_report.py --only heldout-injection
        # the held-out injection and clean lines on every way in, for the patterns alone, with the
        # embedding detector, with the LLM detector on the local model (--llm-model 1.5b|0.5b;
        # skillbank[local] and a fetched model, else those layers say why they were not measured)
        # and with the embedding detector as the LLM's first stage (patterns+embedding+llm, which
        # also prints the curve: recall and FP at several first-stage bands); --lines N for a quick
        # look, --layers patterns,patterns+embedding to skip the model, --curve-only for the curve
        # alone (a calibration run). The LLM layers make about two model calls per line the patterns
        # let through (the curve alone, one).

    HF_HUB_OFFLINE=1 python scripts/hardening_report.py --only heldout-injection-v3 \
        --layers patterns,patterns+embedding+llm
        # the same on the fresh v3 set (tests/data/heldout_injection_v3; issue 32), which is measured
        # once: tests/data/heldout is the calibration split since it was written.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# tests/ (support modules and corpora), tests/unit (test_scrub, test_hardening_props), tests/integration
# (test_reliability).
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "unit"), str(ROOT / "tests" / "integration")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def many_writers(tmp: Path, processes: int, per: int) -> tuple[dict, bool]:
    from skillbank import SkillBank
    from test_hardening_support import run_many_agent_writers

    path = tmp / "writers"
    result = run_many_agent_writers(str(path), processes, per, timeout=240)
    errors = [m for m in result["messages"] if m[2] != "ok"]
    with SkillBank.open(path, embedder="hash") as bank:
        trajs = bank.trajectories.list(limit=None, with_steps=True)
        complete = sum(t.status == "complete" and len(t.steps) == 3 and t.outcome is not None for t in trajs)
        verify = bank.verify()
    loops = {m[0]: m[3] for m in result["messages"] if m[0] in ("evolve", "search") and m[2] == "ok"}
    fig = {"processes": processes, "per_process": per, "written": processes * per, "found": len(trajs),
           "complete_with_outcome": complete, "worker_errors": len(errors),
           "exit_codes_ok": result["exitcodes"] == [0] * (processes + 2),
           "evolve_rounds": loops.get("evolve"), "searches": loops.get("search"),
           "history_ok": verify.ok, "seconds": round(result["seconds"], 1)}
    ok = (not errors and fig["exit_codes_ok"] and len(trajs) == complete == processes * per and verify.ok)
    if errors:
        print(errors[0][3], file=sys.stderr)
    return fig, ok


def kill_during_writes(tmp: Path, attempts: int, seed: int) -> tuple[dict, bool]:
    """test_reliability's writer (skills + trajectories), SIGKILLed at random points."""
    from skillbank import SkillBank
    from test_reliability import kill_writer

    path = tmp / "writes"
    SkillBank.open(path, embedder="hash").close()
    rng = random.Random(seed)
    problems = []
    for attempt in range(attempts):
        kill_writer(path, f"w{attempt}", rng.uniform(0.01, 0.3))
        with SkillBank.open(path, embedder="hash") as bank:
            problems += bank.store.integrity_check()
            rows = bank.store.query("SELECT s.id, s.version, count(v.version) AS n FROM skills s"
                                    " JOIN skill_versions v ON v.skill_id = s.id GROUP BY s.id")
            problems += [f"half-written {r['id']}" for r in rows if r["version"] != r["n"]]
            problems += bank.verify(check_index=False).problems
    return {"kill_points": attempts, "failures": len(problems)}, not problems


def kill_during_evolution(tmp: Path, attempts: int, seed: int) -> tuple[dict, bool]:
    from test_hardening_support import crash_evolution

    r = crash_evolution(str(tmp / "evolve"), attempts, seed, families=120)
    for p in r["failures"][:5]:
        print("  evolution crash problem:", p, file=sys.stderr)
    return {"kill_points": r["attempts"], "killed_mid_round": r["killed"], "rounds_finished_before_kill": r["completed"],
            "failures": len(r["failures"]), "versions_written": r["versions"]}, not r["failures"]


def fuzz(examples: int) -> tuple[dict, bool]:
    os.environ["HARDENING_EXAMPLES"] = str(examples)
    import test_hardening_props as props

    failures = 0
    for test in (props.test_clean_records_round_trip_json_and_sqlite,
                 props.test_lone_surrogates_are_stored_replaced_without_crashing):
        try:
            test()
        except Exception as exc:  # noqa: BLE001
            failures += 1
            print(f"  {test.__name__}: {exc}"[:2000], file=sys.stderr)
    return {"inputs_fuzzed": props.COUNTS["examples"], "failures": failures}, failures == 0


def scrub_corpus() -> tuple[dict, bool]:
    from skillbank._scrub import Scrubber
    from test_scrub import CASES, LOOKALIKES

    scrubber = Scrubber()
    caught = sum(c.secret not in (out := scrubber.scrub(c.text)) and out == c.expected for c in CASES)
    false_pos = sum(scrubber.scrub(t) != t for t in LOOKALIKES)
    fig = {"secrets": len(CASES), "caught": caught, "kinds": len({c.kind for c in CASES}),
           "lookalikes": len(LOOKALIKES), "false_positives": false_pos}
    return fig, caught == len(CASES) and false_pos == 0


def damaged_index(tmp: Path, rounds: int, seed: int) -> tuple[dict, bool]:
    """Damage a used bank's Chroma file ``rounds`` times per way (truncated at a random size,
    overwritten with random bytes); each time ``verify``, ``search`` and ``reindex`` must
    neither crash nor lie: verify names the damage in one problem line, search answers from a
    rebuilt index, reindex repairs, and verify is clean afterwards."""
    import logging

    from skillbank import SkillBank

    rng = random.Random(seed)
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("skillbank").addHandler(handler)
    counts = {"damaged": 0, "verify_named_it": 0, "search_rebuilt_and_said_so": 0,
              "reindex_repaired": 0, "crashes": 0}
    try:
        for way in ("truncated", "overwritten"):
            for attempt in range(rounds):
                path = tmp / f"index-{way}-{attempt}"
                with SkillBank.open(path, embedder="hash") as bank:
                    for i in range(20):
                        bank.add_skill(name=f"skill-{i}", description=f"skill number {i} about topic {i % 5}",
                                       body=f"Do step {i}.")
                    bank.search("skill number 3", k=1)
                index_file = path / "index" / "chroma.sqlite3"
                size = index_file.stat().st_size
                for action in ("verify", "search", "reindex"):
                    if way == "truncated":
                        with open(index_file, "r+b") as handle:
                            handle.truncate(rng.randrange(0, size))
                    else:
                        index_file.write_bytes(os.urandom(rng.randrange(1, size)))
                    counts["damaged"] += 1
                    del said[:]
                    try:
                        with SkillBank.open(path, embedder="hash") as bank:
                            if action == "verify":
                                problems = bank.verify().problems
                                counts["verify_named_it"] += len(problems) == 1 and "damaged" in problems[0]
                            elif action == "search":
                                hit = bank.search("skill number 3 about topic 3", k=1)
                                counts["search_rebuilt_and_said_so"] += (
                                    bool(hit) and hit[0].skill.name == "skill-3" and bank.verify().ok
                                    and sum("damaged" in m for m in said) == 1)
                            else:
                                bank.reindex()
                                counts["reindex_repaired"] += bank.verify().ok
                    except Exception as exc:  # noqa: BLE001 - a crash is what this counts
                        counts["crashes"] += 1
                        print(f"  {way} index, {action}: {type(exc).__name__}: {exc}"[:500], file=sys.stderr)
                    index_file = path / "index" / "chroma.sqlite3"
                    if not index_file.exists():  # a rebuild that never reopened the files
                        with SkillBank.open(path, embedder="hash") as bank:
                            bank.search("skill", k=1)
                    size = index_file.stat().st_size
    finally:
        logging.getLogger("skillbank").removeHandler(handler)
    per_action = counts["damaged"] // 3
    ok = counts["crashes"] == 0 and all(counts[k] == per_action for k in
                                        ("verify_named_it", "search_rebuilt_and_said_so", "reindex_repaired"))
    return counts, ok


def import_lint(tmp: Path, lint_bank: Path | None) -> tuple[dict, bool]:
    """Every way in is linted: injection lines imported as SKILL.md files must arrive quarantined
    (and never be found by a search); clean skills must not be flagged."""
    from injection_corpus import CLEAN, DEV, HELD_OUT

    from skillbank import SkillBank
    from skillbank_harness.demo import QUICK, run_demo
    from skillbank._screen import lint_incoming

    def write(folder: Path, lines: list[str], prefix: str) -> None:
        for i, line in enumerate(lines):
            skill = folder / f"{prefix}-{i}"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(f"---\nname: {prefix}-{i}\ndescription: Refund an order.\n---\n\n"
                                            f"Look the order up first.\n{line}\n", encoding="utf-8")

    injected = [line for _, line in DEV + HELD_OUT]
    write(tmp / "import" / "files", injected, "injected")
    write(tmp / "import" / "files", CLEAN, "clean")
    with SkillBank.open(tmp / "import" / "bank", embedder="hash") as bank:
        got = bank.import_skills(tmp / "import" / "files", trusted=True)  # the lint decides, not the trust rule
        found = {h.skill.name for h in bank.search("refund my order", k=len(got))}
    held = [s for s in got if s.name.startswith("injected") and s.status.value == "quarantined"]
    flagged_clean = [s for s in got if s.name.startswith("clean") and s.status.value != "active"]

    def flagged_versions(path: Path) -> tuple[int, int]:
        with SkillBank.open(path, embedder="hash", create=False) as bank:
            versions = [v for s in bank.list_skills() for v in bank.history(s.id)]
        for v in versions:
            if not lint_incoming(v.content).ok:
                print(f"  flagged learned skill {v.content.name} v{v.version}: {lint_incoming(v.content).reason}",
                      file=sys.stderr)
        return len(versions), sum(not lint_incoming(v.content).ok for v in versions)

    with contextlib.redirect_stdout(io.StringIO()):  # the demo's own output
        demo = run_demo(tmp / "import" / "demo", config=QUICK, embedder="hash", progress=False)
    demo_versions, demo_flagged = flagged_versions(demo.bank_path)
    fig = {"injection_files": len(injected), "quarantined": len(held),
           "active": len(injected) - len(held), "found_by_search": len({n for n in found if n.startswith("injected")}),
           "clean_files": len(CLEAN), "clean_flagged": len(flagged_clean),
           "quick_demo_versions": demo_versions, "quick_demo_flagged": demo_flagged}
    ok = len(held) == len(injected) and not flagged_clean and demo_flagged == 0 and not fig["found_by_search"]
    if lint_bank is not None:
        fig["bank_versions"], fig["bank_flagged"] = flagged_versions(lint_bank)
        ok &= fig["bank_flagged"] == 0
    return fig, ok


# -- held-out corpora (issue 20): every way in, per layer ---------------------------------------

WAYS_IN = ("add_skill", "update_skill", "skill_md_import", "distiller")
LAYERS = {"patterns": "off", "patterns+embedding": "embedding", "patterns+llm": "llm",
          "patterns+embedding+llm": "both"}
LEAD, DESCRIPTION = "Look the order up first.", "Refund an order."
# The curve's first-stage bands: 0 never waves a line through as clean and 1.01 never flags one
# unasked, so (0, 1.01) is the LLM alone.
CURVE_CLEAR_CLEAN = (0.0, 0.228, 0.25, 0.3, 0.4, 0.5, 0.7)
CURVE_CLEAR_INJECTION = (0.99, 0.995, 0.999, 1.01)


def version_text(i: int, line: str) -> str:
    """The text add_skill, the import and the distiller's lint screen for line ``i`` of a corpus:
    the skill ``s-i`` that adds ``line`` to an ordinary first line."""
    from skillbank.models import SkillContent
    from skillbank._screen.patterns import added_text

    return added_text(SkillContent(name=f"s-{i}", description=DESCRIPTION, body=f"{LEAD}\n{line}"), None)


def _ways_in(tmp: Path, lines: list[str], tag: str) -> dict[str, list[bool]]:
    """For each way in, whether each line was stopped (the skill carrying it is not active, or the
    round's lint flags it): the real bank paths on real SQLite banks.

    A line's skill has the same name, description and body on every way in that screens a whole
    new version (add_skill, import, the distiller's lint), so the LLM detector judges that text
    once and answers the others from its verdicts; update_skill screens only the added line."""
    from skillbank import SkillBank
    from skillbank.evolution._lint import LintContext, lint_content
    from skillbank.models import SkillContent

    lead, desc = LEAD, DESCRIPTION
    stopped: dict[str, list[bool]] = {}
    started = time.perf_counter()

    def done(way: str) -> None:
        print(f"    {tag}: {way} done ({time.perf_counter() - started:.0f}s)", file=sys.stderr, flush=True)

    with SkillBank.open(tmp / f"ways-{tag}" / "add", embedder="hash") as bank:
        t0 = time.perf_counter()
        stopped["add_skill"] = [bank.add_skill(f"s-{i}", desc, f"{lead}\n{line}").status.value != "active"
                                for i, line in enumerate(lines)]
        stopped["ms per add_skill"] = [(time.perf_counter() - t0) * 1000 / len(lines)]
    done("add_skill")
    with SkillBank.open(tmp / f"ways-{tag}" / "update", embedder="hash") as bank:
        with _detector_env("off"):  # the versions edited are the setup, not the measurement
            base = [bank.add_skill(f"s-{i}", desc, lead) for i in range(len(lines))]
        stopped["update_skill"] = [bank.update_skill(s.id, reason="edit", body=f"{lead}\n{line}").status.value
                                   != "active" for s, line in zip(base, lines)]
    done("update_skill")
    files = tmp / f"files-{tag}"
    for i, line in enumerate(lines):
        (files / f"s-{i}").mkdir(parents=True)
        (files / f"s-{i}" / "SKILL.md").write_text(
            f"---\nname: s-{i}\ndescription: {desc}\n---\n\n{lead}\n{line}\n", encoding="utf-8")
    with SkillBank.open(tmp / f"ways-{tag}" / "import", embedder="hash") as bank:
        got = {s.name: s for s in bank.import_skills(files, trusted=True)}  # the lint, not the trust rule
    stopped["skill_md_import"] = [got[f"s-{i}"].status.value != "active" for i in range(len(lines))]
    done("skill_md_import")
    # What an LLM distiller proposes meets the round's lint (and then add_skill's screen).
    stopped["distiller"] = [not lint_content(SkillContent(name=f"s-{i}", description=desc, body=f"{lead}\n{line}"),
                                             LintContext()).ok or a
                            for i, (line, a) in enumerate(zip(lines, stopped["add_skill"]))]
    done("distiller")
    return stopped


def _spread(rows: list[Any], most: int | None) -> list[Any]:
    """At most ``most`` of ``rows``, evenly spaced through them (every style of the file, not the first)."""
    if most is None or most >= len(rows):
        return rows
    return [rows[i * len(rows) // most] for i in range(most)]


def _llm_cost(before: Any, after: Any) -> str:
    judged, calls = after.judged - before.judged, after.calls - before.calls
    seconds = after.seconds - before.seconds
    per = f"{seconds / judged:.2f} s per incoming version judged" if judged else "no version judged"
    return (f"{per} ({judged} judged by the model, {after.cached - before.cached} from its verdicts, "
            f"{calls} model calls, {after.retries - before.retries} retries, "
            f"{after.unjudged - before.unjudged} could not be judged (held), "
            f"{after.unsure - before.unsure} unsure (held for review), {seconds:.0f} s in the model)")


_OUTCOMES = {"injection-llm": "injection", "injection-llm-unsure": "unsure", "injection-llm-unjudged": "unjudged"}


@dataclass(frozen=True)
class Staging:
    """What each stage makes of one line, as add_skill screens it: whether the patterns stop it, the
    embedding detector's top probability (None: nothing long enough to score), and the LLM's outcome
    (clean, injection, unsure or unjudged; not asked when the patterns stop the line)."""

    patterns: bool
    probability: float | None
    llm: str

    def stopped(self, clear_clean: float, clear_injection: float) -> bool:
        """Whether the patterns and the first stage with this band, then the LLM, stop the line."""
        if self.patterns:
            return True
        if self.probability is not None and self.probability >= clear_injection:
            return True
        return not self.skips_llm(clear_clean, clear_injection) and self.llm != "clean"

    def skips_llm(self, clear_clean: float, clear_injection: float) -> bool:
        return self.patterns or (self.probability is not None
                                 and not clear_clean <= self.probability < clear_injection)


def _stagings(detector: Any, lines: list[str]) -> list[Staging]:
    """Every stage on every line the patterns let through: the LLM is asked about each, so the
    curve can place any band, and its verdicts are kept for the ways in that follow."""
    from skillbank._screen.patterns import injection_findings

    out = []
    for i, line in enumerate(lines):
        text = version_text(i, line)
        if injection_findings(text):
            out.append(Staging(True, None, "not asked"))
            continue
        top, found = detector.embedding.top(text), detector.llm.findings(text)
        outcome = _OUTCOMES[found[0].rule] if found else "clean"
        out.append(Staging(False, top.probability if top else None, outcome))
    return out


def _band(clear_clean: float, clear_injection: float) -> str:
    return f"clear clean < {clear_clean}, clear injection >= {clear_injection}"


def _curve(bad: list[Staging], good: list[Staging]) -> dict[str, str]:
    """Recall, FP (and how many of the clean lines the LLM held as unsure) and LLM calls at each
    first-stage band of the curve, on the add_skill text."""
    rows = {}
    for low in CURVE_CLEAR_CLEAN:
        for high in CURVE_CLEAR_INJECTION:
            hit = sum(s.stopped(low, high) for s in bad)
            fp = [s for s in good if s.stopped(low, high)]
            unsure = sum(s.llm == "unsure" and not s.skips_llm(low, high) for s in fp)
            asked = sum(not s.skips_llm(low, high) for s in bad + good)
            label = "the LLM alone" if (low, high) == (0.0, 1.01) else _band(low, high)
            rows[f"curve: {label}"] = (f"recall {hit / len(bad):.1%} ({hit}/{len(bad)}), "
                                       f"FP {len(fp) / len(good):.1%} ({len(fp)}/{len(good)}, {unsure} unsure), "
                                       f"LLM asked about {asked}/{len(bad) + len(good)} lines")
    return rows


def _by_style(rows: list[tuple[str, str]], stopped: list[bool]) -> str:
    """How many lines of each style were stopped, e.g. ``negation 3/67``."""
    counts: dict[str, list[int]] = {}
    for (style, _), s in zip(rows, stopped):
        key = style.split(":")[0]
        counts.setdefault(key, [0, 0])
        counts[key][0] += s
        counts[key][1] += 1
    return ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(counts.items()))


def _corpus(name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(injection rows, clean rows) of the check ``name``: the first held-out corpora (issue 20, now
    the calibration split) or the fresh v3 set (issue 32)."""
    import heldout_corpus as corpora

    if name == "heldout-injection-v3":
        return corpora.injections_v3(), corpora.clean_lines_v3()
    return corpora.injections(), corpora.clean_lines()


def heldout_injection(tmp: Path, layers: list[str], lines: int | None,
                      corpus: str = "heldout-injection", curve_only: bool = False) -> tuple[dict, bool]:
    """Held-out injection recall and clean false-positive rate, per way in and per layer, and the
    LLM detector's cost per incoming version; with the first stage, the curve over its band
    (``curve_only``: the curve alone, half the model calls, for a calibration run)."""
    from dataclasses import replace

    from skillbank._screen.second_layer import active_detector, unavailable

    bad_rows, good_rows = (_spread(rows, lines) for rows in _corpus(corpus))
    bad, good = [t for _, t in bad_rows], [t for _, t in good_rows]
    fig: dict[str, Any] = {"injection_lines": len(bad), "clean_lines": len(good)}
    met: list[str] = []
    for layer in layers:
        mode = LAYERS[layer]
        detector = active_detector(mode)  # built (a local model loaded) before anything is timed
        if mode != "off" and (missing := unavailable(mode)):
            fig[f"{layer}"] = "not measured: " + "; ".join(f"{k} cannot run: {v}" for k, v in missing.items())
            continue
        llm = getattr(detector, "llm", detector)
        before = replace(llm.stats) if hasattr(llm, "stats") else None
        if mode == "both":
            fig[f"{layer}/band"] = _band(detector.clear_clean, detector.clear_injection)
            curve = _curve(_stagings(detector, bad), _stagings(detector, good))
            fig.update({f"{layer}/{k}": v for k, v in curve.items()})
        if curve_only:
            if before is not None:
                fig[f"{layer}/LLM cost"] = _llm_cost(before, llm.stats)
            continue
        with _detector_env(mode):
            hit = _ways_in(tmp, bad, f"{corpus}-{layer}-bad")
            fp = _ways_in(tmp, good, f"{corpus}-{layer}-good")
        meets = True
        for way in WAYS_IN:
            recall, fpr = sum(hit[way]) / len(bad), sum(fp[way]) / len(good)
            fig[f"{layer}/{way}"] = f"recall {recall:.1%} ({sum(hit[way])}/{len(bad)}), " \
                                    f"FP {fpr:.1%} ({sum(fp[way])}/{len(good)})"
            meets &= recall >= 0.9 and fpr <= 0.02
        if meets:
            met.append(layer)
        fig[f"{layer}/ms per add_skill (injection, clean lines)"] = \
            f"{hit['ms per add_skill'][0]:.1f}, {fp['ms per add_skill'][0]:.1f}"
        if before is not None:
            fig[f"{layer}/LLM cost"] = _llm_cost(before, llm.stats)
        fig[f"{layer}/add_skill by style"] = _by_style(bad_rows, hit["add_skill"])
        fig[f"{layer}/add_skill clean flagged by style"] = _by_style(good_rows, fp["add_skill"])
        fig[f"{layer}/flagged clean (add_skill)"] = [t[:70] for t, f in zip(good, fp["add_skill"]) if f][:12]
        fig[f"{layer}/missed (add_skill)"] = sum(not h for h in hit["add_skill"])
    fig["layers meeting recall >= 90% with FP <= 2% on every way in"] = met or "none"
    return fig, bool(met)


def heldout_secrets() -> tuple[dict, bool]:
    """Held-out secret recall per format and per context (span-exact), look-alike survival, speed."""
    from heldout_corpus import lookalikes, secrets

    from skillbank._scrub import Scrubber, default_scrubber

    cases = secrets()
    looks = lookalikes()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import secret_layers  # per layer on the three held-out sets (issue 32): recall, look-alikes, speed

    extra = {f"{label}: {layer}": f"recall {f['recall_span_exact']}, look-alikes changed "
             f"{f['lookalikes_changed']}, {f['throughput_kb_s']} KB/s"
             for label, directory in secret_layers.SETS
             for layer, f in secret_layers.measure(directory).items()}
    scrub = default_scrubber()
    exact = [c.redacted_exactly(scrub(c.text)) for c in cases]
    removed = [c.removed(scrub(c.text)) for c in cases]

    def per(key: str) -> str:
        groups: dict[str, list[int]] = {}
        for c, e in zip(cases, exact):
            groups.setdefault(getattr(c, key), [0, 0])
            groups[getattr(c, key)][0] += e
            groups[getattr(c, key)][1] += 1
        missed = {k: f"{a}/{n}" for k, (a, n) in sorted(groups.items()) if a < n}
        return f"{sum(a == n for a, n in groups.values())}/{len(groups)} complete; short: {missed or 'none'}"

    changed = [(k, t) for k, t in looks if scrub(t) != t]
    fig = {"cases": len(cases), "formats": len({c.format for c in cases}),
           "contexts": len({c.context for c in cases}),
           "recall_span_exact": f"{sum(exact) / len(cases):.1%} ({sum(exact)}/{len(cases)})",
           "recall_removed": f"{sum(removed) / len(cases):.1%} ({sum(removed)}/{len(cases)})",
           "per_format": per("format"), "per_context": per("context"),
           "lookalikes": len(looks), "lookalikes_changed": len(changed),
           "changed": [f"{k}: {scrub(t)[:70]}" for k, t in changed], **extra}
    return fig, sum(exact) / len(cases) >= 0.99 and not changed


@contextlib.contextmanager
def _detector_env(value: str):
    from skillbank._screen.second_layer import ENV

    old = os.environ.get(ENV)
    os.environ[ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = old


CHECKS = ("writers", "write-kills", "evolve-kills", "fuzz", "scrub", "damaged-index", "import-lint",
          "heldout-injection", "heldout-injection-v3", "heldout-secrets")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--per", type=int, default=None, help="trajectories per agent process")
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--only", action="append", choices=CHECKS, metavar="CHECK",
                    help=f"run only this check (repeatable): {', '.join(CHECKS)}")
    ap.add_argument("--lint-bank", type=Path, default=None,
                    help="import-lint: also lint every skill version stored in this bank")
    ap.add_argument("--layers", default=",".join(LAYERS),
                    help=f"heldout-injection(-v3): the layers to measure, comma-separated ({', '.join(LAYERS)}); "
                         "the layers with llm run the local model")
    ap.add_argument("--llm-model", choices=("1.5b", "0.5b"), default="1.5b",
                    help="heldout-injection: the local model size of the LLM detector")
    ap.add_argument("--curve-only", action="store_true",
                    help="heldout-injection(-v3): for patterns+embedding+llm, only the curve on the add_skill "
                         "text (one model call per line the patterns let through), not every way in")
    ap.add_argument("--lines", type=int, default=None, metavar="N",
                    help="heldout-injection: at most N injection and N clean lines, evenly spread (a quick look)")
    args = ap.parse_args()
    layers = [x.strip() for x in args.layers.split(",") if x.strip()]
    if unknown := [x for x in layers if x not in LAYERS]:
        ap.error(f"--layers: unknown {', '.join(unknown)}; choose from {', '.join(LAYERS)}")
    from skillbank._screen.second_layer import MODEL_ENV

    os.environ[MODEL_ENV] = f"local:{args.llm_model}"
    # The fresh v3 set is measured once, when asked for by name, never as part of a full run.
    only = set(args.only or [c for c in CHECKS if c != "heldout-injection-v3"])
    per = args.per or (50 if args.quick else 400)
    write_kills, evolve_kills, examples = (5, 4, 50) if args.quick else (40, 30, 1000)
    damage_rounds = 2 if args.quick else 10

    start = time.monotonic()
    results, all_ok = {}, True
    with tempfile.TemporaryDirectory(prefix="skillbank-hardening-") as tmp:
        tmp_path = Path(tmp)
        for check, name, fn in [
            ("writers", "many writers (real agents + evolve + search)", lambda: many_writers(tmp_path, args.processes, per)),
            ("write-kills", "kill -9 during skill/trajectory writes", lambda: kill_during_writes(tmp_path, write_kills, args.seed)),
            ("evolve-kills", "kill -9 during evolution rounds", lambda: kill_during_evolution(tmp_path, evolve_kills, args.seed)),
            ("fuzz", "fuzzed record parsers (hypothesis)", lambda: fuzz(examples)),
            ("scrub", "scrub corpus", scrub_corpus),
            ("damaged-index", "damaged search index", lambda: damaged_index(tmp_path, damage_rounds, args.seed)),
            ("import-lint", "import lint (injection files, clean skills)", lambda: import_lint(tmp_path, args.lint_bank)),
            ("heldout-injection", "held-out injection lines and clean lines, per way in and layer",
             lambda: heldout_injection(tmp_path, layers, args.lines, curve_only=args.curve_only)),
            ("heldout-injection-v3", "fresh v3 injection lines and clean lines, per way in and layer",
             lambda: heldout_injection(tmp_path, layers, args.lines, "heldout-injection-v3", args.curve_only)),
            ("heldout-secrets", "held-out secrets and look-alikes", heldout_secrets),
        ]:
            if check not in only:
                continue
            t0 = time.monotonic()
            fig, ok = fn()
            all_ok &= ok
            results[name] = fig
            print(f"[{'ok' if ok else 'FAIL'}] {name} ({time.monotonic() - t0:.0f}s)")
            for key, value in fig.items():
                print(f"    {key}: {value}")
            sys.stdout.flush()

    w = results.get("many writers (real agents + evolve + search)")
    k1 = results.get("kill -9 during skill/trajectory writes")
    k2 = results.get("kill -9 during evolution rounds")
    f, s = results.get("fuzzed record parsers (hypothesis)"), results.get("scrub corpus")
    d = results.get("damaged search index")
    il = results.get("import lint (injection files, clean skills)")
    print("\nSummary for the closing note:")
    if w:
        print(f"- {w['processes']} agent processes x {w['per_process']} trajectories = {w['written']} written, "
              f"{w['found']} found ({w['complete_with_outcome']} complete with steps and outcome), "
              f"with {w['evolve_rounds']} evolve rounds and {w['searches']} searches running alongside; "
              f"{w['worker_errors']} worker errors; history chain ok: {w['history_ok']}")
    if k1 or k2:
        kills = [k for k in (k1, k2) if k]
        print(f"- kill -9 points tried: {sum(k['kill_points'] for k in kills)} "
              f"({k1['kill_points'] if k1 else 0} during writes, {k2['kill_points'] if k2 else 0} during evolution rounds); "
              f"failures found: {sum(k['failures'] for k in kills)}")
    if f:
        print(f"- inputs fuzzed: {f['inputs_fuzzed']} hypothesis examples; failures: {f['failures']}")
    if s:
        print(f"- scrub corpus: {s['caught']}/{s['secrets']} secrets caught across {s['kinds']} kinds; "
              f"{s['lookalikes']} look-alikes, {s['false_positives']} false positives")
    if d:
        print(f"- damaged index: {d['damaged']} damages (truncated or overwritten chroma.sqlite3); "
              f"verify named it {d['verify_named_it']}/{d['damaged'] // 3}, search rebuilt and said so "
              f"{d['search_rebuilt_and_said_so']}/{d['damaged'] // 3}, reindex repaired "
              f"{d['reindex_repaired']}/{d['damaged'] // 3}; crashes: {d['crashes']}")
    if il:
        print(f"- import lint: {il['quarantined']}/{il['injection_files']} injection files arrived quarantined "
              f"({il['active']} active, {il['found_by_search']} found by search); clean skills flagged: "
              f"{il['clean_flagged']}/{il['clean_files']} hand-written, {il['quick_demo_flagged']}/"
              f"{il['quick_demo_versions']} versions a quick demo learned"
              + (f", {il['bank_flagged']}/{il['bank_versions']} versions in --lint-bank" if "bank_versions" in il else ""))
    print(f"- total time: {time.monotonic() - start:.0f}s; all checks passed: {all_ok}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
