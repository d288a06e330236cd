"""An in-memory run driven through the pure rules, for unit tests on plain data. Its refusals say
their next steps (statedir.hints) in the command line's words, the words the rules' tests read."""
from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

from statedir.cli.words import CLI
from statedir.engine import runs, template
from statedir.engine.rules import decision
from statedir.engine.transition_data import Change, Request
from statedir.hints import WORDS

NOW = "2026-11-29T12:00:00Z"
ORCH, INTEGRITY, OBSERVER = "pipeline_orchestrator", "integrity_verification", "collaboration_depth_agent"


class Sim:
    def __init__(self, name: str = "academic-pipeline", entry: str | None = None, **kwargs: Any) -> None:
        self.t = template.load(name)
        words = WORDS.set(CLI)
        try:
            self.run, change = runs.new_run(self.t, "r1", "A topic", "en", entry, NOW, **kwargs)
        finally:
            WORDS.reset(words)
        self.run.passports = dict(change.passports)
        self.logs: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def do(self, action: str, actor: str = ORCH, reason: str | None = None, **args: Any) -> Change:
        before = copy.deepcopy(self.run)
        words = WORDS.set(CLI)
        try:
            change = decision.decide(self.t, self.run, Request(action, actor, args, reason), NOW)
        finally:
            WORDS.reset(words)
            assert self.run == before, "decide() must not mutate its input"
        if change.state is not None:
            self.run.state = change.state
        self.run.stages.update(change.stages)
        everything = {**self.run.passports, **change.passports}
        self.run.passports = {label: everything[label] for label in self.run.state["current_version"].values()
                              if label in everything}
        self.all_passports = {**getattr(self, "all_passports", {}), **change.passports}
        for name, entry in change.logs:
            self.logs[name].append(entry)
        return change

    @property
    def state(self) -> dict[str, Any]:
        return self.run.state

    def status(self, stage_id: str) -> str:
        return str(self.run.stages[stage_id]["status"])

    # --- the academic pipeline, step by step ------------------------------------------------------
    def research(self) -> None:
        self.do("stage", stage="1", status="in_progress")
        self.do("material", names=["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"])
        self.do("stage", stage="1", status="completed")
        self.do("confirm", response="continue")

    def write(self) -> None:
        self.do("material", names=["paper_draft"])
        self.do("stage", stage="2", status="completed")
        self.do("confirm", response="continue")

    def integrity_pass(self, stage: str = "2.5", verdict: str = "PASS", issues: int = 0) -> None:
        self.do("integrity", actor=INTEGRITY, stage=stage, verdict=verdict, refs_total=10, refs_verified=10,
                issues_found=issues, issues_fixed=issues)
        if self.t.doc.get("failure_modes"):  # templates with the failure-mode checklist (3.22 on)
            self.checklist(stage)
        self.do("stage", stage=stage, status="completed")

    def checklist(self, stage: str = "2.5", **outcomes: str) -> Change:
        """The stage's failure-mode checklist: every mode CLEAR but those given (mode id -> outcome, as `m3=`)."""
        given = {key.removeprefix("m"): value for key, value in outcomes.items()}
        return self.do("checklist", actor=INTEGRITY, stage=stage, evidence=[],
                       items=[f"{mode}={given.get(str(mode), 'CLEAR')}" for mode in range(1, 8)])

    def fail_integrity(self, rounds: int, stage: str = "2.5") -> None:
        for _ in range(rounds):
            self.do("integrity", actor=INTEGRITY, stage=stage, verdict="FAIL", refs_total=10, refs_verified=8)

    def review(self, decision: str, stage: str = "3") -> None:
        if stage == "3":
            self.do("material", names=["review_reports"])
            self.do("material", names=["revision_roadmap"])
        else:
            self.do("material", names=["re_review_report"])
            self.contract_holds()
        self.do("stage", stage=stage, status="completed", decision=decision)

    def contract_holds(self, exit_code: int = 0) -> None:
        """The re-review contract recorded and its check given `exit_code` (templates that declare one)."""
        spec = self.t.doc.get("re_review_contract")
        if not spec or (self.run.stages[spec["stage"]].get("contract") or {}).get("check"):
            return
        if self.state.get("settings", {}).get("re_review_legacy"):
            return
        hashes = {}
        for number, part in enumerate(spec["parts"]):
            hashes[part] = f"{number + 1:064x}"
            self.do("contract", stage=spec["stage"], part=part, file={"path": f"{part}.md", "content_hash": hashes[part]})
        self.do("contract", stage=spec["stage"], part="check", exit_code=exit_code, current=hashes,
                file={"path": "check.json", "content_hash": "f" * 64})

    def revise(self, stage: str = "4") -> None:
        self.do("material", names=["revised_draft" if stage == "4" else "re_revised_draft"])
        self.do("revision", items_total=3, items_addressed=3)
        self.do("stage", stage=stage, status="completed")

    def to_re_review(self) -> None:
        """Through a major revision: stage 3' in progress."""
        self.to_review()
        self.review("major_revision")
        self.do("confirm", response="continue")
        self.revise()
        self.do("confirm", response="continue")

    def to_review(self) -> None:
        """Stages 1, 2 and 2.5 done; stage 3 in progress."""
        self.research()
        self.write()
        self.integrity_pass()
        self.do("confirm", response="continue")
