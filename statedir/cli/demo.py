"""`statedir demo`: an example academic pipeline, start to finish, in a throwaway repository."""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from statedir import api
from statedir.api import places, texts
from statedir.errors import StatedirError, WriteFailed

RUN = "demo-paper"
ORCH, INTEGRITY, OBSERVER = "pipeline_orchestrator", "integrity_verification", "collaboration_depth_agent"


def _script(sd: api.StateDir, artifacts: Path) -> list[dict[str, Any]]:
    """The story of one paper; returns what was refused along the way."""
    def artifact(name: str, text: str) -> str:
        path = artifacts / name
        path.write_text(text)
        return str(path)

    refused = []
    sd.new(RUN, topic="The impact of AI on higher-education quality assurance")
    sd.stage(RUN, "1", "in_progress", mode="socratic", turns="#3..#3")
    sd.material(RUN, ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"],
                files=[artifact("research.md", "RQ brief, blueprint, 22 sources, synthesis\n")])
    sd.stage(RUN, "1", "completed", turns="#3..#15", outputs=["RQ Brief", "Bibliography (22 sources)"])
    try:  # the graph never lets RESEARCH jump to REVIEW
        sd.confirm(RUN, next="3")
    except StatedirError as exc:
        refused.append({"command": "statedir confirm demo-paper --next 3", "code": exc.code, "message": exc.message})
    sd.observe(RUN, "1", "FULL", {"zone": "Zone 2", "advisory_only": True,
                                  "scores": {"delegation_intensity": 4, "cognitive_vigilance": 3}},
               actor=OBSERVER)
    sd.confirm(RUN, response="continue")
    sd.material(RUN, ["paper_draft"], files=[artifact("draft.md", "Paper draft v1, IMRaD, 5,200 words\n")],
                upstream=["research_v1"])
    sd.stage(RUN, "2", "completed", mode="plan -> full", outputs=["Paper Draft (5,200 words, IMRaD)"])
    sd.confirm(RUN, response="continue")
    sd.integrity(RUN, "2.5", "FAIL", refs_total=62, refs_verified=59, actor=INTEGRITY,
                 issues=["SERIOUS:reference:Incorrect DOI", "SERIOUS:reference:Wrong journal name",
                         "MEDIUM:reference:Omitted co-author"])
    sd.integrity(RUN, "2.5", "PASS", refs_total=62, refs_verified=62, issues_found=3, issues_fixed=3,
                 actor=INTEGRITY)
    checklist = sd.load(RUN)[0].doc.get("failure_modes") or {}  # the run template's: the demo names no mode
    clear = [f"{mode['id']}={checklist['clear']}" for mode in checklist.get("modes", [])]  # it finds nothing
    sd.checklist(RUN, "2.5", clear, actor=INTEGRITY)
    sd.stage(RUN, "2.5", "completed")
    sd.confirm(RUN, response="continue")
    sd.material(RUN, ["review_reports"], files=[artifact("reviews.md", "EIC + R1 + R2 + R3 + DA\n")])
    sd.material(RUN, ["revision_roadmap"], files=[artifact("roadmap.md", "5 items\n")])
    sd.stage(RUN, "3", "completed", decision="major_revision", outputs=["Editorial Decision: Major Revision"])
    sd.confirm(RUN, response="review")
    sd.material(RUN, ["revised_draft"], files=[artifact("draft.md", "Paper draft v2, revised\n")],
                upstream=["review_v1", "roadmap_v1"])
    sd.material(RUN, ["response_to_reviewers"], files=[artifact("response.md", "Point-by-point\n")])
    sd.revision(RUN, items_total=5, items_addressed=5)
    sd.stage(RUN, "4", "completed")
    sd.confirm(RUN, response="continue")
    sd.material(RUN, ["re_review_report"], files=[artifact("rereview.md", "Accept\n")])
    for part, text in (("manifest", "Inputs: revised draft v2, response, roadmap\n"),  # the re-review contract
                       ("criteria", "Phase 1 criteria, revision-blind\n"), ("evidence", "Phase 2A evidence\n"),
                       ("claims", "Phase 2B claims, letter revealed\n")):
        sd.contract(RUN, "3p", part, file=artifact(f"rr-{part}.md", text))
    sd.contract(RUN, "3p", "check", file=artifact("rr-check.json", "{}\n"), exit_code=0)
    sd.material(RUN, ["re_review_traceability"],  # the R&R traceability sidecar: binds the re_review_traceability row
                files=[artifact("rr-traceability.json", '{"previously_missed": [], "indeterminate": []}\n')])
    sd.stage(RUN, "3p", "completed", decision="accept")
    sd.confirm(RUN, response="continue")
    sd.integrity(RUN, "4.5", "PASS", refs_total=64, refs_verified=64, issues_found=0, actor=INTEGRITY)
    sd.checklist(RUN, "4.5", clear, actor=INTEGRITY)
    sd.stage(RUN, "4.5", "completed")
    sd.confirm(RUN, response="continue", format="apa7")  # the Stage 5 entry: the user's citation style
    sd.material(RUN, ["final_paper"], files=[artifact("final.md", "Final paper\n")])
    sd.stage(RUN, "5", "completed", outputs=["final_paper.docx", "final_paper.pdf"])
    sd.confirm(RUN, response="continue")
    sd.confirm(RUN, response="done")
    return refused


def run(keep: Path | None, as_json: bool = False) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="statedir-demo-")) if keep is None else keep.resolve()
    try:
        try:
            workdir.mkdir(parents=True, exist_ok=True)
            places.git_init(workdir)
            artifacts = workdir / "artifacts"
            artifacts.mkdir(exist_ok=True)
        except OSError as exc:
            raise WriteFailed(f"cannot make the demo in {workdir}: {exc.strerror or exc}") from None
        api.init(workdir / "state")
        sd = api.StateDir(workdir / "state")
        refused = _script(sd, artifacts)
        t, state, _ = sd.load(RUN)
        audit = sd.log(RUN)
        board, line = texts.dashboard(t, state)
        if as_json:
            print(json.dumps({"run_id": RUN, "store": str(workdir / "state") if keep else None,
                              "refused": refused, "dashboard": board,
                              "line": line, "log": audit}, indent=2))
            return
        where = f"in {workdir}" if keep else "in a throwaway repository (removed at the end; --keep DIR keeps one)"
        print(f"statedir demo: run {RUN!r} driven through the academic pipeline {where}\n")
        for item in refused:
            print(f"refused, as it should be:  {item['command']}\n  -> {item['code']}: {item['message']}\n")
        print(board)
        print("\n" + line + "\n")
        print(f"audit log (git log, newest first; {len(audit)} commits):")
        for e in audit:
            print(f"  {e['commit'][:10]}  {e['actor']:<24} {e['action']:<10} {e['summary']}")
        if keep:
            print(f"\nthe store is kept in {workdir / 'state'}")
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
