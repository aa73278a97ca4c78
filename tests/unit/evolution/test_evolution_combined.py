"""Two distillers on the same evidence: the rule distiller and an LLM distiller (a fake chat
model), proposals pooled, each version authored by the part that wrote it."""

from __future__ import annotations

import pytest

from skillbank.adapters.testing import ScriptedChatModel
from skillbank.evolution import CombinedDistiller, LLMDistiller, RuleDistiller, evolve
from skillbank._provenance import Source, text_source
from test_evolution_llm import new_skill, revision, router, used_skill_world
from test_evolution_support import window


def _authors(bank, report):
    out = {}
    for change in report.changes:
        skill_id = change.candidate_id or change.skill_id
        if skill_id:
            out[change.skill] = bank.history(skill_id)[-1].author
    return out


def test_both_parts_propose_and_each_version_keeps_its_writer(bank):
    used_skill_world(bank)
    for t in [window(i) for i in range(3)]:
        bank.trajectories.save(t)
    model = router(revision())
    alone = evolve(bank, distiller="rule", dry_run=True)
    report = evolve(bank, distiller=["rule", model])

    assert isinstance(report.distiller, str) and report.distiller.startswith("evolution:rule+llm:")
    assert report.usage.calls == len(model.received) >= 1  # one count for the round
    authors = _authors(bank, report)
    # the refund skill's edit pools the rule's and the model's lessons: model text, so gated as such
    update = next(c for c in report.changes if c.kind == "update")
    assert authors[update.skill].startswith("evolution:llm")
    draft = bank.get_skill(update.candidate_id)
    assert text_source(bank.history(draft.id)).source == Source.llm_distiller
    texts = {lesson.text for lesson in draft.content.all_lessons if lesson.text}
    assert "Refund only eligible orders." in texts  # the model's lesson
    assert "Look the order up, then refund it." in texts  # the rule's (the old body, kept)
    # what the rule distiller proposes alone it still proposes beside the model, as rule text
    assert {c.skill for c in alone.changes} == {c.skill for c in report.changes}
    guard = next(c for c in report.changes if c.origin == "guard")
    assert text_source(bank.history(guard.candidate_id or guard.skill_id)).source == Source.rule_distiller


def test_a_part_that_fails_loses_only_its_own_proposals(bank):
    used_skill_world(bank)

    def broken(messages):
        raise RuntimeError("the model server went away")

    alone = evolve(bank, distiller="rule", dry_run=True)
    report = evolve(bank, distiller=CombinedDistiller(RuleDistiller(), LLMDistiller(ScriptedChatModel([broken]))),
                    dry_run=True)
    assert [c.skill for c in report.changes] == [c.skill for c in alone.changes]
    assert any(f.startswith("llm:") and "the model server went away" in f for f in report.usage.failures)


def test_one_part_is_not_a_combination():
    with pytest.raises(ValueError, match="at least two"):
        CombinedDistiller(RuleDistiller())
