"""The live monitor on a real model: a canary stream with one skill meant to help and one meant to hurt.

    PYTHONPATH=$PWD HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/live_real_model.py \\
        --size 1.5b --runs 150 --seed 0 --out benchmarks/runs/live_real_model_1p5b.jsonl
    python benchmarks/live_real_model.py --fake --runs 6 --out /tmp/live_fake.jsonl   # smoke test

Needs ``pip install 'skillbank[local]'`` and ``skillbank model fetch --size 1.5b``. Run it again
with the same ``--out`` to continue a stopped stream from its next run.

A fresh bank (``<out>.bank/``, beside the log) holds two skills, both put into canary
(:func:`skillbank.live._canary.start_canary`, what ``skillbank canary NAME`` does):

- **helps** (``refund-check-first``): the oracle of ``small.shop.refund`` as ``OracleSkills`` in
  ``bench_real_model.py`` builds it, the person-written hint of ``oracle_hints.py`` plus the
  typed check of ``oracle_lessons.py``, with the hint of ``small.shop.bare_number`` beside it.
  Both are ``small`` templates the committed calibration (``real_model_calibration.json``,
  1.5B, 6 runs per arm) kept: unguided 0/6 and 0/6, with the oracle 4/6 and 5/6.
- **hurts** (``event-time-12h``): the oracle of ``small.calendar.time_24h`` turned wrong: it
  tells the model to give ``create_event`` a 12-hour time with am/pm, which the tool refuses
  (it takes ``HH:MM``) and the verifier fails. Unguided, that template was 6/6 in calibration.

Each skill is scoped to its toolset (``toolset=`` the tools of its template's agent), so the
injection's toolset match makes it eligible for its own template's requests and no other.

The stream cycles seeded instances of ``small.shop.refund``, ``small.calendar.time_24h``,
``small.shop.bare_number``, ``small.calendar.time_24h`` (each skill eligible for half the runs).
Each run is a real ``create_agent`` (``skillbank_harness.envs.run_task``) with
``SkillBankMiddleware(bank, live=LiveConfig(holdout=0.0, canary_exposure=0.5, salt=...),
verifier=...)``: the task's own verifier labels the recording, and the run's draw (shown or held
back, per canary) is recorded with it. After every run ``bank.monitor(config, apply=True)``
decides; a decision is written as a version by ``monitor`` and the skill stops being a canary
(a promoted skill is then shown to every run it is eligible for; a rejected one is retired).

The log has one JSON line per run: index, template, task id, trajectory id, seconds, success,
the verifier's reasons, each canary's arm in the run (``shown``, ``held`` or ``-`` when not
eligible or no longer a canary), and every decision taken after it with the monitor's evidence.
The summary (``<out>.summary.json``) has the per-skill counts shown and held back (from the
bank's exposure record, the monitor's own reading), each decision with the run index it came
at, or "undecided after N runs".

``--fake`` replaces llama.cpp by a scripted model that reads its system message: with the
helps skill's block it replays the template's reference run, with the hurts skill's block it
answers with a 12-hour time, and without a skill block it fails a ``shop`` request and replays a
``calendar`` one (the calibration's unguided outcomes). It tests the plumbing, nothing about a
model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, SystemMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402

FAMILY = "small"
HELPS_TEMPLATES = ("small.shop.refund", "small.shop.bare_number")
HURTS_TEMPLATE = "small.calendar.time_24h"
CYCLE = ("small.shop.refund", HURTS_TEMPLATE, "small.shop.bare_number", HURTS_TEMPLATE)
HELPS = "refund-check-first"
HURTS = "event-time-12h"
HURTS_WHEN = "Adding an event to the calendar at a time like 3pm."
HURTS_HINT = ("create_event wants the date as YYYY-MM-DD and the time in 12-hour form with am or pm. "
              "Example: 'Friday 12 March at 3pm' -> create_event(title=..., date='2027-03-12', time='3:00 PM').")
EXPOSURE = 0.5


# ------------------------------------------------------------------------------- the bank


def _tools_of(template_id: str, seed: int) -> tuple[str, ...]:
    from skillbank_harness import envs

    return envs.generate_tasks([FAMILY], per_template=1, seed=seed, templates=[template_id])[0].tools


def make_bank(path: Path, seed: int) -> Any:
    """A fresh bank at ``path`` with the two skills, each put into canary."""
    from oracle_hints import ORACLE
    from oracle_lessons import ORACLE_LESSONS
    from skillbank.bank import SkillBank
    from skillbank.lessons import Lesson, LessonKind
    from skillbank.live._canary import start_canary

    bank = SkillBank.open(path, embedder="hash")
    refund, bare = (ORACLE[t] for t in HELPS_TEMPLATES)
    helps = bank.add_skill(
        name=HELPS, description=f"{refund.when} {bare.when}", kind="procedure", status="candidate",
        allow_unsafe=True, toolset=_tools_of(HELPS_TEMPLATES[0], seed),
        lessons=(Lesson(kind=LessonKind.guidance, text=refund.hint),
                 Lesson(kind=LessonKind.guidance, text=bare.hint),
                 *ORACLE_LESSONS[HELPS_TEMPLATES[0]], *ORACLE_LESSONS[HELPS_TEMPLATES[1]]))
    hurts = bank.add_skill(
        name=HURTS, description=HURTS_WHEN, kind="procedure", status="candidate", allow_unsafe=True,
        tools=("create_event",), toolset=_tools_of(HURTS_TEMPLATE, seed),
        lessons=(Lesson(kind=LessonKind.guidance, text=HURTS_HINT),))
    for skill in (helps, hurts):
        start_canary(bank.skills, skill.id)
    return bank


# ------------------------------------------------------------------------------- the fake model


class ScriptedModel(BaseChatModel):
    """A stand-in for the local model (``--fake``): replays ``task``'s reference run or a wrong
    one, chosen by what the system message holds (see the module docstring)."""

    task: Any = None

    @property
    def _llm_type(self) -> str:
        return "scripted-live"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        return self

    def _plan(self, system: str) -> list[AIMessage]:
        from skillbank_harness.envs.runner import ReferenceModel

        task = self.task
        good = ReferenceModel.for_task(task).responses
        if "12-hour form" in system:
            return [AIMessage(content="", tool_calls=[{"name": "create_event", "id": "bad_0", "type": "tool_call",
                                                        "args": {"title": "x", "date": "2027-03-12",
                                                                 "time": "3:00 PM"}}]),
                    AIMessage(content="Done.")]
        if "check_refund_eligibility" in system or task.template == HURTS_TEMPLATE:
            return list(good)
        return [AIMessage(content="I cannot find that order.")]

    def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        system = "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
        plan = self._plan(system)
        turn = sum(isinstance(m, AIMessage) for m in messages)
        reply = plan[min(turn, len(plan) - 1)] if turn < len(plan) else AIMessage(content="Done.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


# ------------------------------------------------------------------------------- the stream


def stream_tasks(runs: int, seed: int) -> list[Any]:
    """The ``runs`` tasks of the stream, in order: ``CYCLE`` over fresh seeded instances."""
    from skillbank_harness import envs

    per = {t: CYCLE.count(t) for t in CYCLE}
    need = max(-(-runs * n // len(CYCLE)) for n in per.values()) + 1
    pools: dict[str, list] = {t: [] for t in per}
    for task in envs.generate_tasks([FAMILY], per_template=need, seed=seed, templates=list(per)):
        pools[task.template].append(task)
    used = {t: 0 for t in per}
    out = []
    for i in range(runs):
        template_id = CYCLE[i % len(CYCLE)]
        out.append(pools[template_id][used[template_id]])
        used[template_id] += 1
    return out


def _with_env_kept(task: Any, holder: list) -> Any:
    """``task`` whose environment, once ``run_task`` makes it, is kept in ``holder`` for the verifier."""
    import dataclasses

    factory = task._factory

    def make() -> Any:
        env = factory()
        holder.append(env)
        return env

    return dataclasses.replace(task, _factory=make)


def one_run(bank: Any, task: Any, model: Any, config: Any) -> dict[str, Any]:
    """Run ``task`` once with the bank's middleware; the task's verifier labels the recording."""
    from skillbank.adapters.langchain import SkillBankMiddleware
    from skillbank_harness import envs
    from skillbank_harness.envs.base import final_answer

    holder: list = []
    kept = _with_env_kept(task, holder)

    def verifier(state: Any) -> bool:
        messages = list((state or {}).get("messages", []))
        return kept.verify(holder[-1], final_answer(messages), messages)

    middleware = SkillBankMiddleware(bank, live=config, verifier=verifier)
    t0 = time.perf_counter()
    result = envs.run_task(kept, model, middleware=[middleware])
    seconds = time.perf_counter() - t0
    return {"trajectory": middleware.recording_middleware.last_trajectory_id, "seconds": round(seconds, 2),
            "success": bool(result.success),
            "reasons": task.explain(result.env, result.final_answer, result.messages)[:4],
            "answer": result.final_answer[:200]}


def _arms(bank: Any, run_id: str | None, ids: dict[str, str]) -> dict[str, str]:
    rows = {r.exposure.skill_id: r.exposure.arm for r in bank.exposures.runs(list(ids.values()))
            if r.exposure.run_id == run_id} if run_id else {}
    return {name: (rows[sid].value if hasattr(rows[sid], "value") else str(rows[sid])) if sid in rows else "-"
            for name, sid in ids.items()}


def summarise(bank: Any, records: list[dict], ids: dict[str, str], config: Any) -> dict[str, Any]:
    """Per skill: runs shown and held back with their successes (the bank's exposure record), and
    the decisions with the run index each came at."""
    from skillbank.live._effect import tally_runs

    tallies = tally_runs(bank.exposures.runs(list(ids.values())))
    skills = {}
    for name, sid in ids.items():
        t = tallies.get(sid)
        decided = [{"run": r["run"], **d} for r in records for d in r["decisions"] if d["skill"] == name]
        skill = bank.skills.get(sid)
        arms = {arm: {"runs": getattr(t.overall, arm).labelled, "successes": getattr(t.overall, arm).successes}
                if t else {"runs": 0, "successes": 0} for arm in ("shown", "held")}
        skills[name] = {"skill_id": sid, "status": skill.status.value, "tags": list(skill.content.tags),
                        **arms, "interval": (t.overall.interval(config.alpha).as_dict() if t else None),
                        "decisions": decided or f"undecided after {len(records)} runs"}
    return {"runs": len(records), "successes": sum(r["success"] for r in records),
            "seconds": round(sum(r["seconds"] for r in records), 1), "skills": skills}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1.5b", choices=("1.5b", "0.5b"))
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: its own)")
    parser.add_argument("--out", type=Path, default=None,
                        help="the JSONL log (default benchmarks/runs/live_real_model_<size>_s<seed>.jsonl)")
    parser.add_argument("--fake", action="store_true", help="a scripted model instead of llama.cpp")
    args = parser.parse_args(argv)

    from skillbank.bank import SkillBank
    from skillbank.consistency._trials import trial_seed
    from skillbank.live._config import LiveConfig

    tag = "fake" if args.fake else args.size.replace(".", "p")
    out = args.out or ROOT / "benchmarks" / "runs" / f"live_real_model_{tag}_s{args.seed}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    bank_path = out.with_suffix(".bank")
    summary_path = out.with_suffix(".summary.json")
    config = LiveConfig(holdout=0.0, canary_exposure=EXPOSURE, salt=f"live-real-model-s{args.seed}")

    records = [json.loads(line) for line in out.open()] if out.exists() else []
    if records and not bank_path.exists():
        raise SystemExit(f"{out} has {len(records)} runs but its bank {bank_path} is gone: start a new --out")
    if not records and bank_path.exists():
        raise SystemExit(f"{bank_path} exists without a log: remove it or start a new --out")
    bank = SkillBank.open(bank_path, embedder="hash") if records else make_bank(bank_path, args.seed)
    ids = {name: bank.skills.get(name).id for name in (HELPS, HURTS)}
    tasks = stream_tasks(args.runs, args.seed)
    model = None
    if not args.fake:
        from bench_real_model import _model

        model = _model(args.size, args.threads)
    print(f"{len(records)} runs on record; running {max(0, args.runs - len(records))} more -> {out}", flush=True)
    with out.open("a") as log:
        for i in range(len(records), args.runs):
            task = tasks[i]
            run_model = (ScriptedModel(task=task) if args.fake
                         else model.with_seed(trial_seed(task.id, 0, args.seed)))
            run = one_run(bank, task, run_model, config)
            report = bank.monitor(config, apply=True)
            names = {sid: name for name, sid in ids.items()}
            decisions = [{"skill": names.get(s.skill.id, s.skill.name), "action": s.decision.action.value,
                          "applied": s.applied, "reason": s.decision.reason, "evidence": s.decision.evidence}
                         for s in report.skills if s.decision is not None]
            record = {"run": i, "template": task.template, "task": task.id, **run,
                      "arms": _arms(bank, run["trajectory"], ids), "decisions": decisions}
            log.write(json.dumps(record) + "\n")
            log.flush()
            records.append(record)
            print(f"{i:4d} {task.template:26s} {'ok  ' if run['success'] else 'FAIL'} {run['seconds']:6.1f}s "
                  f"arms {record['arms']}" + "".join(f"  -> {d['skill']}: {d['action']}" for d in decisions),
                  flush=True)
    summary = {"command": " ".join(sys.argv), "size": "fake" if args.fake else args.size, "seed": args.seed,
               "exposure": EXPOSURE, "cycle": list(CYCLE), "log": str(out), "bank": str(bank_path),
               **summarise(bank, records, ids, config)}
    summary_path.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: summary[k] for k in ("runs", "successes", "skills")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
