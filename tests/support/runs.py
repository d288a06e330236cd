"""Runs driven through the API to the point a test starts from (built once per test process with
util.copy_of): the Stage 5 entry checkpoint, 2.5 with compliance reports at hand, stage 3' under the
re-review contract; and the Sim's run to stage 5 and the academic template before its gates."""
from __future__ import annotations

import json

from statedir import api
from statedir.files import schema
from tests.support.sim import Sim
from tests.support.util import clear_checklist, to_integrity

# The academic template as it was before its integrity gates (3.21: a free-text FAIL-loop decision
# given as --reason); runs made on it keep these rules (tests/engine/rules/test_gates.py: the rules of 3.22 on).
OLD_ACADEMIC = str(schema.data_dir("templates") / "academic-pipeline@3.21.yaml")
DRAFT = "# Draft\n## Abstract\n## References\n"  # a paper draft's file, its headings all there


def finish_to_five(sim: Sim) -> None:
    sim.to_review()
    sim.review("accept")
    sim.do("confirm", response="continue")
    sim.integrity_pass("4.5")
    sim.do("confirm", response="continue", format="apa7")
    sim.do("material", names=["final_paper"])
    sim.do("stage", stage="5", status="completed")


def write_file(sd: api.StateDir, name: str, text: str) -> str:
    path = sd.store.files_worktree / name
    path.write_text(text)
    return str(path)


def report(prisma: str = "pass", raise_: str = "pass", overall: str = "pass", mode: str = "standard") -> str:
    body = lambda d: {"items": [{"id": "item-1", "verdict": d}], "decision": d}  # noqa: E731
    return json.dumps({"mode": mode, "tier": "T2", "overall_decision": overall,
                       "frameworks": {"PRISMA-trAIce": body(prisma), "RAISE": body(raise_)}})


def through_4_5(sd: api.StateDir, run: str = "r", settings: list[str] | None = None, mode: str | None = None) -> None:
    """A run whose draft (with its file) passed 2.5, was accepted at 3 and passed 4.5: the Stage 5
    entry checkpoint open."""
    to_integrity(sd, run, "4.5", settings=settings, mode=mode, draft=[write_file(sd, "draft.md", DRAFT)])
    sd.integrity(run, "4.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    clear_checklist(sd, run, "4.5")
    sd.stage(run, "4.5", "completed")
    for name in ("tp.json", "cd.json"):
        write_file(sd, name, "{}\n")


def at_2_5(sd: api.StateDir, run: str = "r", mode: str | None = None) -> None:
    to_integrity(sd, run, mode=mode, draft=[write_file(sd, "draft.md", DRAFT)])
    sd.integrity(run, "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    clear_checklist(sd, run)
    write_file(sd, "block.json", report(prisma="block", overall="block"))
    write_file(sd, "warn.json", report(raise_="warn", overall="warn"))
    write_file(sd, "bad.json", json.dumps({"mode": "standard", "frameworks": {}}))


PARTS = ("manifest", "criteria", "evidence", "claims")


def at_major_revision(sd: api.StateDir, run: str = "r1", settings: list[str] | None = None, *, topic: str = "t",
                      refs: int = 1, issues: int | None = None) -> None:
    """Stage 3 completed with a major revision after 2.5 passed (`refs` references, all verified,
    `issues` issues found, all fixed): its MANDATORY checkpoint open."""
    to_integrity(sd, run, topic=topic, settings=settings)
    sd.integrity(run, "2.5", "PASS", refs_total=refs, refs_verified=refs, issues_found=issues, issues_fixed=issues,
                 actor="integrity_verification")
    clear_checklist(sd, run)
    sd.stage(run, "2.5", "completed")
    sd.confirm(run, response="continue")
    sd.material(run, ["review_reports"])
    sd.material(run, ["revision_roadmap"])
    sd.stage(run, "3", "completed", decision="major_revision")


def at_re_review(sd: api.StateDir, run: str = "r1", settings: list[str] | None = None, *, topic: str = "t",
                 refs: int = 1, issues: int | None = None, items: int = 1) -> None:
    """Stage 3' in progress after a major revision at 3 (at_major_revision's checkpoint answered) and
    its revision round (`items` revision items, all addressed)."""
    at_major_revision(sd, run, settings, topic=topic, refs=refs, issues=issues)
    sd.confirm(run, response="continue")
    sd.material(run, ["revised_draft"])
    sd.revision(run, items_total=items, items_addressed=items)
    sd.stage(run, "4", "completed")
    sd.confirm(run, response="continue")


def parts(sd: api.StateDir, upto: int = 4) -> None:
    """Run r1's first `upto` parts of the re-review contract recorded, from their files in the work tree."""
    for part in PARTS[:upto]:
        sd.contract("r1", "3p", part, file=str(sd.store.files_worktree / f"{part}.md"))


def warned_then_blocked(sd: api.StateDir) -> None:
    """A systematic-review run at 2.5: a warn report (a report-only group), then a blocking one."""
    at_2_5(sd, mode="systematic-review")
    sd.compliance("r", "2.5", report=str(sd.store.files_worktree / "warn.json"), actor="compliance_agent")
    sd.compliance("r", "2.5", report=str(sd.store.files_worktree / "block.json"), actor="compliance_agent")


def awaiting_the_user(sd: api.StateDir) -> None:
    """Stage 3' completed after a synthesis-mismatch check: its MANDATORY checkpoint open."""
    at_re_review(sd)
    folder = sd.store.files_worktree
    for part in PARTS:
        (folder / f"{part}.md").write_text(f"{part} of the re-review\n")
        sd.contract("r1", "3p", part, file=str(folder / f"{part}.md"))
    (folder / "report.json").write_text("{}\n")
    sd.contract("r1", "3p", "check", file=str(folder / "report.json"), exit_code=1)
    sd.stage("r1", "3p", "completed")
    sd.material("r1", ["re_review_report"])
