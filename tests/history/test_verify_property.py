"""Properties: random legal sequences of transitions always verify clean; any single random
byte edit of a committed store file, committed by hand or under a transition's forged
message, is always reported."""
from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from statedir import api
from statedir.errors import StatedirError
from tests.support.history import INTEGRITY, git

pytestmark = pytest.mark.slow  # random transition sequences and byte edits, property-based

Step = Callable[[api.StateDir], Any]
STEPS: list[Step] = [
    *(lambda sd, s=s: sd.stage("p1", s, "in_progress") for s in ("1", "2", "2.5", "3")),
    *(lambda sd, s=s: sd.stage("p1", s, "completed", reason="enough") for s in ("1", "2", "2.5")),
    lambda sd: sd.confirm("p1", response="continue"),
    lambda sd: sd.confirm("p1", response="just-continue"),
    *(lambda sd, m=m: sd.material("p1", [m]) for m in ("rq_brief", "paper_draft", "review_reports")),
    lambda sd: sd.output("p1", "1", ["notes"], actor="deep-research"),
    lambda sd: sd.pipeline("p1", "paused", reason="a break"),
    lambda sd: sd.pipeline("p1", "running"),
    lambda sd: sd.set("p1", "topic", "a new topic", reason="sharper"),
    lambda sd: sd.integrity("p1", "2.5", "FAIL", refs_total=5, refs_verified=3, actor=INTEGRITY),
    lambda sd: sd.integrity("p1", "2.5", "PASS", refs_total=5, refs_verified=5, actor=INTEGRITY),
    lambda sd: sd.redo("p1", "1", reason="again"),
]
ROLLBACK = len(STEPS)  # a step number that rolls back to an earlier commit of the run


def legal_history(repo: Path, plan: list[tuple[int, int]]) -> api.StateDir:
    """Init, a run, then each planned step that the rules accept (a refused one changes nothing)."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    commits = [sd.new("p1", topic="a topic")["commit"]]
    for step, pick in plan:
        try:
            if step == ROLLBACK:
                result = sd.rollback("p1", to=commits[pick % len(commits)], reason="back")
            else:
                result = STEPS[step](sd)
        except StatedirError:
            continue
        commits.append(result["commit"])
    return sd


PLANS = st.lists(st.tuples(st.integers(0, ROLLBACK), st.integers(0, 1000)), min_size=1, max_size=14)
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(plan=PLANS)
def test_random_legal_sequences_verify_clean(isolated: Path, plan: list[tuple[int, int]]) -> None:
    with tempfile.TemporaryDirectory(dir=isolated) as work:
        sd = legal_history(Path(work), plan)
        result = sd.verify()
        assert result["clean"], result["findings"]
        assert result["checked"] == len(sd.log())


@SETTINGS
@given(plan=PLANS, pick=st.integers(0, 10**6), offset=st.integers(0, 10**6), byte=st.integers(0, 255),
       forged=st.booleans())
def test_any_byte_edit_committed_by_hand_is_reported(isolated: Path, plan: list[tuple[int, int]], pick: int,
                                                     offset: int, byte: int, forged: bool) -> None:
    with tempfile.TemporaryDirectory(dir=isolated) as work:
        repo = Path(work)
        sd = legal_history(repo, plan)
        files = git(repo, "ls-files", "state/runs").split()
        path = files[pick % len(files)]
        data = bytearray((repo / path).read_bytes())
        assume(data)
        at = offset % len(data)
        assume(data[at] != byte)
        data[at] = byte
        message = git(repo, "log", "-1", "--format=%B")
        if forged:  # the last transition's commit remade with the edit, its message kept
            git(repo, "reset", "-q", "--soft", "HEAD~1")
        (repo / path).write_bytes(bytes(data))
        git(repo, "add", "--", path)
        if not forged:
            message = "an edit by hand"
        proc = subprocess.run(["git", "commit", "-q", "-F", "-"], cwd=repo, input=message.encode(), check=False,
                              capture_output=True)
        assume(proc.returncode == 0)
        # git's own eol=lf normalization may undo an edited CR; only a real edit counts
        assume(subprocess.run(["git", "show", f"HEAD:{path}"], cwd=repo, capture_output=True).stdout == bytes(data))
        result = sd.verify()
        sha = git(repo, "rev-parse", "HEAD").strip()
        assert not result["clean"]
        assert any(f["commit"] == sha for f in result["findings"]), result
