"""Stage 5 starts on the draft stage 4.5 passed (academic-pipeline 3.23, issue 33): a draft version
registered while the Stage 5 entry checkpoint is open makes both advisories STALE, and confirming
4.5 -> 5 is refused, nothing written, until the new draft passed integrity again and the advisories
were recorded again for it; a run made on 3.22 confirms as it always did."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.files import schema
from tests.support.runs import through_4_5, write_file
from tests.support.sim import INTEGRITY, Sim
from tests.support.util import CLEAR_ARGS, cli, cli_json, cli_refused, copy_of

DRAFT2 = "# Draft 2\n## Abstract\n## References\n"


@pytest.fixture
def advised(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    """4.5 PASS on paper_draft_v1, both advisories recorded for it: the Stage 5 entry checkpoint open."""
    def build(sd: api.StateDir) -> None:
        through_4_5(sd)
        sd.advisory("r", "tortured_phrase", file=str(sd.store.files_worktree / "tp.json"))
        sd.advisory("r", "cross_document", file=str(sd.store.files_worktree / "cd.json"))
    return copy_of("stage5-bound-draft", build, repo, tmp_path_factory)[0]


def bindings(moves: dict[str, object]) -> list[tuple[str, str, str]]:
    return [(a["kind"], a["version_label"], a["binding"]) for a in moves["advisories"]]  # type: ignore[index,union-attr]


def test_a_draft_registered_at_the_open_checkpoint_is_never_confirmed_into_stage_5(advised: api.StateDir,
                                                                                      repo: Path) -> None:
    write_file(advised, "draft2.md", DRAFT2)
    code, out = cli_json("material", "r", "revised_draft", "--file", "draft2.md", "--allow-untracked", cwd=repo)
    assert code == 0 and out["version_label"] == "paper_draft_v2", out  # type: ignore[index]
    error = cli_refused(repo, "PREREQUISITES_MISSING", "confirm", "r", "--response", "continue", "--format", "apa7")
    assert "paper_draft_v2" in error["message"] and "paper_draft_v1" in error["message"]
    assert "statedir redo RUN 4.5" in error["message"]
    assert error["details"]["version_label"] == "paper_draft_v2"
    assert error["details"]["passed_on"] == "paper_draft_v1"
    # the advisories read STALE everywhere, and next says what to do
    code, moves = cli_json("next", "r", cwd=repo)
    assert bindings(moves) == [("tortured_phrase", "paper_draft_v1", "STALE"),  # type: ignore[arg-type]
                               ("cross_document", "paper_draft_v1", "STALE")]
    blocked = [b for b in moves["blocked"] if b["move"]["command"] == "confirm"]  # type: ignore[index]
    assert blocked and "pass integrity on paper_draft_v2" in blocked[0]["needs"][0], moves
    likely = moves["moves"][0]  # type: ignore[index]
    assert (likely["command"], likely["allowed"]["stage"], likely.get("likely")) == ("redo", ["4.5"], True), likely
    text = cli("next", "r", cwd=repo).stdout
    assert "[STALE]" in text and "statedir redo RUN 4.5" in text
    assert "[STALE]" in cli("status", "r", cwd=repo).stdout
    ars = json.loads(cli("show", "r", "--format", "ars", cwd=repo).stdout)
    assert {a["binding"] for a in ars["stage5_advisories"]} == {"STALE"}
    # the new draft passes integrity again; the advisories are still for the old one
    assert cli("redo", "r", "4.5", "--reason", "the final check on draft 2", cwd=repo).returncode == 0
    assert cli("integrity", "r", "4.5", "PASS", "--refs-total", "1", "--refs-verified", "1",
               "--actor", INTEGRITY, cwd=repo).returncode == 0
    assert cli("checklist", "r", "4.5", *CLEAR_ARGS, "--actor", INTEGRITY, cwd=repo).returncode == 0
    assert cli("stage", "r", "4.5", "completed", cwd=repo).returncode == 0
    error = cli_refused(repo, "PREREQUISITES_MISSING", "confirm", "r", "--response", "continue")
    assert "tortured_phrase, cross_document name paper_draft_v1 (STALE)" in error["message"], error
    for kind, name in (("tortured_phrase", "tp.json"), ("cross_document", "cd.json")):
        assert cli("advisory", "r", kind, "--file", name, cwd=repo).returncode == 0
    code, out = cli_json("confirm", "r", "--response", "continue", "--format", "apa7", cwd=repo)
    assert code == 0 and out["next"] == "5", out  # type: ignore[index]
    assert bindings(advised.next("r")) == [("tortured_phrase", "paper_draft_v2", "CURRENT"),
                                           ("cross_document", "paper_draft_v2", "CURRENT")]
    assert cli("verify", cwd=repo).returncode == 0


def test_without_advisories_a_new_draft_is_refused_too(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("stage5-bound-plain", through_4_5, repo, tmp_path_factory)[0]
    assert not sd.next("r").get("advisories")
    sd.material("r", ["revised_draft"], files=[write_file(sd, "draft2.md", DRAFT2)])
    with pytest.raises(StatedirError) as exc:
        sd.confirm("r", response="continue")
    assert exc.value.code == "PREREQUISITES_MISSING" and "registered since" in exc.value.message


def at_entry(sim: Sim, new_draft: bool = True) -> None:
    """Accepted at 3, 4.5 passed on draft v1 with both advisories, then (`new_draft`) a draft v2 registered."""
    sim.research()
    sim.do("material", names=["paper_draft"], files=[{"path": "d1.md", "content_hash": "1" * 64}])
    sim.do("stage", stage="2", status="completed")
    sim.do("confirm", response="continue")
    sim.integrity_pass()
    sim.do("confirm", response="continue")
    sim.review("accept")
    sim.do("confirm", response="continue")
    sim.integrity_pass("4.5")
    for kind in ("tortured_phrase", "cross_document"):
        sim.do("advisory", kind=kind, file={"path": f"{kind}.json", "content_hash": "a" * 64})
    if new_draft:
        sim.do("material", names=["revised_draft"], files=[{"path": "d2.md", "content_hash": "2" * 64}])


def test_the_refusal_is_3_23s_template_data_and_a_3_22_run_confirms_as_before() -> None:
    same = Sim()
    at_entry(same, new_draft=False)  # the draft the pass and the advisories name: on it goes
    assert same.do("confirm", response="continue", format="apa7").result["next"] == "5"
    new = Sim()
    at_entry(new)
    with pytest.raises(StatedirError) as exc:
        new.do("confirm", response="continue")
    assert exc.value.code == "PREREQUISITES_MISSING"
    old = Sim(str(schema.data_dir("templates") / "academic-pipeline@3.22.yaml"))
    at_entry(old)
    assert "bound_entry" not in old.t.doc["entry_advisories"]
    assert old.do("confirm", response="continue").result["next"] == "5"
