"""The web view's pages: a Starlette app of GET routes over `PageReader`, rendered server-side
by Jinja2 templates shipped in the package, wrapped in `Guard`; with `answer`, also the POST
of an answer (statedir.web.answers). A refusal's next step (statedir.hints) is said in the words
the view is given for each request (`statedir serve` gives the command line's)."""
# Lazy imports: json: the web server's dependencies load when it serves, not when the CLI reads its commands.
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import (HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response,
                                 StreamingResponse)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from statedir.errors import BAD_INPUT, REFUSED, InvalidValue, StatedirError
from statedir.hints import PYTHON, WORDS, Words
from statedir.web import answers, ledger_tree
from statedir.web.guard import Guard
from statedir.web.reading import PageReader

HERE = Path(__file__).parent
POLL_SECONDS = 0.5  # how often the live stream looks at HEAD (two small file reads)


def _status(exc: StatedirError) -> int:
    if exc.code.startswith("UNKNOWN") or exc.code in ("INVALID_RUN_ID",):
        return 404
    return {BAD_INPUT: 400, REFUSED: 409}.get(exc.exit_code, 500)


def build(root: Path, *, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
          warm: bool = False, answer: bool = False, words: Words = PYTHON) -> Guard:
    """The whole ASGI app for the store at `root`, answering only as `host:port`; `warm` does the
    first page's once-only work now (templates compiled, schemas loaded, the first runs read);
    `answer` lets a run's page answer its open checkpoint or FAIL-loop resolution as the user;
    `words` says a refusal's next step (`statedir serve` hands the command line's)."""
    reader = PageReader(root)
    sessions = answers.Sessions() if answer else None
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["short"] = lambda sha: (sha or "")[:10]
    if warm:
        for name in env.list_templates():
            env.get_template(name)
        reader.runs_page()
    store_name = str(reader.sd.store.root)

    def page(request: Request, name: str, title: str, **context: Any) -> HTMLResponse:
        session, fresh = request.cookies.get(answers.SESSION_COOKIE), False
        if sessions is not None and not session:
            session, fresh = sessions.new(), True
        csrf = sessions.token(session) if sessions is not None and session else None
        html = env.get_template(name).render(title=title, store=store_name, head=reader.head(),
                                             path=request.url.path, answering=answer, csrf=csrf, **context)
        response = HTMLResponse(html, headers={"cache-control": "no-store"})
        if fresh and session:
            response.headers.append("set-cookie", answers.Sessions.cookie(session))
        return response

    def failed(request: Request, exc: StatedirError, status: int | None = None) -> HTMLResponse:
        exc.reword(words)  # one made outside a request's words (the app's own start) is said in them too
        html = env.get_template("error.html").render(title=exc.code, store=store_name, head=reader.head(),
                                                     path=request.url.path, error=exc.as_json()["error"],
                                                     answering=answer, run_id=request.path_params.get("run_id"))
        return HTMLResponse(html, status_code=status or _status(exc), headers={"cache-control": "no-store"})

    def runs(request: Request) -> HTMLResponse:
        text = request.query_params.get("q", "")[:200]
        state = request.query_params.get("state", "")[:60]
        after = request.query_params.get("after", "")[:200]
        sort = "changed" if request.query_params.get("sort") == "changed" and not state else ""
        number = request.query_params.get("page", "1")[:9]
        if sort:  # the most recently changed first: paged by number, as the log is read
            listing = reader.changed_page(text=text, page=int(number) if number.isdigit() and int(number) > 0 else 1)
        else:
            listing = reader.runs_page(text=text, state=state, after=after)
        return page(request, "runs.html", "Runs", listing=listing, q=text, state=state, after=after,
                    states=reader.states(), sort=sort)

    def run(request: Request) -> HTMLResponse:
        run_id = request.path_params["run_id"]
        found = reader.run(run_id)
        answered = request.query_params.get("answered", "")[:40]
        return page(request, "run.html", f"Run {run_id}", run_id=run_id,
                    forms=answers.forms(found["next"]["moves"]) if answer else [],
                    answered=answered if answered.isalnum() else "", **found)

    async def answer_posted(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        body = await request.body()
        if sessions is None:
            raise InvalidValue("this server answers nothing (statedir serve --answer)")
        fields = answers.parse(body, request.headers.get("content-type", ""))
        if not sessions.holds(request.cookies.get(answers.SESSION_COOKIE), fields.get("csrf")):
            return PlainTextResponse("the form's CSRF token is missing or not this session's: reload the run's "
                                     "page and answer again\n", status_code=403)

        def recorded() -> dict[str, Any]:
            with reader.lock:
                return answers.record(reader.sd, run_id, fields)
        done = await run_in_threadpool(recorded)
        return RedirectResponse(f"/runs/{quote(run_id)}?answered={done['commit']}", 303)

    def history(request: Request) -> HTMLResponse:
        run_id = request.path_params["run_id"]
        return page(request, "history.html", f"History of {run_id}", run_id=run_id, **reader.history(run_id))

    def diff(request: Request) -> HTMLResponse:
        run_id, commit = request.path_params["run_id"], request.path_params["commit"]
        found = reader.diff(run_id, commit)
        return page(request, "diff.html", f"{run_id} at {commit[:10]}", run_id=run_id, diff=found, entry=found["entry"])

    def at(request: Request) -> HTMLResponse:
        import json

        run_id, commit = request.path_params["run_id"], request.path_params["commit"]
        found = reader.at(run_id, commit)
        found["document"] = json.dumps(found["document"], indent=2, ensure_ascii=False)
        return page(request, "at.html", f"{run_id} as of {commit[:10]}", run_id=run_id, commit=commit,
                    raw=request.query_params.get("raw") == "1", **found)

    def bus(request: Request) -> HTMLResponse:
        return page(request, "bus.html", "Bus sessions", sessions=reader.bus())

    def research(request: Request) -> HTMLResponse:
        return page(request, "research.html", "Research ledger", projects=ledger_tree.tree(reader.research()))

    def head(request: Request) -> JSONResponse:
        return JSONResponse({"head": reader.head()}, headers={"cache-control": "no-store"})

    async def events(request: Request) -> StreamingResponse:
        async def stream() -> AsyncIterator[str]:
            seen, quiet = None, 0.0
            while not await request.is_disconnected():
                now = reader.head()
                if now != seen:
                    seen, quiet = now, 0.0
                    yield f"event: head\ndata: {now or ''}\n\n"
                elif quiet > 15:
                    quiet = 0.0
                    yield ": still here\n\n"
                await asyncio.sleep(POLL_SECONDS)
                quiet += POLL_SECONDS
        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"cache-control": "no-store", "x-accel-buffering": "no"})

    async def not_found(request: Request, exc: Exception) -> Response:
        return failed(request, InvalidValue(f"no page at {request.url.path}"), 404)

    routes = [
        Route("/", runs), Route("/runs/{run_id}", run), Route("/runs/{run_id}/history", history),
        Route("/runs/{run_id}/answer", answer_posted, methods=["POST"]),
        Route("/runs/{run_id}/commits/{commit}", diff), Route("/runs/{run_id}/at/{commit}", at),
        Route("/favicon.ico", lambda request: RedirectResponse("/static/icon.svg", 301)),
        Route("/bus", bus), Route("/research", research), Route("/head", head), Route("/events", events),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    def refused(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, StatedirError):
            raise exc
        return failed(request, exc)

    app = Starlette(routes=routes, exception_handlers={StatedirError: refused, 404: not_found})
    return Guard(_Worded(app, words), host=host, port=port, token=token, answer=answer)


class _Worded:
    """The app with `words` set for each request (statedir.hints.WORDS; the worker threads the
    routes run in inherit it): a message, a warning or a blocked move's need names its next step
    in them where it is made."""

    def __init__(self, app: Any, words: Words) -> None:
        self.app = app
        self.words = words

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        said = WORDS.set(self.words)
        try:
            await self.app(scope, receive, send)
        finally:
            WORDS.reset(said)
