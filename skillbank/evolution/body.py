"""Editing skill bodies section by section, and reading the directives in them.

Learned skills are markdown with a short lead paragraph and ``## `` sections (``Method``,
``Common mistakes``, ``When a capability is missing``, ``Budget``). Edits replace or extend the
sections the round owns and leave everything else a person wrote untouched.
"""

from __future__ import annotations

import re
from typing import Iterable

from skillbank import directives as dx

METHOD = "Method"
MISTAKES = "Common mistakes"
CAPABILITY = "When a capability is missing"
BUDGET = "Budget"

_HEADING = re.compile(r"^##\s+(.+?)\s*$", re.M)


def split_sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    """``(lead, [(title, text), ...])`` for the ``## `` sections of ``body``."""
    matches = list(_HEADING.finditer(body))
    if not matches:
        return body.strip(), []
    lead = body[: matches[0].start()].strip()
    sections = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        sections.append((m.group(1).strip(), body[m.end():end].strip()))
    return lead, sections


def join_sections(lead: str, sections: Iterable[tuple[str, str]]) -> str:
    parts = [lead.strip()] if lead.strip() else []
    for title, text in sections:
        if text.strip():
            parts.append(f"## {title}\n{text.strip()}")
    return "\n\n".join(parts).strip()


def get_section(body: str, title: str) -> str | None:
    _, sections = split_sections(body)
    for t, text in sections:
        if t.lower() == title.lower():
            return text
    return None


def set_section(body: str, title: str, text: str) -> str:
    lead, sections = split_sections(body)
    for i, (t, _) in enumerate(sections):
        if t.lower() == title.lower():
            sections[i] = (t, text)
            return join_sections(lead, sections)
    return join_sections(lead, sections + [(title, text)])


def remove_section(body: str, title: str) -> str:
    lead, sections = split_sections(body)
    return join_sections(lead, [(t, x) for t, x in sections if t.lower() != title.lower()])


def bullets(text: str | None) -> list[str]:
    """The ``- `` items of a section (continuation lines folded in)."""
    items: list[str] = []
    for line in (text or "").splitlines():
        stripped = line.strip()
        if stripped.startswith(("- ", "* ")):
            items.append(stripped[2:].strip())
        elif stripped and items:
            items[-1] += " " + stripped
    return items


def add_bullets(body: str, title: str, new: Iterable[str]) -> str:
    """Append the bullets of ``new`` not already in section ``title`` (by text or directive)."""
    current = get_section(body, title)
    existing = bullets(current)
    have_text = {_norm(b) for b in existing}
    have_directives = set(dx.parse(body))
    added = []
    for item in new:
        found = dx.parse(item)
        if _norm(item) in have_text or (found and all(d in have_directives for d in found)):
            continue
        added.append(item)
        have_text.add(_norm(item))
        have_directives.update(found)
    if not added:
        return body
    prefix = (current.rstrip() + "\n") if current and current.strip() else ""
    return set_section(body, title, prefix + "\n".join(f"- {b}" for b in added))


def replace_order(body: str, order: dx.Order) -> str:
    """Replace the body's ``Order`` sentence with ``order`` (or add a Method section)."""
    pattern = re.compile(r"Call the tools in this order: (?:`\w+`(?:, then )?)+\.")
    if pattern.search(body):
        return pattern.sub(order.sentence(), body, count=1)
    method = get_section(body, METHOD)
    return set_section(body, METHOD, order.sentence() + ("\n" + method if method else ""))


def order_of(body: str) -> dx.Order | None:
    for d in dx.parse(body):
        if isinstance(d, dx.Order):
            return d
    return None


def directive_set(text: str) -> set[dx.Directive]:
    return set(dx.parse(text))


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")
