"""Running the web view: check where it may listen, pick the port, start uvicorn, and print
the address (with the token, where one is needed) before the first request."""
# Lazy imports: json, errors, webbrowser: the web server's dependencies load when it serves, not when the CLI reads
#   its commands.
from __future__ import annotations

import socket
import sys
from pathlib import Path

import uvicorn

from statedir.errors import InvalidValue
from statedir.hints import PYTHON, Words
from statedir.web.app import build
from statedir.web.guard import LOOPBACK


def check_listen(host: str, token: str | None) -> None:
    """Loopback needs nothing; any other address needs a token (anyone who reaches it could read the store)."""
    if host not in LOOPBACK and not token:
        raise InvalidValue(f"--host {host} reaches beyond this machine: give --token (or STATEDIR_SERVE_TOKEN) "
                           "too; only those who have it can read the store", host=host)
    if token is not None and len(token) < 16:
        raise InvalidValue("--token must be at least 16 characters", argument="token")


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the address is printed (port 0: a free one)."""
    from statedir.errors import WriteFailed

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise WriteFailed(f"cannot listen on {host}:{port}: {exc.strerror}; try another --port",
                          host=host, port=port) from None
    sock.listen(128)
    return sock


def address(host: str, port: int, token: str | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(root: Path, *, host: str, port: int, token: str | None, open_browser: bool,
          as_json: bool = False, answer: bool = False, words: Words = PYTHON) -> None:
    """Serve the store at `root` until interrupted, a refusal's next step said in `words`."""
    check_listen(host, token)
    app = build(root, host=host, port=port, token=token, warm=True, answer=answer, words=words)  # NOT_A_STORE before the port is taken
    sock = listen(host, port)
    if port == 0:
        port = int(sock.getsockname()[1])
        app.answer_as(host, port)
    url = address(host, port, token)
    if as_json:
        import json

        print(json.dumps({"url": url, "host": host, "port": port, "answer": answer}), flush=True)
    else:
        mode = "answers checkpoints and resolutions as you" if answer else "read-only"
        print(f"statedir serve: {url}  ({mode}; Ctrl-C stops)", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                            timeout_graceful_shutdown=1, lifespan="off", server_header=False)
    uvicorn.Server(config).run(sockets=[sock])
    sys.stdout.flush()
