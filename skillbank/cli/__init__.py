"""The ``skillbank`` command, grouped by noun (``skillbank skills list``, ``skillbank runs show``).

Layout: one module per noun, each exposing either a ``typer.Typer`` sub-app (``app``) or plain
command functions; this file only builds the root app and registers them. To add a noun, write
``skillbank/cli/_<noun>.py`` (import options and helpers from ``skillbank.cli._common``: the
shared ``DirOption``/``EmbedderOption``/``JsonOption``, ``open_bank``, ``print_json``, ``fail``)
and add one line in the registration block below, e.g.::

    from skillbank.cli import _evolve as evolve
    app.add_typer(evolve.app, name="evolve")      # a group:   skillbank evolve ...
    app.command("stats")(maintenance.stats)        # a command: skillbank stats

Errors: any :class:`~skillbank.errors.SkillBankError` (or a missing/unreadable user path) raised
by a command becomes one red ``error: <message>`` line on stderr and exit code 1, with no
traceback. That is done by the root group's ``invoke``, so it holds for ``main()`` and for
``typer.testing.CliRunner`` alike.

Importing this package is light: the bank, Chroma and the embedding model load only when a
command that needs them runs.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer
from typer.core import TyperGroup

from skillbank.cli._common import HANDLED_ERRORS, report_error

__all__ = ["app", "main"]


class _RootGroup(TyperGroup):
    """Turns user errors from any subcommand into one ``error:`` line and exit code 1, and shows
    flags in help without a value type.

    typer prints ``<bool>`` after every flag (``--dry-run <bool>``) though a flag takes no value.
    An empty metavar is what it prints instead; the help option of each command is made here,
    once, so that it gets one too (click caches it per command).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = (self.context_settings or {}).get("help_option_names", ["--help"])
        _hide_flag_types(self, names)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except HANDLED_ERRORS as exc:
            report_error(exc)
            raise typer.Exit(1) from None

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_bank_option(self, list(args)))

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # A verb of a noun typed at the top (`skillbank pin`): name the full command.
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            paths = [f"skillbank {group} {args[0]}" for group, sub in self.commands.items()
                     if args[0] in getattr(sub, "commands", {})]
            if paths:
                ctx.fail(f"No such command {args[0]!r}. Did you mean `{'` or `'.join(paths)}`?")
        return super().resolve_command(ctx, args)


_DIR_FLAGS = ("-d", "--dir")


def hoist_bank_option(root: Any, args: list[str]) -> list[str]:
    """``args`` with a bank option given before the command (``skillbank -d BANK skills list``,
    ``skillbank skills -d BANK list``) moved after it, where the command reads it; one given
    after the command, or in ``$SKILLBANK_DIR``, is left to the command as before.

    Only the words up to the command are looked at; a command that takes no bank gets the option
    anyway, and says so as for any option it does not know.
    """
    moved: list[str] = []
    group, i = root, 0
    while i < len(args):
        word = args[i]
        if word in _DIR_FLAGS and i + 1 < len(args):
            moved = [word, args[i + 1]]
            del args[i:i + 2]
            continue
        if word.startswith("--dir="):
            moved = [word]
            del args[i]
            continue
        sub = getattr(group, "commands", {}).get(word)
        if sub is None:
            break
        group, i = sub, i + 1
        if not hasattr(group, "commands"):  # the command itself: its own words follow
            break
    if not moved:
        return args
    end = args.index("--") if "--" in args else len(args)
    return args[:end] + moved + args[end:]


def _hide_flag_types(command: Any, help_names: list[str]) -> None:
    help_option = command.get_help_option(command.context_class(command, help_option_names=help_names))
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if getattr(param, "is_flag", False):
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        _hide_flag_types(sub, help_names)


app = typer.Typer(
    name="skillbank",
    cls=_RootGroup,
    help="A versioned skill bank for LangChain/LangGraph agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"skillbank {version('skillbank')}")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            typer.echo("skillbank (version unknown)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[Optional[bool], typer.Option(
        "--version", help="Print the version and exit.", callback=_version, is_eager=True)] = None,
) -> None:
    """A versioned skill bank for LangChain/LangGraph agents.

    Every command takes the bank folder as -d/--dir BANK (or $SKILLBANK_DIR), before or after
    its name: `skillbank -d BANK skills list` is `skillbank skills list -d BANK`.
    """


# -- registration: one line per noun or command ---------------------------------------------------

from skillbank.cli import (  # noqa: E402
    _interop as interop,
    _maintenance as maintenance,
    _runs as runs,
    _search as search,
    _skills as skills,
)

app.command("init")(maintenance.init)
app.add_typer(skills.app, name="skills")
app.command("search")(search.search)
app.add_typer(runs.app, name="runs")
app.command("stats")(maintenance.stats)
app.command("reindex")(maintenance.reindex)
app.command("verify")(maintenance.verify)
app.command("copy")(maintenance.copy)
app.command("export")(interop.export)
app.command("import")(interop.import_)
app.command("lint")(interop.lint)
from skillbank.cli import _serve as serve_cli  # noqa: E402  (the web app loads only when it runs)

app.command("serve")(serve_cli.serve)
from skillbank.cli import _evolve as evolve; evolve.register(app)  # noqa: E402,E702  (evolve + candidates)
# Shortcuts: the verbs people reach for at the top, the same commands as under their noun.
_SHORTCUTS = "Shortcuts (the same as under skills / candidates)"
app.command("prune", rich_help_panel=_SHORTCUTS, help="Same as `skillbank skills prune`.")(skills.prune)
app.command("history", rich_help_panel=_SHORTCUTS, help="Same as `skillbank skills history`.")(skills.history)
app.command("diff", rich_help_panel=_SHORTCUTS, help="Same as `skillbank skills diff`.")(skills.diff)
app.command("promote", rich_help_panel=_SHORTCUTS, help="Same as `skillbank candidates promote`.")(evolve.promote)
from skillbank.cli import _eval as eval_cli  # noqa: E402

app.command("eval")(eval_cli.eval_)
from skillbank.cli import _model as model_cli  # noqa: E402

app.add_typer(model_cli.app, name="model")
from skillbank.cli import _live as live_cli; live_cli.register(app)  # noqa: E402,E702  (monitor + canary)
# Commands of other installed packages (the harness's `skillbank demo`): their entry points.
from skillbank.cli._plugins import register_commands  # noqa: E402

register_commands(app)


def main() -> None:
    """Console-script entry point: run the app; user errors exit 1 with one red line."""
    try:
        app()
    except HANDLED_ERRORS as exc:  # raised outside a command (e.g. while parsing); same treatment
        report_error(exc)
        sys.exit(1)
