import os

# Never reach a model hub: every model skillbank loads ships inside a package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import pytest  # noqa: E402

from skillbank import SkillBank  # noqa: E402


@pytest.fixture
def bank(tmp_path):
    """A real bank (SQLite file + Chroma directory) with the deterministic hash embedder."""
    b = SkillBank.open(tmp_path / "bank", embedder="hash")
    yield b
    b.close()


def add_sample_skills(bank):
    """A few distinct skills used across tests."""
    return [
        bank.add_skill(
            name="decline-missing-tool",
            description="When a needed tool is not available, such as the window tool",
            body="Do the possible part, decline the rest and name the missing tool.",
            kind="guard", tools=["open_window"], tags=["car"],
        ),
        bank.add_skill(
            name="check-battery-first",
            description="Before starting climate control, check the battery level",
            body="Always call `get_battery` before `start_climate`.",
            kind="policy", tools=["get_battery", "start_climate"], tags=["car"],
        ),
        bank.add_skill(
            name="refund-after-eligibility",
            description="Refund an order only after checking refund eligibility",
            body="Look up the order, check eligibility, then refund.",
            kind="procedure", tools=["lookup_order", "check_eligibility", "refund"], tags=["retail"],
        ),
    ]


def teaches(obj, kind, **fields):
    """Whether a skill (or its content) holds a lesson of ``kind`` with ``fields``; ``tools``
    matches a procedure's tool order (immediate repeats collapsed)."""
    content = getattr(obj, "content", obj)
    for lesson in content.lessons:
        if lesson.kind.value != kind:
            continue
        rest = dict(fields)
        if "tools" in rest:
            order = []
            for step in lesson.steps:
                if not order or order[-1] != step.tool:
                    order.append(step.tool)
            if tuple(order) != tuple(rest.pop("tools")):
                continue
        if all(getattr(lesson, k) == v for k, v in rest.items()):
            return True
    return False


# Lessons in a line, for the tests that hand skills to the simulated policy.
def _lesson(kind, **fields):
    from skillbank.lessons import Lesson, LessonKind

    return Lesson(kind=LessonKind(kind), **fields)


def order(*tools):
    from skillbank.lessons import MethodStep

    return _lesson("procedure", steps=tuple(MethodStep(tool=t) for t in tools))


def check_first(check=None, tool=None):
    return _lesson("check_first", check=check, tool=tool)


def missing_tool(tool=None):
    return _lesson("missing_tool", tool=tool)


def missing_parameter(tool=None, parameter=None):
    return _lesson("missing_parameter", tool=tool, parameter=parameter)


def ask_for(parameter=None, tool=None):
    return _lesson("ask_for", parameter=parameter, tool=tool)


def unknown_field(tool=None, field=None):
    return _lesson("unknown_field", tool=tool, field=field)


def budget(calls):
    return _lesson("budget", budget=calls)
