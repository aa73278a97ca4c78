"""Dry check, no model: which of protocol v4's measurement requests would v4's promoted no-tool
skill (`use-no-tools`, its description as the bank stored it) reach under the request scope of
a2d8e2c (the injector compares each request with what the skill says it is for and with what
each offered tool is for)? Run before protocol v5 was committed; its output is quoted in
protocol_v5.json's written_after. v4's requests are past data; v5 measures on fresh seeds.

    python benchmarks/protocols/no_tool_scope_dry_v4.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

from langchain_core.messages import HumanMessage  # noqa: E402

from skillbank import SkillBank  # noqa: E402
from skillbank.adapters.injection import SkillInjector  # noqa: E402
from skillbank.adapters._tools import tool_names, tool_purposes  # noqa: E402
from skillbank.lessons import Lesson, LessonKind  # noqa: E402
from real_model_protocol import unseen_templates  # noqa: E402
from skillbank_harness import envs  # noqa: E402
from skillbank_harness.envs.families.steady import AGAIN  # noqa: E402

V4_DESCRIPTION = 'When the user says something like "hi, lovely to be here!" and asks for nothing a tool does.'
V4_MEASUREMENT_SEED = 1323


def main() -> None:
    rows = json.loads((HERE / "consistency_calibration_v2.json").read_text())["rows"]
    evolution = [r["template"] for r in rows if r["measured"]]
    tiers = {"evolution": evolution, "unseen instances": [AGAIN[t] for t in evolution],
             "unseen templates": unseen_templates(4)}
    with tempfile.TemporaryDirectory() as folder, SkillBank.open(Path(folder) / "bank") as bank:
        bank.add_skill("use-no-tools", V4_DESCRIPTION, kind="pitfall", author="evolution",
                       lessons=[Lesson(kind=LessonKind.no_tool)], toolset=["list_rooms"])
        injector = SkillInjector(bank, k=5)
        for tier, templates in tiers.items():
            for task in envs.generate_tasks(["steady"], per_template=1, seed=V4_MEASUREMENT_SEED,
                                            templates=templates):
                tools = task._factory().tools()
                hits = injector.inject([HumanMessage(task.input)], tools=tool_names(tools),
                                       purposes=tool_purposes(tools)).hits
                print(f"{tier:17} {task.template:36} {'in ' if hits else 'out'} {task.input!r}")


if __name__ == "__main__":
    main()
