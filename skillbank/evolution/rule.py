"""``RuleDistiller``: deterministic, model-free distillation (the offline default).

- **Procedures** come from successful tool-call sequences: the most common sequence (immediate
  repeats collapsed) that at least ``min_support`` successes followed. Literal argument values
  become named placeholders (``<order_id>``), noting where the value came from (the request, or
  an earlier tool's result); only values every run passed and that look like enums stay
  literal.
- **Contrast** of successes and failures gives "common mistakes": a check the successes always
  did first and the failures skipped (``CheckFirst``), a question the successes asked the user
  before an action that the failures did not (``AskFor`` any value of that tool), a step every
  success took and most failures left out, a tool only failures called, repeated identical calls.
- **Guards** come from limit events through templates (see ``guards.py``).
- **Narrowing**: a skill injected into runs that never touched its tools, and failed there, gets
  a "not for" clause in its description.
- **Splits**: successes that follow two methods with disjoint tools, or a body over
  ``split_chars``, split into two skills.

Everything written uses the directive sentences of ``skillbank.directives`` plus short prose.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Any, Sequence

from skillbank import directives as dx
from skillbank.evolution import body as B
from skillbank.evolution.cluster import Cluster
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution.distiller import Distiller, SkillEvidence
from skillbank.evolution.evidence import Run, common_pattern, common_words
from skillbank.evolution.guards import lesson_lines, slug
from skillbank.evolution.proposals import ChangeKind, Proposal
from skillbank.models import SkillContent, SkillKind

_ENUM = re.compile(r"^[a-z][a-z _-]{0,19}$")


def consensus(runs: Sequence[Run]) -> tuple[tuple[str, ...], list[Run]]:
    """The most common non-empty tool sequence among ``runs`` and the runs that followed it."""
    counts = Counter(r.sequence for r in runs if r.sequence)
    if not counts:
        return (), []
    best = max(counts.items(), key=lambda kv: (kv[1], len(kv[0]), kv[0]))[0]
    return best, [r for r in runs if r.sequence == best]


def _first_calls(run: Run, seq: tuple[str, ...]) -> list[Any]:
    """The first call of each block of ``run.sequence`` (which equals ``seq``)."""
    out, last = [], None
    for call in run.calls:
        if call.tool != last:
            out.append(call)
            last = call.tool
    return out[: len(seq)]


def _placeholder(param: str) -> str:
    return "<" + re.sub(r"[^a-z0-9_]+", "_", param.lower()).strip("_") + ">"


def _render_args(seq: tuple[str, ...], runs: Sequence[Run]) -> list[str]:
    """One line per step: the tool, its parameters as placeholders, where values came from."""
    lines = []
    per_run = [(_first_calls(r, seq), r) for r in runs]
    for i, tool in enumerate(seq):
        params: Counter = Counter()
        values: dict[str, list[Any]] = defaultdict(list)
        sources: dict[str, Counter] = defaultdict(Counter)
        for calls, run in per_run:
            if i >= len(calls):
                continue
            for key, value in calls[i].args.items():
                params[key] += 1
                values[key].append(value)
                text = str(value)
                if isinstance(value, (str, int, float)) and not isinstance(value, bool) and len(text) >= 2:
                    if text.lower() in run.task.lower():
                        sources[key]["the request"] += 1
                    else:
                        for earlier in calls[:i]:
                            if earlier.result and text in earlier.result:
                                sources[key][f"`{earlier.tool}`"] += 1
                                break
        shown = []
        for key, n in params.most_common():
            if n * 2 < len(per_run):
                continue
            vals = values[key]
            source = ""
            if sources[key]:
                where, count = sources[key].most_common(1)[0]
                if count * 2 >= len(per_run):
                    source = " (from the request)" if where == "the request" else f" (from the result of {where})"
            constant = all(v == vals[0] for v in vals) and len(vals) == len(per_run)
            literal = not source and constant and len(per_run) >= 2 and (
                isinstance(vals[0], bool) or vals[0] is None
                or (isinstance(vals[0], int) and abs(vals[0]) < 100)
                or (isinstance(vals[0], str) and _ENUM.match(vals[0])))
            if literal:
                shown.append(f"`{key}`={vals[0]!r}" if not isinstance(vals[0], str) else f'`{key}`="{vals[0]}"')
                continue
            shown.append(f"`{key}`={_placeholder(key)}{source}")
        lines.append(f"{i + 1}. Call `{tool}`" + (" with " + ", ".join(shown) if shown else "") + ".")
    return lines


def mistakes(ok: Sequence[Run], bad: Sequence[Run], seq: tuple[str, ...],
             limit: int = 4) -> list[tuple[str, str]]:
    """``[(bullet, why)]`` contrasting failures with successes."""
    out: list[tuple[str, str]] = []
    if not bad:
        return out
    need_bad = max(1, math.ceil(len(bad) / 2))
    checks: set[str] = set()
    # A check the successes always did before an action and the failures skipped.
    for j, action in enumerate(seq):
        for check in reversed(seq[:j]):
            if check == action or check in checks:
                continue
            ok_with_action = [r for r in ok if action in r.tools]
            ok_first = sum(1 for r in ok_with_action if check in r.tools[: r.tools.index(action)])
            if not ok_with_action or ok_first / len(ok_with_action) < 0.8:
                continue
            skipped = [r for r in bad if action in r.tools and check not in r.tools[: r.tools.index(action)]]
            if len(skipped) >= need_bad or (skipped and len(skipped) * 2 >= len([r for r in bad if action in r.tools])):
                out.append((dx.CheckFirst(check, action).sentence(),
                            f"{len(skipped)} failed run(s) called `{action}` without `{check}` "
                            f"first; {ok_first} of {len(ok_with_action)} successes checked first"))
                checks.add(check)
                break
    # Asking first: successes asked the user before an action where failures of the same kind of
    # request (the same template) went ahead; other requests in the cluster may need no question.
    for action in seq:
        asked = [r for r in ok if action in r.tools and r.asked_before(action)]
        templates = {r.template for r in asked}
        alike = [r for r in ok if action in r.tools and r.template in templates]
        if len(asked) < 2 or len(asked) < 0.8 * len(alike):
            continue
        comparable = [r for r in bad if action in r.tools and r.template in templates]
        went_ahead = [r for r in comparable if not r.asked_before(action)]
        if went_ahead and len(went_ahead) * 2 >= len(comparable):
            out.append((dx.AskFor(None, action).sentence(),
                        f"{len(went_ahead)} failed run(s) called `{action}` without asking the user; "
                        f"{len(asked)} of {len(alike)} successes of the same requests asked first"))
            break
    # A step every success took and most failures left out.
    for tool in seq:
        if tool in checks or not ok or not all(tool in r.tools for r in ok):
            continue
        missing = [r for r in bad if tool not in r.tools]
        if len(missing) >= need_bad and any(r.calls for r in missing):
            out.append((f"Do not skip `{tool}`: every successful run called it.",
                        f"{len(missing)} failed run(s) never called `{tool}`"))
    # A tool only failures called.
    ok_tools = {t for r in ok for t in r.tools}
    bad_counts = Counter(t for r in bad for t in set(r.tools) if t not in ok_tools)
    for tool, n in bad_counts.most_common(2):
        if n >= need_bad and ok:
            out.append((f"Do not call `{tool}` for this kind of request: runs that called it failed "
                        "and no successful run needed it.",
                        f"{n} failed run(s) called `{tool}`, no success did"))
    # Repeating the same call.
    repeaters = [r for r in bad if r.repeats >= 2]
    if len(repeaters) >= need_bad and not any(r.repeats >= 2 for r in ok):
        out.append(("Never repeat a tool call with the same arguments: if it did not help, change "
                    "the arguments or answer with what is known.",
                    f"{len(repeaters)} failed run(s) repeated identical calls"))
    return out[:limit]


def name_for(templates: Sequence[str], seq: Sequence[str], prefix: str = "") -> str:
    """Up to four words every request shares (no contractions), plus the last tool if fewer
    than two: ``refund-order-arrived-damaged``, ``schedule-create-event``."""
    words = [w for w in common_words(templates, limit=8) if "'" not in w][:4]
    if len(words) >= 2:
        base = "-".join(slug(w, 16) for w in words)
    elif words and seq:
        base = f"{slug(words[0], 16)}-{slug(seq[-1], 24)}"
    else:
        base = "use-" + "-then-".join(slug(t, 16) for t in seq[:3])
    name = (prefix + base)[:64].strip("-")
    return re.sub(r"-{2,}", "-", name) or "learned-procedure"


def _like(templates: Sequence[str]) -> str:
    pattern = common_pattern(templates)
    return pattern if pattern.strip("… ") else ""


def _description(templates: Sequence[str], seq: Sequence[str], what: str) -> str:
    """``When the user asks something like "<pattern>"; <what> `a`, `b`.``"""
    like = _like(templates)
    tool_list = ", ".join(f"`{t}`" for t in dict.fromkeys(seq))
    return (f"When the user asks something like \"{like}\"; {what} {tool_list}."
            if like else f"Requests handled with {tool_list}.")


class RuleDistiller(Distiller):
    """Deterministic rules; no model. See the module docstring."""

    name = "rule"

    # -- new skills from the uncovered pile ----------------------------------------------------

    def induce(self, cluster: Cluster, config: EvolutionConfig) -> list[Proposal]:
        ok, bad = cluster.successes, cluster.failures
        content, support, why = self.procedure(ok, bad, config)
        if content is None:
            content, support, why = self.pitfalls(ok, bad, config)
        if content is None:
            return []
        return [Proposal(kind=ChangeKind.add, content=content, origin="induce",
                         reason=why, evidence=tuple(r.id for r in support + bad))]

    def procedure(self, ok: Sequence[Run], bad: Sequence[Run], config: EvolutionConfig,
                  name: str | None = None) -> tuple[SkillContent | None, list[Run], str]:
        seq, support = consensus(ok)
        if not seq or len(support) < config.min_support or len(set(seq)) < config.min_procedure_tools:
            return None, [], ""
        templates = [r.template for r in support]
        contrast = mistakes(support, bad, seq, limit=config.max_bullets)
        # Counts are written with separators: "3,532 runs" is provenance, not an id to lint away.
        lead = (f"Procedure learned from {len(support):,} successful run(s)"
                + (f", contrasted with {len(bad):,} failed run(s)" if bad else "") + ".")
        method = "\n".join([dx.Order(seq).sentence(), *_render_args(seq, support),
                            "Then answer the user with the results."])
        body = B.join_sections(lead, [(B.METHOD, method)])
        if contrast:
            body = B.add_bullets(body, B.MISTAKES, [line for line, _ in contrast])
        content = SkillContent(
            name=name or name_for(templates, seq),
            description=_description(templates, seq, "the method uses")[: config.max_description_chars],
            body=body, kind=SkillKind.procedure, tools=tuple(dict.fromkeys(seq)), tags=("learned",),
        )
        why = (f"recurring method: {len(support)} successful run(s) followed "
               f"{' > '.join(seq)}" + (f"; {len(contrast)} mistake(s) from {len(bad)} failure(s)" if contrast else ""))
        return content, list(support), why

    def pitfalls(self, ok: Sequence[Run], bad: Sequence[Run],
                 config: EvolutionConfig) -> tuple[SkillContent | None, list[Run], str]:
        """Lessons without a method, for requests whose successes share a method too short to
        teach (one tool) but whose failures still differ from them (asked first, checked first)."""
        seq, support = consensus(ok)
        if not seq or len(support) < config.min_support or not bad:
            return None, [], ""
        contrast = mistakes(support, bad, seq, limit=config.max_bullets)
        if not contrast:
            return None, [], ""
        templates = [r.template for r in support]
        lead = (f"Mistakes learned from {len(support):,} successful and {len(bad):,} failed run(s) "
                "of the same kind of request.")
        body = B.add_bullets(lead, B.MISTAKES, [line for line, _ in contrast])
        content = SkillContent(
            name=(name_for(templates, seq)[:55] + "-pitfalls").strip("-"),
            description=_description(templates, seq, "mistakes to avoid")[: config.max_description_chars],
            body=body, kind=SkillKind.pitfall, tools=tuple(dict.fromkeys(seq)), tags=("learned",))
        why = f"recurring mistakes: {'; '.join(why for _, why in contrast)}"
        return content, list(support), why

    # -- edits to a used skill -----------------------------------------------------------------

    def revise(self, evidence: SkillEvidence, config: EvolutionConfig) -> list[Proposal]:
        skill = evidence.skill
        ok, bad = evidence.successes, evidence.failures
        body, description = skill.body, skill.description
        reasons: list[str] = []
        used: set[str] = set()
        proposals: list[Proposal] = []

        # Split: successes that follow two methods with disjoint tools.
        split = self._method_split(evidence, config)
        main_ok = ok
        if split is not None:
            main_ok, other_ok, other_content = split
            proposals.append(Proposal(
                kind=ChangeKind.split, content=other_content, parent=skill.id, origin="revise",
                reason=f"split from {skill.name}: {len(other_ok)} successful run(s) followed a "
                       f"different method ({' > '.join(consensus(other_ok)[0])})",
                evidence=tuple(r.id for r in other_ok)))
            reasons.append(f"narrowed to the method of {len(main_ok)} run(s); the other method was split off")
            used.update(r.id for r in other_ok)

        # Tighten the method.
        seq, support = consensus(main_ok)
        current = B.order_of(body)
        if seq and len(support) >= config.min_support:
            if current is None and skill.kind == SkillKind.procedure and (bad or split):
                body = B.set_section(body, B.METHOD, "\n".join(
                    [dx.Order(seq).sentence(), *_render_args(seq, support)]))
                reasons.append(f"added the method {len(support)} successful run(s) followed")
                used.update(r.id for r in support)
            elif current is not None and current.tools != seq:
                followed_old = [r for r in bad if r.sequence == current.tools]
                if split is not None or len(followed_old) * 2 >= max(1, len(bad)) and bad:
                    body = B.replace_order(body, dx.Order(seq))
                    reasons.append(f"method changed to {' > '.join(seq)} ({len(support)} successes); "
                                   f"{len(followed_old)} failure(s) followed the old order")
                    used.update(r.id for r in support + followed_old)

        # Common mistakes.
        contrast = mistakes(main_ok, bad, seq or (current.tools if current else tuple(skill.tools)),
                            limit=config.max_bullets)
        if contrast:
            new_body = B.add_bullets(body, B.MISTAKES, [line for line, _ in contrast])
            if new_body != body:
                body = new_body
                reasons.append("common mistakes: " + "; ".join(why for _, why in contrast))
                used.update(r.id for r in bad)

        # Limit lessons this skill owns.
        for sit in evidence.situations:
            title = B.BUDGET if sit.is_budget else B.CAPABILITY
            new_body = B.add_bullets(body, title, lesson_lines(sit))
            if new_body != body:
                body = new_body
                reasons.append(f"{title.lower()}: {sit.describe()}")
                used.update(sit.evidence)

        # Narrow the description when the skill was retrieved where it did not apply.
        narrowed = self._narrow(evidence, description, config)
        if narrowed is not None:
            description, why, misfit_ids = narrowed
            reasons.append(why)
            used.update(misfit_ids)

        if body == skill.body and description == skill.description and not proposals:
            return []
        tools = skill.tools
        if split is not None:  # the narrowed skill lists the tools it still talks about
            mentioned = set(re.findall(r"`([A-Za-z_][\w.\-]*)`", body)) | set(seq)
            tools = tuple(t for t in skill.tools if t in mentioned) or skill.tools
        content = SkillContent(name=skill.name, description=description, body=body,
                               kind=skill.kind, tools=tools, tags=skill.tags)

        # Split a body that grew too long: the mistakes and limits move to a pitfall skill.
        if len(content.body) > config.split_chars:
            pitfalls = self._size_split(content)
            if pitfalls is not None:
                content, spun = pitfalls
                proposals.append(Proposal(
                    kind=ChangeKind.split, content=spun, parent=skill.id, origin="revise",
                    reason=f"split from {skill.name}: its body exceeded {config.split_chars} characters",
                    evidence=tuple(sorted(used))))
                reasons.append("moved mistakes and limits to a separate pitfall skill")

        kind = ChangeKind.split if any(p.kind == ChangeKind.split for p in proposals) else ChangeKind.update
        if content.hash() != skill.content_hash:
            ordered = [r.id for r in evidence.runs if r.id in used] or list(evidence.ids)
            proposals.insert(0, Proposal(kind=kind, content=content, target=skill.id, origin="revise",
                                         reason="; ".join(reasons), evidence=tuple(ordered)))
        return proposals

    def _method_split(self, evidence: SkillEvidence, config: EvolutionConfig):
        """Two methods with disjoint tools that both use the skill's own tools: the skill grew
        too broad. (Runs that never touch its tools are misfits: see :meth:`_narrow`.)"""
        skill = evidence.skill
        if skill.kind != SkillKind.procedure or not skill.tools:
            return None
        own = set(skill.tools)
        ok = [r for r in evidence.successes if own & set(r.tools)]
        counts = Counter(r.sequence for r in ok if r.sequence)
        if len(counts) < 2:
            return None
        (first, n1), *rest = counts.most_common()
        for second, n2 in rest:
            if n2 < config.min_support:
                break
            a, b = set(first), set(second)
            if len(a & b) / len(a | b) < 0.34:
                main = [r for r in ok if r.sequence != second]
                other = [r for r in ok if r.sequence == second]
                content, _, _ = self.procedure(other, [], config,
                                               name=name_for([r.template for r in other], second,
                                                             prefix=""))
                if content is None or content.name == evidence.skill.name:
                    return None
                return main, other, content
        return None

    def _narrow(self, evidence: SkillEvidence, description: str, config: EvolutionConfig):
        skill = evidence.skill
        if not skill.tools:
            return None
        tools = set(skill.tools)
        misfit = [r for r in evidence.runs if r.calls and not tools & set(r.tools)]
        fit = [r for r in evidence.runs if tools & set(r.tools)]
        bad_misfit = [r for r in misfit if not r.success]
        if len(bad_misfit) < config.min_support:
            return None
        misfit_rate = sum(r.success for r in misfit) / len(misfit)
        fit_rate = sum(r.success for r in fit) / len(fit) if fit else 1.0
        if misfit_rate >= fit_rate:
            return None
        like = _like([r.template for r in misfit])
        words = common_words([r.template for r in misfit], limit=3)
        fit_words = set(common_words([r.template for r in fit], limit=8)) if fit else set()
        words = [w for w in words if w not in fit_words]
        if like and not fit_words & set(like.split()):
            clause = f"Not for requests like \"{like}\"."
        elif words:
            clause = "Not for requests about " + ", ".join(words) + "."
        else:
            return None
        base = re.sub(r"\s*Not for requests (?:like|about) [^\n]*$", "", description).strip()
        new = f"{base} {clause}"[: config.max_description_chars]
        if new == description:
            return None
        return new, (f"narrowed: injected into {len(misfit)} run(s) that never used its tools "
                     f"({len(bad_misfit)} failed)"), [r.id for r in misfit]

    @staticmethod
    def _size_split(content: SkillContent):
        lead, sections = B.split_sections(content.body)
        moved = [(t, x) for t, x in sections if t in (B.MISTAKES, B.CAPABILITY, B.BUDGET)]
        kept = [(t, x) for t, x in sections if t not in (B.MISTAKES, B.CAPABILITY, B.BUDGET)]
        if not moved or not (lead or kept):
            return None
        name = (content.name[:55] + "-pitfalls").strip("-")
        desc = content.description.rstrip(".")
        spun = SkillContent(
            name=name, description=f"Mistakes and limits to avoid. {desc}."[:1000],
            body=B.join_sections(f"Pitfalls of `{content.name}`, learned from failed runs.", moved),
            kind=SkillKind.pitfall, tools=content.tools, tags=content.tags,
        )
        narrowed = SkillContent(name=content.name, description=content.description,
                                body=B.join_sections(lead, kept) or lead, kind=content.kind,
                                tools=content.tools, tags=content.tags)
        return narrowed, spun
