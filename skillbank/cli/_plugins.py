"""Commands and task sets that other installed packages add to the ``skillbank`` command.

The library never imports its harness (the environments, the simulated policy, the demo). The
harness, like any other package, announces itself through entry points, and the CLI loads
whatever is installed:

* group ``skillbank.commands``: ``register(app)`` adds commands to the root app (the harness
  adds ``skillbank demo``);
* group ``skillbank.environments``: an :class:`EnvironmentProvider`, which ``skillbank eval
  --env NAME`` asks for tasks and for the trials' runner.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

__all__ = ["EnvironmentProvider", "environment_providers", "register_commands"]


@runtime_checkable
class EnvironmentProvider(Protocol):
    """A task set ``skillbank eval --env`` can measure."""

    names: Sequence[str]
    """The ``--env`` values it answers for."""
    help: str
    """One line for ``--env``'s help."""

    def tasks(self, env: str, *, model: str | None, categories: str | None,
              scenarios: int | None, per_template: int, seed: int) -> list[Any]:
        """The tasks of ``env``; raises ``ValueError`` with a message for the user."""

    def measure(self, tasks: Sequence[Any], model_factory: Callable[[Any, int], Any] | None,
                **kwargs: Any) -> Any:
        """Run every trial (``skillbank.consistency.runner.measure``'s keywords, and the chat
        models of the options it takes: ``user_model=``, ``judge_model=``)."""

    # Optional: ``options(env) -> {"user_model": True, "judge_model": False}``, the model
    # options (``--user-model``, ``--judge-model``) ``env`` takes besides ``--model``, each
    # with whether it needs it. A provider without it takes none.


def _load(group: str) -> list[Any]:
    return [ep.load() for ep in sorted(entry_points(group=group), key=lambda ep: ep.name)]


def environment_providers() -> list[EnvironmentProvider]:
    return _load("skillbank.environments")


def register_commands(app: Any) -> None:
    for register in _load("skillbank.commands"):
        register(app)
