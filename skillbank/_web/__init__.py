"""``skillbank serve``: a local, server-rendered review app over a bank (Starlette + Jinja2).

Starlette rather than FastAPI: the app renders HTML forms, not a JSON API, so FastAPI's
validation/OpenAPI layer would be unused weight; Starlette is what FastAPI is built on and
needs only ``python-multipart`` for forms. Install with ``pip install 'skillbank[web]'``.
"""

from __future__ import annotations

try:
    import starlette  # noqa: F401
    import python_multipart  # noqa: F401  (form parsing)
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("skillbank serve needs the web extra: pip install 'skillbank[web]'") from exc

from skillbank._web.app import create_app

__all__ = ["create_app"]
