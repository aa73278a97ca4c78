"""``evolve`` and ``Gate``: whole configs plus a few explicit, typed keywords, each option given one way."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from typer.testing import CliRunner

from skillbank.bank import SkillBank
from skillbank.cli import app
from skillbank.evolution import EvolutionConfig, GateConfig, evolve
from skillbank.evolution import round as round_mod
from skillbank.evolution.gate import Gate
from skillbank.evolution.report import EvolutionReport
from test_evolution_support import refund


def check(skill, task_ids) -> float:
    return 0.5


# Every explicit keyword, a value other than its default, and the config it belongs to.
KEYWORDS = [
    ("validate", check, "gate"),
    ("auto_promote", True, "gate"),
    ("promote_policy", "all", "gate"),
    ("eval_budget", 7.0, "gate"),
    ("min_support", 4, "config"),
    ("min_general_tools", 0, "config"),
    ("examples_per_lesson", 3, "config"),
    ("max_active", 12, "config"),
    ("max_rendered_tokens", 900, "config"),
]


class Seen:
    """What a round was built with: ``evolve``'s stages replaced by recording its arguments."""

    config: EvolutionConfig | None = None
    gate: GateConfig | None = None


@pytest.fixture
def seen(monkeypatch):
    seen = Seen()

    class Round:
        def __init__(self, bank, distiller, config, gate, dry_run, since):
            seen.config, seen.gate = config, gate.config

        def run(self):
            return EvolutionReport(round=1, dry_run=True, distiller="rule")

    monkeypatch.setattr(round_mod, "_Round", Round)
    return seen


@pytest.mark.parametrize("callable_", [evolve, Gate], ids=["evolve", "Gate"])
def test_every_option_is_a_named_typed_parameter_with_a_default(callable_):
    params = inspect.signature(callable_).parameters.values()
    assert not [p.name for p in params if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    for p in params:
        if p.kind is p.KEYWORD_ONLY:
            assert p.annotation is not p.empty and p.default is not p.empty, p.name


def test_the_keywords_are_fields_of_their_configs():
    for name, _, where in KEYWORDS:
        kind = GateConfig if where == "gate" else EvolutionConfig
        assert name in {f.name for f in dataclasses.fields(kind)}, name
    assert {name for name, _, _ in KEYWORDS} <= set(inspect.signature(evolve).parameters)


@pytest.mark.parametrize("name, value, where", KEYWORDS, ids=[k[0] for k in KEYWORDS])
def test_a_keyword_lands_in_its_config_and_nothing_else_moves(bank, seen, name, value, where):
    evolve(bank, **{name: value})
    assert getattr(seen.gate if where == "gate" else seen.config, name) == value
    changed_config = EvolutionConfig(**({name: value} if where == "config" else {}))
    changed_gate = GateConfig(**({name: value} if where == "gate" else {}))
    assert (seen.config, seen.gate) == (changed_config, changed_gate)


def test_whole_configs_are_used_as_given(bank, seen):
    config, gate = EvolutionConfig(min_support=5, harm_min_uses=3), GateConfig(min_gain=0.2, holdout=1)
    evolve(bank, config=config, gate=gate)
    assert seen.config is config and seen.gate is gate


def test_a_keyword_beside_the_other_config_is_applied(bank, seen):
    evolve(bank, config=EvolutionConfig(harm_min_uses=3), promote_policy="all")
    assert seen.config == EvolutionConfig(harm_min_uses=3) and seen.gate == GateConfig(promote_policy="all")
    evolve(bank, gate=GateConfig(min_gain=0.2), min_support=4)
    assert seen.config == EvolutionConfig(min_support=4) and seen.gate == GateConfig(min_gain=0.2)


@pytest.mark.parametrize("build, unknown", [
    (lambda bank: evolve(bank, min_gain=0.2), "min_gain"),  # GateConfig's: gate=GateConfig(min_gain=...)
    (lambda bank: evolve(bank, harm_min_uses=3), "harm_min_uses"),  # config=EvolutionConfig(...)
    (lambda bank: evolve(bank, no_such_setting=1), "no_such_setting"),
    (lambda bank: Gate(auto_promote=True), "auto_promote"),
    (lambda bank: Gate(GateConfig(), promote_policy="all"), "promote_policy"),
])
def test_an_unknown_keyword_is_a_type_error_that_names_it(bank, build, unknown):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{unknown}'"):
        build(bank)


@pytest.mark.parametrize("build, given, where", [
    (lambda bank: evolve(bank, gate=GateConfig(auto_promote=True), auto_promote=True),
     "auto_promote= and gate=", r"gate=GateConfig\(\.\.\., auto_promote=\.\.\.\)"),
    (lambda bank: evolve(bank, gate=GateConfig(), validate=check, eval_budget=3),
     "validate=, eval_budget= and gate=", r"gate=GateConfig\(\.\.\., validate=\.\.\., eval_budget=\.\.\.\)"),
    (lambda bank: evolve(bank, config=EvolutionConfig(min_support=3), min_support=4),
     "min_support= and config=", r"config=EvolutionConfig\(\.\.\., min_support=\.\.\.\)"),
    (lambda bank: evolve(bank, config=EvolutionConfig(), max_active=5),
     "max_active= and config=", r"config=EvolutionConfig\(\.\.\., max_active=\.\.\.\)"),
])
def test_a_keyword_beside_the_config_it_belongs_to_is_an_error(bank, build, given, where):
    with pytest.raises(TypeError, match=f"evolve got {given}: give each option one way, here on the config "
                                        f"\\({where}\\)"):
        build(bank)


def test_a_refused_call_reads_and_writes_nothing(bank):
    for i in range(3):
        bank.trajectories.save(refund(i))
    with pytest.raises(TypeError):
        evolve(bank, gate=GateConfig(), promote_policy="all")
    assert bank.rounds.current() == 0 and bank.list_skills() == []
    report = evolve(bank, promote_policy="all")  # the runs are still there for the next round
    assert report.trajectories == 3 and [c.status for c in report.changes] == ["active"]


def test_the_cli_sets_its_options_on_the_configs(tmp_path, monkeypatch, seen):
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    SkillBank.open(tmp_path / "bank", embedder="hash").close()
    result = CliRunner().invoke(app, ["evolve", "-d", str(tmp_path / "bank"), "--min-support", "3",
                                      "--include-heldout", "--promote-policy", "all", "--eval-budget", "5"])
    assert result.exit_code == 0, result.output
    assert seen.config == EvolutionConfig(min_support=3, include_heldout=True)
    assert seen.gate == GateConfig(promote_policy="all", eval_budget=5.0)
