"""``skillbank search``: what the agent would be shown for a query."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from skillbank.cli._common import console, open_bank, print_json, skill_json
from skillbank.cli.options import DirOption, EmbedderOption, JsonOption
from skillbank.models import SkillKind


def search(
    query: Annotated[str, typer.Argument(help="The task or question to find skills for.")],
    k: Annotated[int, typer.Option("-k", "--top-k", help="At most this many skills.", min=1)] = 5,
    min_score: Annotated[float, typer.Option("--min-score", help="Minimum similarity.")] = 0.0,
    kind: Annotated[Optional[list[SkillKind]], typer.Option("--kind", help="Only this kind (repeatable).")] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="Only skills with this tag (repeatable).")] = None,
    tool: Annotated[Optional[list[str]], typer.Option("--tool", help="Only skills about this tool (repeatable).")] = None,
    token_budget: Annotated[Optional[int], typer.Option(
        "--token-budget", help="Keep the rendered block within this many tokens.", min=1)] = None,
    render: Annotated[bool, typer.Option("--render", help="Print the block injected into the system message.")] = False,
    general: Annotated[bool, typer.Option(
        "--general/--no-general", help="Include the general skills, which the adapters inject on "
        "every turn whatever the query.")] = True,
    as_json: JsonOption = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Find the active skills most relevant to a query: what an adapter would inject for it."""
    from skillbank.adapters.config import GENERAL_K
    from skillbank.adapters.injection import SkillInjector

    with open_bank(bank_dir, embedder) as bank:
        injector = SkillInjector(bank, k=k, token_budget=token_budget, min_score=min_score,
                                 kinds=[x.value for x in kind] if kind else None, tags=tag or None,
                                 tools=tool or None, general_k=GENERAL_K if general else 0)
        hits = injector.select(query)
        general_ids = {s.id for s in injector.standing()[1]}
        block = bank.render(hits, token_budget=token_budget) if render else None
    if as_json:
        data = {"query": query,
                "hits": [{**skill_json(h.skill, body=False), "score": round(float(h.score), 6),
                          "general": h.skill.id in general_ids} for h in hits]}
        if render:
            data["rendered"] = block
        print_json(data)
        return
    out = console()
    if render:
        out.print(block or "(nothing to inject)", markup=False, soft_wrap=True)
        return
    if not hits:
        out.print("No active skill matches that query.")
        return
    table = Table(title=f"Top {len(hits)} for {query!r}" if len(query) < 60 else f"Top {len(hits)}")
    table.add_column("name", style="bold", overflow="fold")
    table.add_column("kind")
    table.add_column("score", justify="right")
    table.add_column("description")
    for h in hits:
        score = "general" if h.skill.id in general_ids else f"{h.score:.3f}"
        table.add_row(escape(h.skill.name), h.skill.kind.value, score, escape(h.skill.description))
    out.print(table)
