"""Every threshold of a round in one place, with the reason for its default (frozen: a round
reads one config from start to end; ``dataclasses.replace`` makes a changed copy)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EvolutionConfig:
    """The thresholds an evolution round reads (the reason for each default is beside it).

    Attributes:
        include_heldout: Also learn from runs labelled with a held-out split (heldout, test, ...).
        min_support: Trajectories that must show a pattern before a new skill is proposed.
        guard_min_support: Failures at one limit a guard needs.
        min_general_tools: Different tools a lesson must be learned for before it becomes one
            general skill; ``0``: no general skills.
        near_budget_share: The share of a known budget at which a success "came close" to it.
        min_procedure_steps: Distinct steps an induced procedure needs at least.
        cluster_threshold: Cosine similarity at which two task templates share a cluster.
        max_embed: Distinct task templates embedded per round (the rest grouped by tool signature).
        dedupe_threshold: Cosine similarity to an existing skill at which a new one is merged in.
        structural_threshold: Share of directives and tools shared with an existing skill at
            which a new one is merged in.
        harm_min_uses: Labelled runs with a skill's current version the harm rule needs.
        harm_min_baseline: Comparable labelled runs without it the harm rule needs.
        harm_margin: How far (absolute success rate) the runs without it must beat those with it.
        harm_z: The one-sided two-proportion z the harm rule needs (1.645: about 95 %).
        max_active: Active skills the bank may hold after a round.
        max_rendered_tokens: Rendered tokens the active skills may total after a round.
        max_retire_fraction: The share of the round's starting active skills it may retire.
        max_body_chars: A learned skill's body, in characters at most.
        max_description_chars: A learned skill's description, in characters at most.
        split_chars: A body longer than this (in characters) is a reason to split a skill.
        max_bullets: Contrast bullets (mistakes to avoid) a rule-written skill holds at most.
        learn_stated_values: Learn ``stated_time`` / ``stated_date`` lessons (English only).
        exploit_min_peers: Comparable successes needed before a short success looks suspicious.
        examples_per_lesson: Worked examples kept on each procedure or check-first lesson the
            rule distiller writes; ``0``: none.
        max_evidence_runs: Runs the LLM distiller is shown per call (successes and failures).
        quarantine_flagged: Quarantine candidates the lint flags, rather than dropping them.
    """

    # Step 1: runs labelled with a held-out split (split=heldout, test, ...) are what a bank is
    # measured on; learning from them would leak the test into the skills. Only an explicit
    # ask (`skillbank evolve --include-heldout`) reads them.
    include_heldout: bool = False
    # Step 5: a new skill needs the same pattern in this many trajectories (the default).
    min_support: int = 2
    # Step 4: the failures that hit one limit a guard needs. Two: a limit event is an explicit
    # observation, but one run can misread it (issue 29's real traces: "`get_accounts` has no
    # `account_id` parameter" from the one run that invented the argument; "retry
    # `set_thermostat` at most once" from a lock request that called the thermostat), and every
    # lesson needs support from more than one run.
    guard_min_support: int = 2
    # Step 6: a lesson (a check, a missing tool, an unknown field, asking first) learned for this
    # many different tools becomes one general skill; two is the least that shows a pattern
    # rather than a fact about one tool, and the gate still has to see it help. 0 turns it off.
    min_general_tools: int = 2
    # Step 2: a success that used this share of a known budget "came close" to it.
    near_budget_share: float = 0.8
    # Step 5: a one-step "method" (call `search`) teaches nothing a tool list does not; an
    # induced procedure needs at least this many distinct steps (different tools, or one tool
    # called with differently shaped arguments: `act` with `open <value_1>`, then `take ...`).
    min_procedure_steps: int = 2
    # Step 5: cosine similarity at which two task templates belong to one cluster, and how many
    # distinct templates are embedded per round (the rest are grouped by tool signature).
    cluster_threshold: float = 0.75
    max_embed: int = 4000
    # Step 7: a new skill at least this close (cosine of name+description+tools embeddings) to an
    # existing one, or sharing this share of directives and tools, is merged into it.
    dedupe_threshold: float = 0.88
    structural_threshold: float = 0.8
    # Step 3: the harmful-skill rule (see _harm.py).
    harm_min_uses: int = 8
    harm_min_baseline: int = 8
    harm_margin: float = 0.2
    harm_z: float = 1.645
    # Steps 8 and 11: bank budget.
    max_active: int = 100
    max_rendered_tokens: int = 40_000
    max_retire_fraction: float = 0.2
    # Step 7: size caps for a learned skill (well under the model's hard caps: it is injected
    # into every relevant turn).
    max_body_chars: int = 4000
    max_description_chars: int = 600
    # Step 3: a body longer than this, or successes that fall into two distinct methods, split.
    split_chars: int = 3000
    max_bullets: int = 8
    # Learn stated_time / stated_date lessons: a tool parameter successes passed as the time or
    # date the user said. Off by default: the reading of the user's words is an English grammar.
    learn_stated_values: bool = False
    # Exploit detection: comparable successes needed before a short success looks suspicious.
    exploit_min_peers: int = 3
    # Step 5: worked examples (_examples.py) kept on each procedure or check_first lesson the rule
    # distiller writes, for the injector to show (InjectionConfig.examples); 0 writes none.
    examples_per_lesson: int = 0
    # LLM distiller: runs shown per call (successes and failures, balanced).
    max_evidence_runs: int = 8
    # Send lint-flagged (injection-like) candidates to quarantine rather than dropping them.
    quarantine_flagged: bool = True
