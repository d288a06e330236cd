"""Per-template schemas: every vocabulary error caught by validate, by an independent validator
(check-jsonschema) reading the compiled schema a file's modeline names, and cross-file rules."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import statedir
from statedir import api
from tests.support.isolation import isolated_at
from tests.support.util import call, cli, cli_json, past_stage_one, stage_by_hand, today

RUN = "r1"
# (file in the run, text, replacement, the JSON path validate names)
VOCABULARY = [
    ("stages/2.5.yaml", "status: pending", "status: bogus", "$.status"),
    ("state.yaml", "pipeline_state: running", "pipeline_state: flying", "$.pipeline_state"),
    ("state.yaml", "current_stage: '2'", "current_stage: '9'", "$.current_stage"),
    ("stages/2.5.yaml", "verdict: null", "verdict: GREAT", "$.verdict"),
    ("stages/3.yaml", "decision: null", "decision: maybe", "$.decision"),
    ("stages/1.yaml", "checkpoint_type: FULL", "checkpoint_type: HUGE", "$.checkpoint_type"),
    ("state.yaml", "  rq_brief: true", "  rq_breif: true", "$.materials"),
    ("state.yaml", "  research: research_v1", "  research: research_1", "$.current_version.research"),
    ("state.yaml", "version_counters:\n  research: 1", "version_counters:\n  researchy: 1", "$.version_counters"),
    ("materials/research_v1.yaml", "series: research", "series: papers", "$.series"),
    ("materials/research_v1.yaml", "- rq_brief", "- rq_breif", "$.materials[0]"),
    ("history/checkpoints/{today}.yaml", "stage: '1'", "stage: '7'", "$[0].stage"),
]


@pytest.fixture(scope="module")
def at_stage_two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose run is at stage 2 in progress, made once for this module."""
    root = tmp_path_factory.mktemp("at-stage-two")
    with isolated_at(root):
        subprocess.run(["git", "init", "-q", str(root / "work")], check=True)
        api.init(root / "work" / "state")
        past_stage_one(statedir.open(root / "work" / "state"), RUN, "t")
        for sid in statedir.open(root / "work" / "state").show(RUN)["stages"]:  # every stage a file, as before
            if not (root / "work" / "state" / "runs" / RUN / "stages" / f"{sid}.yaml").exists():
                stage_by_hand(root / "work", RUN, sid)
        subprocess.run(["git", "commit", "-qm", "every stage a file"], cwd=root / "work", check=True)
    return root / "work"


@pytest.fixture
def run(sd: api.StateDir, repo: Path, at_stage_two: Path) -> Path:
    """A run at stage 2 in progress (a checkpoint answered, one material version): a copy of
    `at_stage_two` over the test's new store."""
    shutil.copytree(at_stage_two, repo, symlinks=True, dirs_exist_ok=True)
    return repo / "state" / "runs" / RUN


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def schema_of(path: Path) -> Path:
    first = path.read_text().splitlines()[0]
    return (path.parent / first.split("$schema=", 1)[1]).resolve()


def validate_here(*args: str) -> tuple[int, dict]:
    """`statedir validate ARGS --json` run in this process (the test's cwd is the repository): the
    same command, its start-up spared where a case checks what validate finds, not how it starts."""
    import json

    code, out, _ = call(["validate", *args, "--json"])
    return code, json.loads(out)


