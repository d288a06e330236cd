"""What the pages show, read through statedir.api: one StateDir kept open, read one request
at a time, and the runs listing paged over run ids so 10,000 runs never open at once (a
run's summary is remembered until HEAD moves)."""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statedir.api import StateDir
from statedir.errors import InvalidValue, StatedirError
from statedir.store import layout

PAGE = 50
_COMMIT = re.compile(r"^[0-9a-f]{4,40}$")


@dataclass
class RunsPage:
    rows: list[dict[str, Any]]
    total: int  # runs in the store
    next_after: str | None  # the cursor of the next page, None on the last


def check_commit(commit: str) -> str:
    """A commit as the pages name one: hex only, so nothing else reaches git."""
    if not _COMMIT.match(commit):
        raise InvalidValue(f"{commit!r} is not a commit id (4 to 40 hex digits)", commit=commit)
    return commit


class Reader:
    """The open store and what the pages ask of it."""

    def __init__(self, root: Path) -> None:
        self.sd = StateDir(root)
        self.lock = threading.Lock()  # one StateDir, read by one request at a time
        self._summaries: dict[str, dict[str, Any]] = {}
        self._summaries_at: str | None = None

    def head(self) -> str | None:
        return self.sd.head()

    def runs_page(self, *, text: str = "", state: str = "", after: str = "", size: int = PAGE) -> RunsPage:
        """The runs after `after` (by id) whose id holds `text` and whose pipeline state is
        `state`: only the runs a page shows (or a state filter skips) are opened."""
        with self.lock:
            head = self.sd.head()
            if head != self._summaries_at:
                self._summaries, self._summaries_at = {}, head
            ids = self.sd.run_ids()
            wanted = [r for r in ids if r > after] if after else ids
            if text:
                wanted = [r for r in wanted if text.lower() in r.lower()]
            rows: list[dict[str, Any]] = []
            next_after = None
            for run_id in wanted:
                if len(rows) == size:
                    next_after = rows[-1]["run_id"]
                    break
                summary = self._summaries.get(run_id)
                if summary is None:
                    summary = self._summaries[run_id] = self.sd.run_summary(run_id)
                if not state or summary.get("pipeline_state") == state:
                    rows.append(summary)
            return RunsPage(rows, len(ids), next_after)

    def run(self, run_id: str) -> dict[str, Any]:
        """Everything a run's page shows."""
        from statedir.web import stage_svg

        layout.check_run_id(run_id)
        with self.lock, self.sd.reading():
            status = self.sd.status(run_id)
            t, run, _ = self.sd.load(run_id)
            return {"status": status, "next": self.sd.next(run_id), "passports": self.sd.passports(run_id, t),
                    "histories": self.sd.histories(run_id, t), "graph": stage_svg.draw(t, run),
                    "summary": self.sd.run_summary(run_id)}

    def history(self, run_id: str) -> dict[str, Any]:
        """The run's commits, newest first, each with its verify findings and whether it is signed."""
        layout.check_run_id(run_id)
        with self.lock:
            entries = self.sd.log(run_id)
            checked = self.sd.verify(run_id)
            signed = self.sd.signed(run_id)
        findings: dict[str, list[dict[str, Any]]] = {}
        for finding in checked["findings"]:
            findings.setdefault(finding.get("commit") or "", []).append(finding)
        for entry in entries:
            entry["findings"] = findings.get(entry["commit"], [])
            entry["signed"] = entry["commit"] in signed
        return {"entries": entries, "verify": checked}

    def diff(self, run_id: str, commit: str) -> dict[str, Any]:
        """What `commit` changed in the run (from its parent; a run's first commit: from nothing)."""
        layout.check_run_id(run_id)
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
        """The whole run as of `commit` (`show --at`)."""
        layout.check_run_id(run_id)
        check_commit(commit)
        with self.lock:
            return self.sd.show(run_id, at=commit)

    def bus(self) -> list[dict[str, Any]]:
        """Every bus session's fields; one that cannot be read is shown with its error."""
        out = []
        with self.lock:
            for name in self.sd.bus_sessions():
                try:
                    out.append({"session": name, "data": self.sd.bus(name).get()})
                except StatedirError as exc:
                    out.append({"session": name, "data": {}, "error": exc.as_json()["error"]})
        return out

    def research(self) -> dict[str, list[dict[str, Any]]]:
        kinds = ("project", "question", "hypothesis", "experiment", "run", "source", "evidence", "result", "claim")
        with self.lock:
            return {kind: self.sd.research_records(kind) for kind in kinds}
