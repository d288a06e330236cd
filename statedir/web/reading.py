"""What the pages show, read through statedir.api: one StateDir kept open, read one request
at a time, and the runs listing paged over run ids so 10,000 runs never open at once (a
run's summary is remembered until a commit changes the run)."""
# Lazy imports: web.stage_svg, time: the web server's dependencies load when it serves, not when the CLI reads its
#   commands.
from __future__ import annotations

import bisect
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statedir.api import StateDir, places
from statedir.errors import InvalidValue, StatedirError

PAGE = 50
HISTORY = 200  # commits a run's history page shows (and verify replays), newest first
BUS_HISTORY = 100  # commits of a bus session its page lists
LOG_ENTRIES = 200  # entries of each log a run's page shows, newest first
SCAN_SECONDS = 0.5  # how long a filtered listing reads runs before it answers with what it found
SCAN_BATCH = 20  # runs read between two looks at the clock
_COMMIT = re.compile(r"[0-9a-f]{4,40}")


@dataclass
class RunsPage:
    rows: list[dict[str, Any]]
    total: int  # runs in the store
    next_after: str | None  # the cursor of the next page, None on the last
    searched_to: str | None = None  # a filter's scan stopped here (time budget) before the page filled
    matched: int | None = None  # runs the id filter matches (None: a state filter, not known without reading all)
    page: int | None = None  # this page's number, where pages are known (no state filter)
    prev_after: str | None = None  # the cursor of the page before ("" the first), None on the first
    pages: list[tuple[int, str]] | None = None  # (number, cursor) of the pages to link: the first, the last, the near


