"""Seed 002's Quick Start, every entry point through the real CLI: a topic (stage 1), a draft
(2.5), a reviewed paper (4, the reviewer comments brought), a final draft (5, on the passport of
a final integrity pass). Each run is driven by nothing but the moves `statedir next --json`
lists, down to `completed`, and the store verifies."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from statedir import api
from statedir.engine import template
from tests.support.next_driver import choose, command_line, fill_in, pick
from tests.support.util import cli, cli_json, copy_of, snapshot

TOPIC = "q1"
ACCEPT = {"decision": ["accept"], "verdict": ["PASS"], "response": ["continue"]}
# A file for any material: a heading for every field the template's schema checks ask of one.
SCHEMAS = template.load("academic-pipeline").doc["material_schemas"].values()
FIELDS = {field for spec in SCHEMAS for field in spec.get("fields", [])}
BODY = "".join(f"## {field.replace('_', ' ').title()}\nsome text\n\n" for field in sorted(FIELDS))


def statedir(repo: Path, *args: str) -> Any:
    code, out = cli_json(*args, cwd=repo)
    assert code == 0, (args, out)
    return out


def drive(repo: Path, run: str, taste: dict[str, list[str]]) -> list[tuple[str, ...]]:
    """Take the moves `next` lists (the driver's taste among them) until the run is completed;
    where none it takes is listed, register what a blocked move names, or record the re-review
    contract's next part. Returns the commands taken."""
    taken: list[tuple[str, ...]] = []
    for _ in range(80):
        out = statedir(repo, "next", run)
        if out["pipeline_state"] == "completed":
            return taken
        assert out["pipeline_state"] != "aborted", taken
        move = pick(out["moves"], taste)
        if move is None:  # the re-review contract part by part, then its check; else what a blocked move needs
            steps = fill_in(out)
            assert steps, (out, taken)
            for step in steps:
                if step["command"] == "contract":
                    (repo / f"{run}-{step['part']}.md").write_text(f"{step['part']}\n")
                    codes = [] if step["exit_code"] is None else ["--exit-code", str(step["exit_code"])]
                    statedir(repo, "contract", run, step["stage"], step["part"], "--file", f"{run}-{step['part']}.md",
                             *codes, "--actor", step["actor"])
                    taken.append(("contract", step["part"]))
                else:
                    (repo / f"{run}-{step['names']}.md").write_text(BODY)
                    statedir(repo, "material", run, step["names"], "--file", f"{run}-{step['names']}.md",
                             "--actor", step["actor"])
                    taken.append(("material", step["names"]))
            continue
        values = choose(move, taste)
        if move["command"] == "integrity":
            values.update(issues_found=0, issues_fixed=0)
        words = command_line(run, move, values)
        statedir(repo, *words)
        taken.append(tuple(words[:4]))
    raise AssertionError(f"run {run} did not end: {taken}")


def _topic_run(sd: api.StateDir) -> None:
    repo = sd.store.files_worktree
    statedir(repo, "new", TOPIC, "--topic", "AI and quality assurance in higher education")
    drive(repo, TOPIC, ACCEPT)


@pytest.fixture
def finished(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose topic run went from stage 1 to completed (made once per process, copied)."""
    copy_of("quick-start-topic", _topic_run, repo, tmp_path_factory)
    return repo


def ended_well(repo: Path, run: str) -> dict[str, Any]:
    """The run completed, every schema check a PASS, the store's history legal; its document."""
    doc = statedir(repo, "show", run)
    assert doc["pipeline_state"] == "completed" and doc["current_stage"] == "6"
    assert doc["stages"]["6"]["status"] == "completed"
    assert {e["result"] for e in statedir(repo, "show", run, "--format", "ars")["schema_validation_log"]} == {"PASS"}
    assert statedir(repo, "verify")["clean"]
    return doc  # type: ignore[no-any-return]


def draft_passport(repo: Path, at: str) -> tuple[Path, str]:
    """The topic run's draft passport as it stood after its integrity check `at` (2.5 or 4.5),
    written to a file the user brings, and the draft's file."""
    rel = f"state/runs/{TOPIC}/materials/paper_draft_v1.yaml"
    sha = subprocess.run(["git", "log", "-1", "--format=%H", f"--grep=integrity {at} PASS", "--", rel], cwd=repo,
                         capture_output=True, text=True, check=True).stdout.strip()
    text = subprocess.run(["git", "show", f"{sha}:{rel}"], cwd=repo, capture_output=True, text=True, check=True).stdout
    brought = repo / f"passport-after-{at}.yaml"
    brought.write_text(text)
    return brought, f"{TOPIC}-paper_draft.md"


@pytest.mark.slow  # a whole run through the CLI, one process a step
def test_a_topic_starts_at_stage_1_and_runs_to_completed(finished: Path) -> None:
    doc = ended_well(finished, TOPIC)
    assert doc["entry_point"] == "1"
    statuses = {sid: s["status"] for sid, s in doc["stages"].items()}
    assert statuses == {"1": "completed", "2": "completed", "2.5": "completed", "3": "completed", "4": "skipped",
                        "3p": "skipped", "4p": "skipped", "4.5": "completed", "5": "completed", "6": "completed"}
    passport = doc["passports"]["paper_draft_v1"]
    assert passport["verification_status"] == "VERIFIED" and passport["integrity_mode"] == "final-check"


@pytest.mark.slow  # a whole run through the CLI, one process a step
def test_a_draft_starts_at_integrity_and_runs_to_completed(sd: api.StateDir, repo: Path) -> None:
    statedir(repo, "new", "q2", "--topic", "my paper", "--entry-point", "2.5")
    taken = drive(repo, "q2", ACCEPT)
    assert taken[0] == ("material", "paper_draft")  # what stage 2.5 needs, registered first
    doc = ended_well(repo, "q2")
    assert [doc["stages"][s]["status"] for s in ("1", "2")] == ["skipped", "skipped"]
    assert doc["stages"]["2.5"]["mode"] == "pre-review" and doc["stages"]["2.5"]["verdict"] == "PASS"


@pytest.mark.slow  # a whole run through the CLI, one process a step
def test_a_reviewed_paper_enters_at_revise_with_its_comments(finished: Path) -> None:
    passport, draft = draft_passport(finished, "2.5")
    (finished / "comments.md").write_text("## Recommendation\nmajor revision\n\n## Comments\n1. ...\n")
    enter = ["new", "q3", "--topic", "reviewed", "--entry-point", "4", "--passport", passport.name,
             "--file", draft, "--confirm-skip"]
    before = snapshot(finished)
    code, out = cli_json(*enter, cwd=finished)
    assert code == 2 and "--entry-material" in out["error"]["message"], out  # type: ignore[index]
    assert snapshot(finished) == before
    statedir(finished, *enter, "--entry-material", "comments.md")
    doc = statedir(finished, "show", "q3")
    assert doc["materials"]["review_reports"] and doc["current_version"]["review"] == "review_v1"
    assert doc["passports"]["review_v1"]["files"][0]["path"] == "comments.md"  # registered at entry
    assert doc["stages"]["3"]["status"] == "skipped" and doc["stages"]["2.5"]["mode"] == "passport"
    taken = drive(finished, "q3", ACCEPT)
    assert ("material", "review_reports") not in taken and ("material", "revision_roadmap") in taken
    doc = ended_well(finished, "q3")
    assert [doc["stages"][s]["status"] for s in ("4", "3p", "4p", "4.5")] == [
        "completed", "completed", "skipped", "completed"]
    assert doc["stages"]["4.5"]["mode"] == "final-check"  # checked by the run itself, not by the passport


@pytest.mark.slow  # a whole run through the CLI, one process a step
def test_a_final_draft_enters_at_finalize_on_its_final_integrity_passport(finished: Path) -> None:
    (pre, draft), (final, _) = draft_passport(finished, "2.5"), draft_passport(finished, "4.5")
    (finished / "edited.md").write_text("an edited draft\n")
    enter = ["new", "q4", "--topic", "final", "--entry-point", "5", "--confirm-skip"]
    before = snapshot(finished)
    code, out = cli_json(*enter, "--passport", pre.name, "--file", draft, cwd=finished)
    assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION", out  # type: ignore[index]
    assert "never satisfied by an earlier stage's pass" in out["error"]["message"]  # type: ignore[index]
    code, out = cli_json(*enter, "--passport", final.name, "--file", "edited.md", cwd=finished)
    assert code == 1 and out["error"]["code"] == "CONTENT_CHANGED", out  # type: ignore[index]
    assert snapshot(finished) == before
    statedir(finished, *enter, "--passport", final.name, "--file", draft)
    entered = statedir(finished, "show", "q4")
    assert entered["materials"]["integrity_report_final"] and entered["stages"]["4.5"]["mode"] == "passport"
    assert cli("stage", "q4", "5", "in_progress", cwd=finished).returncode == 0  # the entry stage starts at once
    drive(finished, "q4", ACCEPT)
    doc = ended_well(finished, "q4")
    assert [doc["stages"][s]["status"] for s in ("2.5", "4.5", "5")] == ["completed", "completed", "completed"]
