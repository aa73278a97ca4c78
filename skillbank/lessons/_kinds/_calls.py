"""Pieces the kinds' call checks share."""

from __future__ import annotations

from skillbank.lessons._registry import CallView

__all__ = ["not_run", "already_answered", "its_tool"]


def not_run(call: CallView) -> str:
    """The first words of every reminder: the call did not run."""
    return f"`{call.tool}` was not run."


def already_answered(call: CallView) -> str:
    """The reminder for an identical call: its result is already in the conversation."""
    return (f"{not_run(call)} You already have what this call would give (its result is above). "
            "Answer the user now with what you know.")


def its_tool(lesson) -> str | None:
    """Scope of a lesson about the one tool it names: that tool's calls (``None``: names none)."""
    return "its_tool" if lesson.tool else None