def check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema's own command on `path` and the schema its modeline names, run in this
    process through click's test runner (a process of its own costs ~0.4 CPU-s each time)."""
    from check_jsonschema import main
    from click.testing import CliRunner

    args = ["--schemafile", str(schema_of(path)), str(path)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return subprocess.CompletedProcess(args, result.exit_code, result.output, "")


def test_every_run_file_points_at_its_templates_compiled_schema(run: Path, repo: Path) -> None:
    files = sorted(p for p in run.rglob("*.yaml"))
    assert len(files) > 12 and run / "history" / "checkpoints" / f"{today()}.yaml" in files
    for path in files:
        schema = schema_of(path)
        assert schema.parent == repo / "state" / ".schemas" / "academic-pipeline" / "3.24", path
        assert schema.is_file()
        assert check_jsonschema(path).returncode == 0, (path, check_jsonschema(path).stdout)
    assert cli("validate", cwd=repo).returncode == 0


@pytest.mark.parametrize(("rel", "old", "new", "where"), VOCABULARY)
def test_a_value_the_template_does_not_know_is_caught_everywhere(run: Path, repo: Path, rel: str, old: str,
                                                                 new: str, where: str) -> None:
    rel = rel.format(today=today())
    path = run / rel
    edit(path, old, new)
    code, out = cli_json("validate", cwd=repo)
    assert code == 1
    assert {"file": f"runs/{RUN}/{rel}", "path": where} in [{k: e[k] for k in ("file", "path")}
                                                           for e in out["errors"]], out  # type: ignore[index]
    code, out = validate_here(str(path))  # the hook's way: the named file
    assert code == 1 and any(e["path"] == where for e in out["errors"])  # type: ignore[index]
    independent = check_jsonschema(path)
    assert independent.returncode == 1 and where.split("[")[0] in independent.stdout, independent.stdout


def test_a_hand_edit_out_of_the_template_is_reported_with_file_and_path(run: Path, repo: Path) -> None:
    edit(run / "stages" / "2.5.yaml", "status: pending", "status: bogus")
    proc = cli("validate", cwd=repo)
    assert proc.returncode == 1
    assert re.search(r"^state/runs/r1/stages/2\.5\.yaml::\$\.status: 'bogus' is not one of \['pending', 'in_progress', "
                     r"'completed', 'skipped', 'blocked'\]$", proc.stdout, re.M), proc.stdout


@pytest.mark.parametrize(("change", "where", "words"), [
    (lambda run: edit(run / "state.yaml", "  research: research_v1", "  research: research_v2"),
     "$.current_version.research", "no passport file"),
    (lambda run: edit(run / "state.yaml", "version_counters:\n  research: 1", "version_counters:\n  research: 0"),
     "$.version_counters", "minimum"),
    (lambda run: edit(run / "state.yaml", "checkpoints_opened: 1", "checkpoints_opened: 4"),
     "$.checkpoints_opened", "records 1 opened"),
    (lambda run: edit(run / "stages" / "2.5.yaml", "retry_count: 0", "retry_count: 2"),
     "$.retry_count", "0 FAIL round"),
    (lambda run: edit(run / "stages" / "4.yaml", "id: '4'", "id: '5'"), "$.id", "the file is stage 4"),
    (lambda run: edit(run / "stages" / "3p.yaml", "decision: null", "decision: reject"), "$.decision",
     "no decision of stage 3'"),
    (lambda run: edit(run / "stages" / "5.yaml", "status: pending", "status: pending\nverdict: PASS"),
     "$.verdict", "no integrity check"),
    (lambda run: (run / "stages" / "7.yaml").write_bytes((run / "stages" / "6.yaml").read_bytes()), "$",
     "no stage '7'"),
])
def test_cross_file_rules(run: Path, repo: Path, change, where: str, words: str) -> None:  # type: ignore[no-untyped-def]
    change(run)
    code, out = validate_here()
    assert code == 1
    assert any(e["path"].startswith(where) and words in e["message"] for e in out["errors"]), out  # type: ignore


def test_a_stage_without_a_file_is_pending_and_valid(run: Path, repo: Path) -> None:
    """A stage has a file once it has something to say: one removed by hand reads as it starts."""
    (run / "stages" / "6.yaml").unlink()
    assert validate_here() == (0, validate_here()[1])
    assert cli_json("get", RUN, "stages.6.status", cwd=repo)[1] == "pending"


def test_a_counter_behind_a_passport_on_disk(sd: api.StateDir, run: Path, repo: Path) -> None:
    sd.material(RUN, ["rq_brief"])  # research_v2
    edit(run / "state.yaml", "  research: research_v2", "  research: research_v1")
    edit(run / "state.yaml", "version_counters:\n  research: 2", "version_counters:\n  research: 1")
    code, out = validate_here()
    assert code == 1
    assert [e["message"] for e in out["errors"]] == ["is 1, behind the passport research_v2"]  # type: ignore


def test_the_shipped_and_compiled_schemas_describe_themselves(run: Path, repo: Path) -> None:
    import json

    template = json.loads((repo / "state" / ".schemas" / "template.schema.json").read_text())
    assert all("description" in spec for spec in template["properties"].values())
    stage = json.loads((repo / "state" / ".schemas" / "academic-pipeline" / "3.24" / "stage.schema.json").read_text())
    assert stage["properties"]["status"]["enum"] == ["pending", "in_progress", "completed", "skipped", "blocked"]
    assert "stage status" in stage["properties"]["status"]["description"]


def test_a_run_whose_compiled_schemas_are_missing_gets_them_with_its_next_commit(run: Path, repo: Path,
                                                                                  sd: api.StateDir) -> None:
    import shutil

    scoped = repo / "state" / ".schemas" / "academic-pipeline"
    shutil.rmtree(scoped)
    subprocess.run(["git", "commit", "-qam", "as an older statedir left it"], cwd=repo, check=True)
    result = sd.stage(RUN, "2", "blocked", reason="waiting")
    shown = subprocess.run(["git", "show", "--stat", "--format=", result["commit"]], cwd=repo, capture_output=True,
                           text=True).stdout
    assert "academic-pipeline/3.24/stage.schema.json" in shown
    assert schema_of(run / "stages" / "2.yaml").is_file()
