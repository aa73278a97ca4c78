"""``skillbank serve``: the review web app (skillbank._web) on a local port."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from skillbank.cli._common import open_bank
from skillbank.cli.options import EmbedderOption
from skillbank.store._location import ENV_DIR


def serve(
    bank: Annotated[Optional[str], typer.Option(
        "--bank", "-d", "--dir", envvar=ENV_DIR, show_envvar=True,
        help="Skill bank folder or postgresql:// URL.")] = None,
    host: Annotated[str, typer.Option(help="Interface to bind; anything but loopback exposes the "
                                           "bank to the network (the token is the only guard).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    read_only: Annotated[bool, typer.Option("--read-only", help="Serve pages only: no action at all.")] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Review skills, versions and candidates in a browser (needs `pip install 'skillbank\\[web]'`)."""
    from skillbank.errors import MissingExtraError

    try:
        import uvicorn

        from skillbank._web import create_app
        from skillbank._web.security import new_token
    except ImportError as exc:
        raise MissingExtraError("skillbank serve", "web", exc.name or "starlette") from None
    token = new_token()
    with open_bank(bank, embedder, create=False) as opened:
        app = create_app(opened, token=token, read_only=read_only, host=host)
        shown = "localhost" if host == "127.0.0.1" else host
        typer.echo(f"skillbank serve{' (read-only)' if read_only else ''}: open\n"
                   f"    http://{shown}:{port}/?token={token}\n(Ctrl-C stops it)")
        # One process, one event loop: requests run one at a time on the bank's connection.
        uvicorn.run(app, host=host, port=port, log_level="warning", limit_concurrency=64,
                    h11_max_incomplete_event_size=64 * 1024)
