"""Access token, CSRF and response headers.

The bank shows text strangers wrote (skill bodies, transcripts), so every response carries a
CSP without inline script, and every request needs the token printed at start. The token
arrives once as ``?token=...`` and is then kept in an HttpOnly, SameSite=Strict cookie, so it
stays out of later URLs, history and Referer headers.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
from dataclasses import dataclass

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


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(name: str) -> bool:
    return name == "localhost" or (_is_ip(name) and ipaddress.ip_address(name).is_loopback)


@dataclass(frozen=True)
class AllowedHosts:
    """The Host header values a request may carry for a server bound to ``bind``.

    A DNS-rebinding page reaches the server under the attacker's domain name, so its requests
    carry that name as Host; refusing every name but the server's own shuts it out, token
    leaked or not. Bound to loopback: ``localhost`` and loopback addresses. Bound to every
    interface (``0.0.0.0``, ``::``): any IP address (rebinding needs a name), ``localhost``
    and this machine's host name. Bound to one address or name: that one (plus the loopback
    names when it is a loopback address).
    """

    bind: str

    def names(self) -> frozenset[str]:
        if self.bind.lower() in WILDCARDS:
            return LOOPBACK_NAMES | {socket.gethostname().lower(), socket.getfqdn().lower()}
        if _is_loopback(self.bind):
            return LOOPBACK_NAMES | {self.bind.lower()}
        return frozenset({self.bind.lower()})

    def allows(self, host_header: str | None) -> bool:
        name = host_name(host_header or "")
        if not name:
            return False
        if self.bind.lower() in WILDCARDS and _is_ip(name):
            return True
        if _is_loopback(self.bind) and _is_loopback(name):
            return True
        return name in self.names()


def host_name(header: str) -> str:
    """The host part of a Host header, lower-cased, without port or IPv6 brackets."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.index("]")] if "]" in header else ""
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _secure_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    return response


class TokenMiddleware(BaseHTTPMiddleware):
    """Every request: the Host must be the server's own (:class:`AllowedHosts`), then the token
    (cookie, or once in the URL); a POST's body must have a declared length within
    ``MAX_BODY``."""

    def __init__(self, app, token: str, hosts: AllowedHosts) -> None:
        super().__init__(app)
        self.token = token
        self.hosts = hosts

    def _ok(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(presented.encode(), self.token.encode())

    async def dispatch(self, request: Request, call_next) -> Response:
        if not self.hosts.allows(request.headers.get("host")):
            return _secure_headers(PlainTextResponse(
                f"403: this server answers to {self.hosts.bind} (the address it serves), not to the "
                f"Host {request.headers.get('host', '')[:100]!r}; open the URL `skillbank serve` printed",
                status_code=403))
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
