"""The prohibited transitions against a real store: refused, and the store byte-identical."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from statedir import api
from tests.support.isolation import isolated_at
from tests.support.util import clear_checklist, cli_json, contract_holds, snapshot

INTEGRITY = "integrity_verification"


def drive(sd: api.StateDir, until: str, reached: Callable[[str], None] = lambda stage: None) -> None:
    """Complete stages up to `until` (which is left completed with its checkpoint open); `reached`
    is called with each stage as it is left so."""
    sd.new("r1", topic="t")
    sd.stage("r1", "1", "in_progress")
    sd.material("r1", ["paper_draft"])
    steps = ["1", "2", "2.5", "3", "4", "3p", "4.5", "5"]
    for stage in steps:
        if stage in ("2.5", "4.5"):
            sd.integrity("r1", stage, "PASS", refs_total=1, refs_verified=1, actor=INTEGRITY)
            clear_checklist(sd, "r1", stage)
        if stage == "3":
            sd.material("r1", ["review_reports"])
            sd.material("r1", ["revision_roadmap"])
        if stage == "4":
            sd.material("r1", ["revised_draft"])
            sd.revision("r1", items_total=1, items_addressed=1)
        decision = {"3": "major_revision", "3p": "accept"}.get(stage)
        if stage == "3p":
            contract_holds(sd, "r1")
        sd.stage("r1", stage, "completed", decision=decision)
        reached(stage)
        if stage == until:
            return
        sd.confirm("r1", response="continue", format="apa7" if stage == "4.5" else None)  # 4.5: the Stage 5 entry


@pytest.fixture(scope="module")
def at_each_stage(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """For each stage up to 5, a repository whose run r1 has it completed with its checkpoint open:
    the run driven once for the module, a copy kept as each stage is reached."""
    root = tmp_path_factory.mktemp("graph-store")
    work = root / "work"
    kept: dict[str, Path] = {}

    def keep(stage: str) -> None:
        kept[stage] = root / f"at-{stage}"
        shutil.copytree(work, kept[stage], symlinks=True)

    with isolated_at(root):
        subprocess.run(["git", "init", "-q", str(work)], check=True)
        api.init(work / "state")
        drive(api.StateDir(work / "state"), "5", keep)
    return kept


@pytest.mark.parametrize("source,target", [("1", "3"), ("2", "3"), ("4", "5"), ("3p", "5"), ("5", "3"),
                                           ("2.5", "5"), ("4", "4.5")])
def test_prohibited_or_unlinked_moves_change_nothing(repo: Path, at_each_stage: dict[str, Path], source: str,
                                                     target: str) -> None:
    shutil.copytree(at_each_stage[source], repo, symlinks=True, dirs_exist_ok=True)
    before = snapshot(repo)
    code, out = cli_json("confirm", "r1", "--next", target, "--response", "continue", cwd=repo)
    assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION"  # type: ignore[index]
    assert snapshot(repo) == before


def test_completed_stage_cannot_go_back_to_in_progress(repo: Path, at_each_stage: dict[str, Path]) -> None:
    shutil.copytree(at_each_stage["2"], repo, symlinks=True, dirs_exist_ok=True)
    before = snapshot(repo)
    code, out = cli_json("stage", "r1", "1", "in_progress", cwd=repo)
    assert code == 1 and "redo" in out["error"]["message"]  # type: ignore[index]
    assert snapshot(repo) == before
