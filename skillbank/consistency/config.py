"""How a measurement runs, in one frozen value: :class:`MeasureConfig`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from skillbank._config_keywords import with_options
from skillbank.consistency._trials import ARM_WITH, ARM_WITHOUT
from skillbank.errors import MeasureError

__all__ = ["MeasureConfig", "measure_config"]


@dataclass(frozen=True)
class MeasureConfig:
    """Everything :func:`~skillbank.consistency.runner.measure` takes besides the agent
    factory, the tasks and the bank.

    Attributes:
        trials: Trials per task and arm (``n``); pass^k is reported for k up to ``n``.
        arms: Arm names, run in this order for each trial.
        concurrency: Trials run at once (threads).
        run_id: Names the run; pass the id of an interrupted run to resume it. Default: new.
        progress: Show a progress bar, or a ``callback(done, total)``.
        splits: ``task id -> split`` overriding the tasks' own ``split`` attribute.
        seed: Base of the per-trial seeds and of the bootstrap.
        model: A label for the model (stored with the result).
        simulated: Whether the policy is simulated (stated in reports).
        description: The progress bar's label.
    """

    trials: int = 5
    arms: tuple[str, ...] = (ARM_WITHOUT, ARM_WITH)
    concurrency: int = 2
    run_id: str | None = None
    progress: bool | Callable[[int, int], None] = True
    splits: Mapping[str, str] | None = None
    seed: int = 0
    model: str | None = None
    simulated: bool | None = None
    description: str | None = None

    def __post_init__(self) -> None:
        trials = self.trials
        if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
            raise MeasureError(f"trials must be a positive integer, got {trials!r}")
        arms = tuple(self.arms)
        if not arms or len(set(arms)) != len(arms):
            raise MeasureError(f"arms must be distinct names, got {arms!r}")
        object.__setattr__(self, "arms", arms)
        if self.concurrency < 1:
            raise MeasureError(f"concurrency must be at least 1, got {self.concurrency}")


def measure_config(config: MeasureConfig | None, *, owner: str, trials: int | None = None,
                   arms: Sequence[str] | None = None, concurrency: int | None = None, run_id: str | None = None,
                   progress: bool | Callable[[int, int], None] | None = None,
                   splits: Mapping[str, str] | None = None, seed: int | None = None, model: str | None = None,
                   simulated: bool | None = None, description: str | None = None) -> MeasureConfig:
    """The measurement's config: ``config`` as given, or one built from the keywords that are
    not ``None`` (the rest keep their defaults).

    Raises:
        TypeError: a keyword given along with ``config`` (set it on the config instead).
        MeasureError: a value the config refuses (``trials=0``, say).
    """
    return with_options(config, MeasureConfig, owner=owner, argument="config", options={
        "trials": trials, "arms": arms, "concurrency": concurrency, "run_id": run_id, "progress": progress,
        "splits": splits, "seed": seed, "model": model, "simulated": simulated, "description": description})
