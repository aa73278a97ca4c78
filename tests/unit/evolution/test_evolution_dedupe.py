"""De-duplication (``skillbank.evolution._dedupe``): look-alike skills with different methods stay
separate; one method under other words is a duplicate."""

from __future__ import annotations

from skillbank.evolution._dedupe import Deduper, methods_conflict, structural_similarity
from skillbank.lessons import Lesson, LessonKind, MethodStep
from skillbank.models import SkillContent


def method(*steps, **extra):
    """A procedure skill's content; a step is a tool or ``(tool, {param: shape})``."""
    parsed = tuple(MethodStep(tool=s) if isinstance(s, str) else MethodStep(tool=s[0], args=s[1])
                   for s in steps)
    tools = tuple(dict.fromkeys(step.tool for step in parsed))
    fields = {"name": "refund-damaged-order", "description": "Refund an order that arrived damaged",
              "tools": tools, **extra}
    return SkillContent(lessons=(Lesson(kind=LessonKind.procedure, steps=parsed),), **fields)


CHECKED = method("find_order", "check_refund_policy", "issue_refund")


def test_methods_conflict_on_tools_order_and_argument_shapes():
    assert not methods_conflict(CHECKED, method("find_order", "check_refund_policy", "issue_refund"))
    assert methods_conflict(CHECKED, method("find_order", "issue_refund"))  # a step less
    assert methods_conflict(CHECKED, method("check_refund_policy", "find_order", "issue_refund"))  # order
    # one side saying what the arguments look like is the same method; two different shapes are not
    shaped = method(("find_order", {"order_id": "<order_id>"}), "check_refund_policy", "issue_refund")
    assert not methods_conflict(CHECKED, shaped)
    other = method(("find_order", {"order_id": "latest"}), "check_refund_policy", "issue_refund")
    assert methods_conflict(shaped, other)
    # a skill without a method conflicts with none
    guidance = SkillContent(name="be-kind", description="Refund an order that arrived damaged",
                            body="Apologise first.")
    assert not methods_conflict(CHECKED, guidance) and not methods_conflict(guidance, CHECKED)


def test_structural_similarity_compares_lessons_and_tools_not_words():
    reworded = method("find_order", "check_refund_policy", "issue_refund", name="returns-desk",
                      description="Handle a customer's broken parcel")
    assert structural_similarity(CHECKED, reworded) == 1.0
    shorter = method("find_order", "issue_refund")
    # features: {procedure, 3 tools} vs {other procedure, 2 tools}: 2 shared of 5
    assert structural_similarity(CHECKED, shorter) == 2 / 5
    guidance = SkillContent(name="g", description="d", body="free text", tools=CHECKED.tools)
    assert structural_similarity(CHECKED, guidance) == 0.0  # free guidance: the embeddings decide


def test_look_alike_skills_with_different_methods_stay_separate(bank):
    existing = bank.add_skill(CHECKED.name, CHECKED.description, lessons=CHECKED.lessons,
                              tools=CHECKED.tools)
    deduper = Deduper(bank, [existing])
    # Same description, a different method: however alike they read, not a duplicate.
    look_alike = method("find_order", "issue_refund", name="refund-damaged-order-quickly")
    assert float(deduper._embed([look_alike])[0] @ deduper._embed([CHECKED])[0]) >= deduper.threshold
    assert deduper.match(look_alike) is None
    # The same method in other words: a structural duplicate of the existing skill.
    reworded = method("find_order", "check_refund_policy", "issue_refund", name="returns-desk",
                      description="Handle a customer's broken parcel")
    found = deduper.match(reworded)
    assert (found.ref, found.how, found.score) == (existing.id, "structural", 1.0)
    # And among skills already in the bank: only the same-method pair is reported.
    a = bank.add_skill(look_alike.name, look_alike.description, lessons=look_alike.lessons,
                       tools=look_alike.tools)
    b = bank.add_skill(reworded.name, reworded.description, lessons=reworded.lessons, tools=reworded.tools)
    pairs = Deduper(bank, [existing, a, b]).duplicate_pairs({existing.id, a.id, b.id})
    assert [(x, y, how) for x, y, _, how in pairs] == [(existing.id, b.id, "structural")]
