"""Writers waiting for the store lock are served in the order they came (a ticket each in a
queue folder under .git/statedir/), and a ticket whose writer died holds no one up (issue 37,
point 4)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from statedir import api


def queue(repo: Path) -> Path:
    found = list((repo / ".git" / "statedir").glob("queue-*"))
    assert len(found) == 1
    return found[0]


def tickets(repo: Path) -> list[str]:
    return sorted(p.name for p in queue(repo).iterdir() if not p.name.startswith("new-"))


def test_waiting_writers_are_served_in_arrival_order(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="first")
    writers = []
    with sd.store.locked():  # the lock held: each writer that comes queues up behind the others
        for n in range(6):
            writers.append(subprocess.Popen(
                [sys.executable, "-P", "-m", "statedir", "set", "p1", "topic", f"w{n}", "--reason", "r", "--json"],
                cwd=repo, stdout=subprocess.PIPE, text=True))
            deadline = time.monotonic() + 60
            while len(tickets(repo)) < n + 2:  # this writer has its ticket before the next one starts
                assert writers[-1].poll() is None and time.monotonic() < deadline
                time.sleep(0.01)
    for writer in writers:
        out, _ = writer.communicate(timeout=120)
        assert writer.returncode == 0 and json.loads(out)["commit"]
    shas = subprocess.run(["git", "log", "--reverse", "--format=%H", "-6"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.split()
    topics = [sd.get("p1", "topic", at=sha) for sha in shas]  # the commits' order is the service's
    assert topics == [f"w{n}" for n in range(6)]
    assert sd.get("p1", "topic") == "w5"
    assert tickets(repo) == []  # every writer left the line


def test_a_dead_writers_ticket_is_passed_and_removed(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="first")
    sd.set("p1", "topic", "second", reason="r")  # the queue folder exists
    (queue(repo) / f"{0:020d}-99999-1").write_text("")  # a ticket before everyone's, flocked by no one
    sd.set("p1", "topic", "third", reason="r")
    assert sd.get("p1", "topic") == "third"
    assert tickets(repo) == []
