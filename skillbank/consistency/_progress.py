"""How a measurement shows its progress: a rich progress bar, a callback, or nothing."""

from __future__ import annotations

from typing import Callable

__all__ = ["Progress"]


class Progress:
    """Counts finished trials out of ``total`` (``done`` already at the start, when resuming).

    ``progress``: ``True`` shows a progress bar, a ``callback(done, total)`` is called at the
    start and after each trial, ``False`` shows nothing.
    """

    def __init__(self, progress: bool | Callable[[int, int], None], total: int, done: int,
                 description: str):
        self.total, self.done = total, done
        self.callback = progress if callable(progress) else None
        self.bar = None
        if progress is True:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                                transient=False)
            self.task = self.bar.add_task(description, total=total, completed=done)

    def __enter__(self) -> "Progress":
        if self.bar is not None:
            self.bar.start()
        if self.callback is not None:
            self.callback(self.done, self.total)
        return self

    def advance(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.advance(self.task)
        if self.callback is not None:
            self.callback(self.done, self.total)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
