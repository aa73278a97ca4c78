"""The options every ``skillbank`` command takes, public so that a command another package adds
(through the ``skillbank.commands`` entry point, :mod:`skillbank.cli._plugins`) takes them the
same way: the same flags, the same environment variables, the same help."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from skillbank.store._location import DEFAULT_DIR, ENV_DIR  # light: Chroma and the model load on first use

__all__ = ["DirOption", "EmbedderOption", "JsonOption"]

# -- shared options ------------------------------------------------------------------------------
# Every command takes these two, so ``skillbank <noun> <verb> -d PATH`` works everywhere. A
# command's folder defaults to None: open_bank then takes the bank's own default
# (``$SKILLBANK_DIR`` or ``./.skillbank``, defined once in skillbank.store._location).

DirOption = Annotated[
    Optional[Path],
    typer.Option(
        "-d",
        "--dir",
        envvar=ENV_DIR,
        help="Skill bank folder.",
        show_default=f"./{DEFAULT_DIR}",
        show_envvar=True,
    ),
]

EmbedderOption = Annotated[
    Optional[str],
    typer.Option(
        "--embedder",
        envvar="SKILLBANK_EMBEDDER",
        help="Embedder: default is the bundled MiniLM model; 'hash' is model-free (tests), "
        "or a sentence-transformers model path.",
        show_envvar=True,
    ),
]

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of tables.")]
