"""Access token, CSRF and response headers.

The bank shows text strangers wrote (skill bodies, transcripts), so every response carries a
CSP without inline script, and every request needs the token printed at start. The token
arrives once as ``?token=...`` and is then kept in an HttpOnly, SameSite=Strict cookie, so it
stays out of later URLs, history and Referer headers.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

COOKIE = "skillbank_token"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
MAX_BODY = 64 * 1024  # a form here is a reason or a skill body; more is refused, not parsed


def new_token() -> str:
    return secrets.token_urlsafe(24)


def csrf_token(token: str) -> str:
    """Derived from the access token, so it needs no server state; a page on another origin
    cannot read it (same-origin policy), hence cannot forge a form that carries it."""
    return hmac.new(token.encode(), b"csrf", hashlib.sha256).hexdigest()


def _secure_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    return response


class TokenMiddleware(BaseHTTPMiddleware):
    def __init__(self, app, token: str) -> None:
        super().__init__(app)
        self.token = token

    def _ok(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(presented.encode(), self.token.encode())

    async def dispatch(self, request: Request, call_next) -> Response:
        query_token = request.query_params.get("token")
        if self._ok(query_token) and request.method == "GET":
            # Trade the URL token for the cookie and drop it from the address bar.
            rest = "&".join(f"{k}={v}" for k, v in request.query_params.multi_items() if k != "token")
            target = request.url.path + (f"?{rest}" if rest else "")
            response = RedirectResponse(target, status_code=303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
            return _secure_headers(response)
        if not self._ok(request.cookies.get(COOKIE)):
            return _secure_headers(PlainTextResponse(
                "403: open the URL with the token `skillbank serve` printed", status_code=403))
        if request.method == "POST":
            length = request.headers.get("content-length")
            if length is None or not length.isdigit():
                return _secure_headers(PlainTextResponse("411: Content-Length required", status_code=411))
            if int(length) > MAX_BODY:
                return _secure_headers(PlainTextResponse(
                    f"413: request body over {MAX_BODY} bytes", status_code=413))
        return _secure_headers(await call_next(request))