def _numbered(every: list[str], start: int, size: int) -> dict[str, Any]:
    """Where a page starting at position `start` of `every` stands: its number, the cursor of the
    page before, and the pages to link (the first, the last, three either side of this one)."""
    count = max(1, -(-len(every) // size))
    number = start // size + 1
    near = sorted({1, count, *range(max(1, number - 3), min(count, number + 3) + 1)})

    def cursor(page: int) -> str:
        return every[(page - 1) * size - 1] if page > 1 else ""

    return {"matched": len(every), "page": number, "pages": [(n, cursor(n)) for n in near],
            "prev_after": cursor(number - 1) if number > 1 else None}


def _bus_rows(session: str, data: Any, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A session's values as rows {field, value, last}: each leaf by its dotted path, `last` the
    newest history entry that set or appended it (None where it is older than the history shown)."""
    rows: list[dict[str, Any]] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else str(key))
            return
        last = next((e for e in history if any(str(e.get("summary") or "").startswith(f"bus {verb} {session} {path} ")
                                               for verb in ("set", "append"))), None)
        shown = ", ".join(map(str, node)) if isinstance(node, list) else "" if node is None else str(node)
        rows.append({"field": path, "value": shown, "last": last})

    walk({k: v for k, v in (data or {}).items() if k != "session"}, "")
    return rows


def check_commit(commit: str) -> str:
    """A commit as the pages name one: hex only, so nothing else reaches git."""
    if not _COMMIT.fullmatch(commit):
        raise InvalidValue(f"{commit!r} is not a commit id (4 to 40 hex digits)", commit=commit)
    return commit


class PageReader:
    """The open store and what the pages ask of it."""

    def __init__(self, root: Path) -> None:
        self.sd = StateDir(root)
        self.lock = threading.Lock()  # one StateDir, read by one request at a time
        # What the runs page read, as of commit `_seen`: a moved HEAD forgets only the runs it changed.
        self._seen: str | None = None
        self._ids: list[str] = []
        self._summaries: dict[str, dict[str, Any]] = {}
        # The runs by last change, newest first, as far as the log was read (as of HEAD `_order_head`).
        self._order_head: str | None = None
        self._order: list[str] = []
        self._order_cursor: str | None = "start"

    def head(self) -> str | None:
        return self.sd.head()

    def _catch_up(self) -> None:
        head = self.sd.head()
        if head == self._seen and self._ids:
            return
        changed: set[str] | None = None
        if head is not None and self._seen is not None:
            try:
                changed = self.sd.changed_runs(self._seen, head)
            except StatedirError:  # the old commit is gone (history rewritten): start again
                changed = None
        if changed is None:
            self._summaries = {}
        else:
            for run_id in changed:
                self._summaries.pop(run_id, None)
        if changed is None or not changed <= set(self._ids) or not self._ids:
            self._ids = self.sd.run_ids()  # a run came (or the listing is new): list them again
        self._seen = head

    def _summaries_of(self, run_ids: list[str]) -> list[dict[str, Any]]:
        missing = [r for r in run_ids if r not in self._summaries]
        for summary in self.sd.run_summaries(missing) if missing else []:
            if summary.get("error", {}).get("code") == "UNKNOWN_RUN":  # its folder went away
                self._ids.remove(summary["run_id"])
                continue
            self._summaries[summary["run_id"]] = summary
        return [self._summaries[r] for r in run_ids if r in self._summaries]

    def runs_page(self, *, text: str = "", state: str = "", after: str = "", size: int = PAGE,
                  budget: float = SCAN_SECONDS) -> RunsPage:
        """The runs after `after` (by id) whose id holds `text` and whose pipeline state is
        `state`. Only the runs a page shows are opened; a state filter opens runs in batches
        until the page is full or `budget` seconds have passed (then `searched_to` says where
        it stopped, and the next request goes on from there)."""
        import time

        with self.lock:
            self._catch_up()
            ids = self._ids
            wanted = ids[bisect.bisect_right(ids, after):] if after else ids
            if text:
                wanted = [r for r in wanted if text.lower() in r.lower()]
            if not state:
                every = [r for r in ids if text.lower() in r.lower()] if text else ids
                rows = self._summaries_of(wanted[:size])
                return RunsPage(rows, len(ids), rows[-1]["run_id"] if len(wanted) > size else None,
                                **_numbered(every, len(every) - len(wanted), size))
            rows, deadline, position = [], time.monotonic() + budget, 0
            while position < len(wanted) and len(rows) < size:
                batch = wanted[position:position + SCAN_BATCH]
                position += len(batch)
                rows += [s for s in self._summaries_of(batch) if s.get("pipeline_state") == state]
                if len(rows) < size and time.monotonic() > deadline and position < len(wanted):
                    return RunsPage(rows, len(ids), wanted[position - 1], searched_to=wanted[position - 1])
            rows = rows[:size]
            more = len(rows) == size and rows[-1]["run_id"] != wanted[-1]
            return RunsPage(rows, len(ids), rows[-1]["run_id"] if more else None)

    def changed_page(self, *, text: str = "", page: int = 1, size: int = PAGE) -> RunsPage:
        """Page `page` of the runs whose id holds `text`, the most recently changed first: the log
        read newest first only as far as the page needs (and kept while HEAD stands)."""
        with self.lock:
            self._catch_up()
            if self._order_head != self._seen:
                self._order_head, self._order, self._order_cursor = self._seen, [], "start"
            start = (page - 1) * size
            known, seen = set(self._ids), set(self._order)

            def matching() -> list[str]:
                return [r for r in self._order if text.lower() in r.lower()] if text else self._order
            while len(matching()) <= start + size and self._order_cursor is not None:
                found = self.sd.log_page(cursor=self._order_cursor, limit=500)
                for entry in found["entries"]:
                    run = entry.get("run_id")
                    if run in known and run not in seen:
                        seen.add(run)
                        self._order.append(run)
                self._order_cursor = found["next_cursor"]
                if self._order_cursor is None:  # the log read to its end: a run no commit names comes last
                    self._order += [r for r in self._ids if r not in seen]
            ordered = matching()
            rows = self._summaries_of(ordered[start:start + size])
            every = len(ordered) if self._order_cursor is None else None
            count = max(1, -(-(every if every is not None else len(self._ids)) // size))
            near = sorted({1, count, *range(max(1, page - 3), min(count, page + 3) + 1)})
            return RunsPage(rows, len(self._ids), str(page + 1) if len(ordered) > start + size else None,
                            matched=every if text else len(self._ids), page=page,
                            prev_after=str(page - 1) if page > 1 else None,
                            pages=[(n, str(n)) for n in near])

    def states(self) -> list[str]:
        """The pipeline states the runs page offers: the default template's, then any other a run shown had."""
        with self.lock:
            seen = [str(s.get("pipeline_state")) for s in self._summaries.values() if s.get("pipeline_state")]
            return list(dict.fromkeys([*self.sd.pipeline_states(), *sorted(seen)]))

    def run(self, run_id: str) -> dict[str, Any]:
        """Everything a run's page shows."""
        from statedir.web import stage_svg

        places.checked_run_id(run_id)
        with self.lock, self.sd.reading():
            status = self.sd.status(run_id)
            t, run, _ = self.sd.load(run_id)
            histories = self.sd.histories(run_id, t)
            return {"status": status, "next": self.sd.next(run_id), "passports": self.sd.passports(run_id, t),
                    "histories": {name: {"total": len(entries), "newest": entries[-LOG_ENTRIES:][::-1]}
                                  for name, entries in histories.items()},
                    "graph": stage_svg.draw(t, run), "summary": self.sd.run_summary(run_id)}

    def history(self, run_id: str) -> dict[str, Any]:
        """The run's newest HISTORY commits, newest first, each with its verify findings (verify
        replays the commits shown) and whether it is signed."""
        places.checked_run_id(run_id)
        with self.lock:
            entries = self.sd.log(run_id, limit=HISTORY + 1)
            truncated = len(entries) > HISTORY
            entries = entries[:HISTORY]
            checked = self.sd.verify(run_id, newest=HISTORY)  # the commits shown, from the run's own listing
            signed = self.sd.signed(run_id, limit=HISTORY)
            signing = bool(self.sd.signers())  # "not signed" says something only where someone is bound
        findings: dict[str, list[dict[str, Any]]] = {}
        for finding in checked["findings"]:
            findings.setdefault(finding.get("commit") or "", []).append(finding)
        for finding in checked.get("acknowledged", []):  # reviewed and accepted: marked, as such
            findings.setdefault(finding.get("commit") or "", []).append({**finding, "acknowledged": True})
        for entry in entries:
            entry["findings"] = findings.get(entry["commit"], [])
            entry["signed"] = entry["commit"] in signed
        return {"entries": entries, "verify": checked, "truncated": truncated, "signing": signing}

    def diff(self, run_id: str, commit: str) -> dict[str, Any]:
        """What `commit` changed in the run (from its parent; a run's first commit: from nothing)."""
        places.checked_run_id(run_id)
        check_commit(commit)
        with self.lock:
            entries = self.sd.log(run_id)
            position = next((i for i, e in enumerate(entries) if e["commit"].startswith(commit)), None)
            if position is None:
                raise InvalidValue(f"commit {commit} did not touch run {run_id}", commit=commit, run_id=run_id)
            entry = entries[position]
            if position + 1 < len(entries):
                result = self.sd.diff(run_id, entries[position + 1]["commit"], entry["commit"])
            else:
                result = {"run_id": run_id, "from": None, "to": entry["commit"], "changes": [],
                          "created": True}
            return {**result, "entry": entry}

    def at(self, run_id: str, commit: str) -> dict[str, Any]:
        """The run's page as it was at `commit` (dashboard, graph, checkpoint, materials, logs),
        and the whole run document (`show --at`)."""
        from statedir.web import stage_svg

        places.checked_run_id(run_id)
        check_commit(commit)
        with self.lock:
            snap = self.sd.snapshot(run_id, commit)
            status = self.sd.status(run_id, at=commit)
            return {"status": status, "graph": stage_svg.draw(snap.template, snap.run),
                    "passports": snap.passports,
                    "histories": {name: {"total": len(entries), "newest": entries[-LOG_ENTRIES:][::-1]}
                                  for name, entries in snap.histories.items()},
                    "document": self.sd.show(run_id, at=commit)}

    def bus(self) -> list[dict[str, Any]]:
        """Every bus session: its values, each with when and by whom it was last set, and its
        history (newest first); one that cannot be read is shown with its error."""
        out = []
        with self.lock:
            for name in self.sd.bus_sessions():
                history = self.sd.bus_history(name, limit=BUS_HISTORY)
                try:
                    data = self.sd.bus(name).get()
                except StatedirError as exc:
                    out.append({"session": name, "rows": [], "history": history, "error": exc.as_json()["error"]})
                    continue
                out.append({"session": name, "rows": _bus_rows(name, data, history), "history": history})
        return out

    def research(self) -> dict[str, list[dict[str, Any]]]:
        kinds = ("project", "question", "hypothesis", "experiment", "run", "source", "evidence", "result", "claim")
        with self.lock:
            return {kind: self.sd.research_records(kind) for kind in kinds}
