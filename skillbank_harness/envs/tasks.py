"""Seeded task generation and train/held-out splits."""

from __future__ import annotations

import functools
import hashlib
import random
from typing import Iterable, Literal, Sequence

from skillbank import Lesson, LessonKind
from skillbank_harness.envs import families as _families  # noqa: F401  (registers the templates)
from skillbank_harness.envs.base import TEMPLATES, Environment, Spec, Task, Template

__all__ = ["generate_tasks", "split_tasks", "take_spread", "list_templates", "FAMILY_NAMES",
           "EXTRA_FAMILY_NAMES", "TASK_TYPES"]

FAMILY_NAMES = tuple(_families.FAMILIES)
"""The default families: what the demo and ``generate_tasks()`` use."""
EXTRA_FAMILY_NAMES = tuple(_families.EXTRA_FAMILIES)
"""Opt-in families, used only when named (``simple``: a tier a small real model can play)."""
TASK_TYPES = ("base", "capability", "disambiguation")


def _derive(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()
    return int(digest[:15], 16)


def list_templates(
    families: Iterable[str] | None = None, types: Iterable[str] | None = None
) -> list[Template]:
    fams = set(families) if families is not None else set(FAMILY_NAMES)
    kinds = set(types) if types is not None else None
    unknown = fams - set(FAMILY_NAMES) - set(EXTRA_FAMILY_NAMES)
    if unknown:
        raise ValueError(f"unknown families {sorted(unknown)}; choose from "
                         f"{list(FAMILY_NAMES + EXTRA_FAMILY_NAMES)}")
    return [
        t for t in sorted(TEMPLATES.values(), key=lambda t: t.id)
        if t.family in fams and (kinds is None or t.type in kinds)
    ]


def _make_env(env_cls: type[Environment], spec: Spec) -> Environment:
    return env_cls(spec.state, removed=spec.removed, removed_params=spec.removed_params, reply=spec.reply)


def generate_tasks(
    families: Iterable[str] | None = None,
    *,
    per_template: int = 5,
    seed: int = 0,
    types: Iterable[str] | None = None,
    budget: bool = True,
    templates: Iterable[str] | None = None,
) -> list[Task]:
    """``per_template`` seeded instances of every matching template (and of its budget variant).

    The same arguments always give the same tasks. Entities (ids, names, temperatures, dates)
    come from an RNG seeded by ``(seed, template, instance, variant)``, so instances differ and
    a skill cannot memorise answers. A budget variant allows one tool call more than the
    scripted correct run needs; ``budget=False`` leaves every budget variant out (and with it
    the templates that exist only as one).

    ``families=None`` means the default families (:data:`FAMILY_NAMES`); opt-in families
    (:data:`EXTRA_FAMILY_NAMES`, e.g. ``simple``) come only when named, or when ``templates``
    names their templates.
    """
    wanted = set(templates) if templates is not None else None
    if families is None and wanted is not None:  # templates named by id: from any family
        families = FAMILY_NAMES + EXTRA_FAMILY_NAMES
    out: list[Task] = []
    for tpl in list_templates(families, types):
        if wanted is not None and tpl.id not in wanted:
            continue
        for instance in range(per_template):
            for variant in (v for v in tpl.variants if budget or not v):
                task_seed = _derive(seed, tpl.id, instance, variant)
                spec = tpl.build(random.Random(task_seed))
                n_calls = sum(1 for s in spec.reference if s.kind == "call")
                env_cls = tpl.env_cls
                out.append(Task(
                    id=f"{tpl.id}{'+budget' if variant else ''}#{seed}.{instance}",
                    family=tpl.family,
                    template=tpl.id,
                    type=tpl.type,
                    budget=variant,
                    split="heldout" if tpl.heldout else "train",
                    input=spec.input,
                    seed=task_seed,
                    instance=instance,
                    max_tool_calls=n_calls + 1 if variant else None,
                    system_prompt=spec.system_prompt or env_cls.system_prompt,
                    tools=tuple(n for n in env_cls.TOOLDEFS if n not in spec.removed),
                    hints=tuple(spec.hints) + ((Lesson(kind=LessonKind.budget, budget=n_calls + 1),) if variant else ()),
                    reference=tuple(spec.reference),
                    _factory=functools.partial(_make_env, env_cls, spec),
                    _check=spec.check,
                ))
    return out


def split_tasks(
    tasks: Sequence[Task],
    by: Literal["template", "seed", "family", "template+seed"] = "template",
    *,
    heldout_fraction: float = 0.3,
    heldout_families: Iterable[str] = (),
) -> tuple[list[Task], list[Task]]:
    """Split into ``(train, heldout)``.

    * ``template``: each family holds out one template per task type (``Task.split``), so
      held-out tasks are phrasings and procedures the skills never saw.
    * ``seed``: the last ``heldout_fraction`` of each template's instances are held out (same
      templates, fresh entities).
    * ``template+seed``: train is train templates with train seeds; everything else is held out.
    * ``family``: the families in ``heldout_families`` are held out.
    """
    if by == "family":
        fams = set(heldout_families)
        if not fams:
            raise ValueError("split by family needs heldout_families, e.g. ['calendar']")
        heldout = [t.family in fams for t in tasks]
    else:
        if not 0 < heldout_fraction < 1:
            raise ValueError("heldout_fraction must be between 0 and 1")
        n_instances: dict[str, int] = {}
        for t in tasks:
            n_instances[t.template] = max(n_instances.get(t.template, 0), t.instance + 1)

        def seed_out(t: Task) -> bool:
            n = n_instances[t.template]
            cut = n - max(1, round(n * heldout_fraction)) if n > 1 else 1
            return t.instance >= cut

        if by == "template":
            heldout = [t.split == "heldout" for t in tasks]
        elif by == "seed":
            heldout = [seed_out(t) for t in tasks]
        elif by == "template+seed":
            heldout = [t.split == "heldout" or seed_out(t) for t in tasks]
        else:
            raise ValueError(f"unknown split {by!r}: use template, seed, template+seed or family")
    train = [t for t, h in zip(tasks, heldout) if not h]
    held = [t for t, h in zip(tasks, heldout) if h]
    return train, held


def take_spread(tasks: list, n: int | None) -> list:
    """The first ``n`` tasks, round-robin over templates, so a cap on task count keeps variety."""
    if n is None or n >= len(tasks):
        return list(tasks)
    by_template: dict[str, list] = {}
    for task in tasks:
        by_template.setdefault(task.template, []).append(task)
    out: list = []
    while len(out) < n:
        for group in by_template.values():
            if group and len(out) < n:
                out.append(group.pop(0))
    return out
