"""``skillbank search``: what the agent would be shown for a query."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.text import Text

from skillbank.cli._common import console, open_bank, print_json, skill_json
from skillbank.cli.options import DirOption, EmbedderOption, JsonOption
from skillbank.cli._rows import Column, print_rows
from skillbank.models import SkillKind


def search(
    query: Annotated[str, typer.Argument(help="The task or question to find skills for.")],
    k: Annotated[int, typer.Option("-k", "--top-k", help="At most this many skills.", min=1)] = 5,
    min_score: Annotated[float, typer.Option("--min-score", help="Minimum similarity.")] = 0.0,
    kind: Annotated[Optional[list[SkillKind]], typer.Option("--kind", help="Only this kind (repeatable).")] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="Only skills with this tag (repeatable).")] = None,
    tool: Annotated[Optional[list[str]],
                    typer.Option("--tool", help="Only skills about this tool (repeatable).")] = None,
    token_budget: Annotated[Optional[int], typer.Option(
        "--token-budget", help="Keep the rendered block within this many tokens.", min=1)] = None,
    render: Annotated[bool, typer.Option("--render", help="Print the block injected into the system message.")] = False,
    general: Annotated[bool, typer.Option(
        "--general/--no-general", help="Include the general skills, which the adapters inject on "
        "every turn whatever the query.")] = True,
    toolset: Annotated[Optional[list[str]], typer.Option(
        "--toolset", help="A tool the agent has (repeatable): skills learned with other tools are "
        "left out, as the adapters do.")] = None,
    show_all: Annotated[bool, typer.Option(
        "--all", help="Also list the active skills not injected, with their score and why.")] = False,
    as_json: JsonOption = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Show what an adapter would inject for a query, in prompt order.

    Pinned and general skills first, then the top k by similarity; --all lists the other active
    skills too, each with why it is not injected.
    """
    from skillbank.adapters.config import GENERAL_K, InjectionConfig
    from skillbank.adapters.injection import SkillInjector, fits_toolset
    from skillbank.models import SkillStatus

    with open_bank(bank_dir, embedder) as bank:
        injector = SkillInjector(bank, InjectionConfig(k=k, token_budget=token_budget, min_score=min_score,
                                 kinds=tuple(x.value for x in kind) if kind else None,
                                 tags=tuple(tag) if tag else None, tools=tuple(tool) if tool else None,
                                 general_k=GENERAL_K if general else 0))
        hits = injector.select(query, tools=toolset or None)
        pinned_ids = {s.id for s in injector.standing()[0]}
        general_ids = {s.id for s in injector.standing()[1]}
        chosen = {h.skill.id for h in hits}
        rest = [h for h in bank.search(query, k=max(1, bank.skills.count(SkillStatus.active)))
                if h.skill.id not in chosen]
        block = bank.render(hits, token_budget=token_budget) if render else None

    def why_in(h: Any) -> str:
        return "pinned" if h.skill.id in pinned_ids else "general" if h.skill.id in general_ids else "retrieved"

    def why_out(h: Any) -> str:
        if h.skill.id in general_ids or h.skill.id in pinned_ids:
            return "over the token budget"
        if toolset and not fits_toolset(h.skill, toolset):
            return "learned with other tools"
        if float(h.score) < min_score:
            return "below --min-score"
        if (kind and h.skill.kind not in kind) or (tag and not set(tag) & set(h.skill.tags)) or \
                (tool and not set(tool) & set(h.skill.tools)):
            return "filtered out"
        return f"not in the top {k}"

    if as_json:
        data: dict[str, Any] = {"query": query,
                "hits": [{**skill_json(h.skill, body=False), "score": round(float(h.score), 6),
                          "general": h.skill.id in general_ids, "injected": True, "why": why_in(h)}
                         for h in hits],
                "not_injected": [{"id": h.skill.id, "name": h.skill.name, "score": round(float(h.score), 6),
                                  "why": why_out(h)} for h in rest]}
        if render:
            data["rendered"] = block
        print_json(data)
        return
    out = console()
    if render:
        out.print(block or "(nothing to inject)", markup=False, soft_wrap=True)
        return
    if not hits:
        out.print(f"Nothing would be injected for that query ({len(rest)} active skill"
                  f"{'s' if len(rest) != 1 else ''} scored; --all lists them).")
    else:
        print_rows(out, [Column("#", right=True), Column("name"), Column("why"), Column("score", right=True)],
                   [[str(n), Text(h.skill.name, style="bold"), why_in(h),
                     "-" if why_in(h) != "retrieved" else f"{h.score:.3f}"] for n, h in enumerate(hits, 1)],
                   title=f"Injected: {len(hits)} skill{'s' if len(hits) != 1 else ''}, in prompt order "
                         "(pinned, general, then by similarity)",
                   text_header="description", texts=[h.skill.description for h in hits])
    if rest and show_all:
        out.print()
        print_rows(out, [Column("name"), Column("score", right=True), Column("why not")],
                   [[h.skill.name, f"{h.score:.3f}", why_out(h)] for h in rest],
                   title=f"Not injected: {len(rest)} skill{'s' if len(rest) != 1 else ''}, by similarity")
    elif rest:
        out.print(Text(f"{len(rest)} other active skill{'s' if len(rest) != 1 else ''} not injected; "
                       "--all lists them with their score.", style="dim"), soft_wrap=True)
