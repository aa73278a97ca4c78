"""The thread-pool engine: run a list of jobs, a bounded number at a time, and stop on an error.

Only ``concurrency`` jobs are ever submitted, so an error stops the run promptly: the jobs in
flight finish (their results are kept), nothing new starts, and the first error is raised.
Ctrl-C cancels what has not started.
"""

from __future__ import annotations

from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable, TypeVar

__all__ = ["run_bounded"]

Job = TypeVar("Job")
Result = TypeVar("Result")


def run_bounded(jobs: Iterable[Job], run: Callable[[Job], Result], *, concurrency: int,
                finished: Callable[[Result], None], thread_name_prefix: str = "skillbank-trial") -> None:
    """``run(job)`` for each job on at most ``concurrency`` threads; ``finished(result)`` is
    called on this thread for each one that succeeds, in the order they finish.

    Raises the first error a job raised, once the jobs in flight are done.
    """
    error: BaseException | None = None
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=thread_name_prefix) as pool:
        futures: dict[Future, Job] = {}
        queue = iter(jobs)

        def submit_next() -> bool:
            job = next(queue, None)
            if job is None:
                return False
            futures[pool.submit(run, job)] = job
            return True

        for _ in range(concurrency):
            if not submit_next():
                break
        try:
            while futures:
                done, _ = wait(list(futures), return_when=FIRST_EXCEPTION)
                for fut in done:
                    futures.pop(fut)
                    exc = fut.exception()
                    if exc is not None:
                        error = error or exc
                        continue
                    finished(fut.result())
                    if error is None:
                        submit_next()
        except BaseException:  # Ctrl-C: drop what has not started; the rest finishes
            for fut in futures:
                fut.cancel()
            raise
    if error is not None:
        raise error
