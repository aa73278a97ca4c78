"""Form reading with the field named in every refusal (a 400, nothing written)."""

from __future__ import annotations

from starlette.datastructures import FormData

from skillbank.errors import SkillBankError


class BadForm(SkillBankError):
    """A malformed form: ``field`` is what to fix."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field {field!r}: {problem}")
        self.field = field


class StaleForm(SkillBankError):
    """What a page showed changed before its form came back; ``changes`` say what."""

    def __init__(self, subject: str, changes: list[str]) -> None:
        super().__init__(f"{subject} changed since this page was drawn: "
                         + "; ".join(changes) + ". Reload the page and decide again.")
        self.changes = changes


MAX_TEXT = 20_000


def text(form: FormData, name: str, *, required: bool = True, limit: int = MAX_TEXT) -> str:
    value = form.get(name)
    if value is None or not isinstance(value, str):
        if required:
            raise BadForm(name, "missing")
        return ""
    value = value.strip()
    if required and not value:
        raise BadForm(name, "empty")
    if len(value) > limit:
        raise BadForm(name, f"longer than {limit} characters")
    return value


def integer(form: FormData, name: str) -> int:
    raw = text(form, name, limit=12)
    if not raw.isdigit():
        raise BadForm(name, f"not a positive integer: {raw[:20]!r}")
    return int(raw)
