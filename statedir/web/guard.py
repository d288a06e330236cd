"""The safety of the web view as one ASGI layer around the app: reads only (GET and HEAD; with
`serve --answer` also a POST of an answer, from the same origin), the Host header checked against
the bound address (DNS rebinding), a token where the server listens beyond loopback, and headers
that keep a page to its own scripts and styles."""
from __future__ import annotations

import hmac
import re
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, parse_qsl, quote, urlencode

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::")  # every address of the machine: no one Host to hold requests to
TOKEN_COOKIE = "statedir_token"
ANSWER_PATH = re.compile(r"/runs/[^/]+/answer")  # the one address a POST may reach (serve --answer)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY"),
           (b"cross-origin-opener-policy", b"same-origin"), (b"cross-origin-resource-policy", b"same-origin")]


def allowed_hosts(host: str, port: int) -> set[str] | None:
    """The Host header values a request may carry: the bound address (every loopback name
    when it is loopback) with its port; None (any) for a wildcard address, which is never
    served without a token (a rebound name never holds the token's cookie)."""
    if host in WILDCARD:
        return None
    names = set(LOOPBACK) if host in LOOPBACK else {host}
    out = set()
    for name in names:
        shown = f"[{name}]" if ":" in name else name
        out |= {f"{shown}:{port}".lower()} | ({shown.lower()} if port == 80 else set())
    return out


class Guard:
    """Wraps the app: refuses what the view must never do before the app sees it."""

    def __init__(self, app: App, *, host: str, port: int, token: str | None, answer: bool = False) -> None:
        if host in WILDCARD and not token:
            raise ValueError("a wildcard address is served only with a token")
        self.app = app
        self.hosts = allowed_hosts(host, port)
        self.token = token
        self.answer = answer

    def answer_as(self, host: str, port: int) -> None:
        """Answer requests addressed to `host:port` (the port a listen on port 0 was given)."""
        self.hosts = allowed_hosts(host, port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        posting = self.answer and scope["method"] == "POST" and ANSWER_PATH.fullmatch(scope.get("path", ""))
        if scope["method"] not in ("GET", "HEAD") and not posting:
            allow = b"GET, HEAD, POST" if self.answer and ANSWER_PATH.fullmatch(scope.get("path", "")) else b"GET, HEAD"
            return await _plain(send, 405, "read-only: only GET and HEAD\n", [(b"allow", allow)])
        if self.hosts is not None and headers.get("host", "").lower() not in self.hosts:
            return await _plain(send, 421, "this server answers only to the address it is bound to\n")
        if self.token is not None:
            given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
            cookie = SimpleCookie(headers.get("cookie", ""))
            held = cookie[TOKEN_COOKIE].value if TOKEN_COOKIE in cookie else None
            if given is not None and hmac.compare_digest(given.encode(), self.token.encode()):
                cookie_text = f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
                # the same address without the token: it leaves the address bar, the history and bookmarks
                return await _plain(send, 303, "the token is kept in a cookie now\n",
                                    [(b"location", _without_token(scope).encode()),
                                     (b"set-cookie", cookie_text.encode()), (b"cache-control", b"no-store")])
            if held is None or not hmac.compare_digest(held.encode(), self.token.encode()):
                return await _plain(send, 401, "a token is needed: open the address `statedir serve` printed\n")

        if posting and not same_origin(headers):
            return await _plain(send, 403, "an answer is taken only from this server's own pages (same origin)\n")

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def same_origin(headers: dict[str, str]) -> bool:
    """Whether a POST came from a page of this server: its Origin (else, where a browser sent none,
    its Referer) names the address the request was sent to (the Host header, checked before)."""
    host = headers.get("host", "").lower()
    origin = headers.get("origin")
    if origin is None:
        referer = headers.get("referer", "")
        origin = "/".join(referer.split("/", 3)[:3]) if referer.count("/") >= 2 else ""
    return bool(host) and hmac.compare_digest(origin.lower().encode(), f"http://{host}".encode())


def _without_token(scope: Scope) -> str:
    """The request's path and query, the token left out (a relative URL: the Host is not repeated)."""
    query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
             if k != "token"]
    path = quote(scope.get("path", "/"), safe="/:@!$&'()*+,;=-._~")
    return "/" + path.lstrip("/") + (f"?{urlencode(query)}" if query else "")


async def _plain(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *HEADERS, *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
