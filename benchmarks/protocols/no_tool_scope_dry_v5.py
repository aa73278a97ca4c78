"""Dry check, no model: which of protocol v5's measurement requests would a no-tool skill reach
under the scope by labelled neighbours (the injector compares each request with what the skill
says it is for and the requests the bank recorded succeeding without a call, against what each
offered tool is for and the requests recorded succeeding with one), next to v5's scope (the
skill's sentences against the tools' purposes only)? The recorded runs are v5's evidence phase
as its transcripts kept them (60 runs, the without arm, before any skill existed); the skills
are v5's and v4's no-tool lessons as their banks stored them. Run before protocol v6 was
committed; its output is quoted in protocol_v6.json's written_after. v5's requests are past
data; v6 measures on fresh seeds.

    python benchmarks/protocols/no_tool_scope_dry_v5.py
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1]), str(HERE.parents[1] / "tests")]

from langchain_core.messages import HumanMessage  # noqa: E402

from skillbank import SkillBank  # noqa: E402
from skillbank.adapters.injection import SkillInjector  # noqa: E402
from skillbank.adapters._tools import tool_names, tool_purposes  # noqa: E402
from skillbank.lessons import Lesson, LessonKind  # noqa: E402
from skillbank.models import Trajectory  # noqa: E402
from real_model_protocol import unseen_templates  # noqa: E402
from skillbank_harness import envs  # noqa: E402
from skillbank_harness.envs.families.steady import AGAIN, KINDS  # noqa: E402

SKILLS = {  # name -> (description, a tool of the toolset it was learned with)
    "great-forecast-no-tools (v5)": (
        'When the user says something like "great, thanks for the forecast!" and asks for nothing a '
        'tool does.', "get_forecast"),
    "use-no-tools (v4)": (
        'When the user says something like "hi, lovely to be here!" and asks for nothing a tool does.',
        "list_rooms"),
}
V5_MEASUREMENT_SEED = 1626


def evidence_runs() -> list[Trajectory]:
    """v5's evidence phase, as its transcripts kept it."""
    with gzip.open(HERE / "runs" / "consistency_transcripts_v5.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    return [Trajectory.model_validate(r) for r in rows
            if r["bank"] == "evidence" and r["labels"].get("run") == "evidence"]


def main() -> None:
    rows = json.loads((HERE / "consistency_calibration_v2.json").read_text())["rows"]
    evolution = [r["template"] for r in rows if r["measured"]]
    tiers = {"evolution": evolution, "unseen instances": [AGAIN[t] for t in evolution],
             "unseen templates": unseen_templates(5)}
    runs = evidence_runs()
    solved = Counter(any(s.kind == "tool" for s in t.steps) for t in runs if t.outcome and t.outcome.success)
    print(f"recorded: {len(runs)} runs, {solved[True]} succeeded with a call, {solved[False]} without")
    tally: Counter = Counter()
    for name, (description, tool) in SKILLS.items():
        print(f"\n{name}: v5 scope | labelled neighbours")
        with tempfile.TemporaryDirectory() as folder:
            with SkillBank.open(Path(folder) / "bare") as bare, SkillBank.open(Path(folder) / "seen") as seen:
                for bank in (bare, seen):
                    bank.add_skill("no-tools", description, kind="pitfall", author="evolution",
                                   lessons=[Lesson(kind=LessonKind.no_tool)], toolset=[tool])
                for t in runs:
                    seen.trajectories.save(t)
                injectors = SkillInjector(bare, k=5), SkillInjector(seen, k=5)
                for tier, templates in tiers.items():
                    for task in envs.generate_tasks(["steady"], per_template=1, seed=V5_MEASUREMENT_SEED,
                                                    templates=templates):
                        tools = task._factory().tools()
                        got = [bool(i.inject([HumanMessage(task.input)], tools=tool_names(tools),
                                             purposes=tool_purposes(tools)).hits) for i in injectors]
                        small_talk = KINDS[task.template] == "no tool"
                        tally[(name, "v5", small_talk, got[0])] += 1
                        tally[(name, "v6", small_talk, got[1])] += 1
                        marks = " | ".join("in " if g else "out" for g in got)
                        print(f"  {tier:17} {task.template:36} {marks}  {task.input!r}")
        for scope in ("v5", "v6"):
            print(f"  {scope} scope: small talk {tally[(name, scope, True, True)]} of "
                  f"{tally[(name, scope, True, True)] + tally[(name, scope, True, False)]} in; "
                  f"tool requests {tally[(name, scope, False, True)]} of "
                  f"{tally[(name, scope, False, True)] + tally[(name, scope, False, False)]} in")


if __name__ == "__main__":
    main()
