"""schema_validation_log records a real check: the stage's registered outputs against the schemas
academic-pipeline names for them (material_schemas), through the real CLI."""
from __future__ import annotations

import json
from pathlib import Path

from statedir import api
from statedir.files import schema, yaml
from tests.support.sim import Sim
from tests.support.util import cli, cli_json, past_stage_one, segment

RUN = "s1"


def _log(repo: Path) -> list[dict]:
    return yaml.to_plain(yaml.load((repo / "state/runs" / RUN / segment("schema_validation")).read_text()))


def test_a_file_lacking_a_required_field_is_a_fail_naming_it(repo: Path, sd: api.StateDir) -> None:
    (repo / "brief.md").write_text("# Brief\n## Research Question\nq\n## Methodology\nm\n")
    (repo / "syn.md").write_text("---\nreferences: []\n---\n# Synthesis\ns\n")
    (repo / "draft.md").write_text("# A paper\n## Abstract\nwithout its references\n")
    for args in (["new", RUN, "--topic", "t"], ["stage", RUN, "1", "in_progress"],
                 ["material", RUN, "rq_brief", "methodology_blueprint", "bibliography", "synthesis_report",
                  "--file", "brief.md", "--file", "syn.md"],
                 ["stage", RUN, "1", "completed"], ["confirm", RUN, "--response", "continue"],
                 ["material", RUN, "paper_draft", "--file", "draft.md"], ["stage", RUN, "2", "completed"]):
        assert cli(*args, cwd=repo).returncode == 0, args
    code, out = cli_json("confirm", RUN, "--response", "continue", cwd=repo)
    assert code == 0, out  # a FAIL is said, never a refusal
    assert out["warnings"] == ["schema check of stage 2's outputs: FAIL, missing paper_draft.references; "  # type: ignore[index]
                               "re-produce the material and register it again"]
    passed, failed = _log(repo)
    assert passed["transition"] == "1 -> 2" and passed["result"] == "PASS" and passed["missing_fields"] == []
    assert passed["schemas_checked"] == ["Schema 1 (RQ Brief)", "Schema 2 (Bibliography)", "Schema 3 (Synthesis)"]
    assert failed["transition"] == "2 -> 2.5" and failed["result"] == "FAIL"
    assert failed["schemas_checked"] == ["Schema 4 (Paper Draft)"]
    assert failed["missing_fields"] == ["paper_draft.references"]
    assert cli_json("get", RUN, "stages.2.schema_validated", cwd=repo)[1] is False
    shown = cli("status", RUN, cwd=repo).stdout  # the dashboard notifies it, with what was missing
    assert "  Schema check FAIL at 2 -> 2.5: missing paper_draft.references" in shown.splitlines()
    [notified] = cli_json("status", RUN, cwd=repo)[1]["schema_checks_failed"]  # type: ignore[index]
    assert notified["missing_fields"] == ["paper_draft.references"]
    text = cli("confirm", RUN, cwd=repo)  # nothing open: refused, but the FAIL stays on record
    assert text.returncode == 1
    assert sd.verify()["clean"]  # replayed by the same rules: the FAIL is what the files held


def test_an_output_without_a_file_is_unchecked_never_a_pass(repo: Path, sd: api.StateDir) -> None:
    past_stage_one(sd, RUN)
    [entry] = _log(repo)
    assert entry["schemas_checked"] == [] and entry["missing_fields"] == []
    assert entry["unchecked"] == ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"]
    assert entry["not_checked"] == ["Schema 1 (RQ Brief)", "Schema 2 (Bibliography)", "Schema 3 (Synthesis)"]
    assert sd.get(RUN, "stages.1.schema_validated") is False
    assert "Schema check FAIL" not in sd.status(RUN)["dashboard"]  # nothing checked is no FAIL either
    assert json.loads(json.dumps(sd.verify()))["clean"]


def test_a_stage_left_without_its_outputs_names_what_it_did_not_check_and_3_22_keeps_its_entry() -> None:
    """A PASS with nothing checked would read as a check: the entry names the stage's schemas that no
    registered output was checked against (3.23). A run made on 3.22 keeps the entry it always had."""
    for name, expected in (("academic-pipeline", ["Schema 1 (RQ Brief)", "Schema 2 (Bibliography)",
                                                  "Schema 3 (Synthesis)"]),
                           (str(schema.data_dir("templates") / "academic-pipeline@3.22.yaml"), None)):
        sim = Sim(name)
        sim.do("stage", stage="1", status="in_progress")
        sim.do("stage", stage="1", status="completed")
        sim.do("confirm", response="continue")
        [entry] = sim.logs["schema_validation"]
        assert entry["schemas_checked"] == [] and entry["result"] == "PASS", name
        assert entry.get("not_checked") == expected, name
        sim.write()  # a draft whose passport holds no file fields: checked against nothing either
        assert sim.logs["schema_validation"][-1].get("not_checked") == (expected and ["Schema 4 (Paper Draft)"])
