"""The Python API a newcomer meets: statedir.init/open, the read reports the CLI prints,
STATEDIR_ACTOR, the obvious argument forms, repository-relative passport paths, py.typed."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import statedir
from statedir.errors import InvalidValue, UnknownStage
from tests.support.util import snapshot


@pytest.fixture
def linear(repo: Path) -> statedir.api.StateDir:
    statedir.init(repo / "state")
    sd = statedir.open(repo / "state")
    sd.new("r", template="linear")
    return sd


def test_init_and_open_from_the_package(repo: Path) -> None:
    made = statedir.init(repo / "state")
    assert made["created"] and len(made["commit"]) == 40 and "warnings" not in made
    assert statedir.init(repo / "state") == {"store": str(repo / "state"), "created": False, "commit": None}
    sd = statedir.open(repo / "state")
    assert sd.new("p", topic="t")["commit"]


def test_the_reports_the_cli_prints_are_api_methods(linear: statedir.api.StateDir) -> None:
    status = linear.status("r")
    assert status["dashboard"].splitlines()[1].startswith("|   Pipeline Status")
    assert status["line"] == "Pipeline: [ ]PLAN -> [ ]BUILD -> [ ]CHECK -> [ ]DELIVER"
    assert [(s["id"], s["status"], s["marker"], s["label"]) for s in status["stages"]][:1] == [
        ("plan", "todo", "[ ]", "To do")]
    assert status["pipeline_state"] == "initializing" and status["checkpoint"] is None
    assert linear.prereq("r", "check") == {"prerequisites_met": False, "missing_required": ["output"],
                                           "missing_recommended": [], "warning": None}
    checked = linear.validate()
    assert checked["valid"] and checked["errors"] == [] and checked["checked"] >= 3  # statedir.yaml, the run's state.yaml and its log
    assert {"name": "linear", "version": "1", "source": "shipped", "title": "Linear Pipeline"} in linear.templates()
    described = linear.template("linear")
    assert [s["id"] for s in described["stages"]] == ["plan", "build", "check", "deliver"]
    assert [s["value"] for s in described["statuses"]] == ["todo", "in_progress", "done"]
    assert described["required_run_fields"] == []


def test_validate_names_a_bad_file(linear: statedir.api.StateDir, repo: Path) -> None:
    linear.stage("r", "plan", "in_progress")  # a stage with something to say has a file of its own
    path = repo / "state/runs/r/stages/plan.yaml"
    path.write_text(path.read_text().replace("status: in_progress", "status: pending"))
    found = linear.validate()
    assert not found["valid"] and [e["file"] for e in found["errors"]] == ["runs/r/stages/plan.yaml"]
    with pytest.raises(InvalidValue, match="unknown schema"):
        linear.validate(schema="nope")


def test_statedir_actor_is_who_asks(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    statedir.init(repo / "state")
    monkeypatch.setenv("STATEDIR_ACTOR", "user")
    sd = statedir.open(repo / "state")
    sd.new("r", template="linear", actor="pipeline_orchestrator")
    with pytest.raises(statedir.errors.PermissionDenied):  # the linear template has no role `user`
        sd.stage("r", "plan", "in_progress")
    monkeypatch.setenv("STATEDIR_ACTOR", "pipeline_orchestrator")
    sd = statedir.open(repo / "state")
    sd.stage("r", "plan", "in_progress")
    assert [e["actor"] for e in sd.log("r")] == ["pipeline_orchestrator", "pipeline_orchestrator"]
    monkeypatch.setenv("STATEDIR_ACTOR", "nobody")
    with pytest.raises(statedir.errors.PermissionDenied):
        statedir.open(repo / "state").pipeline("r", "paused")


def test_the_obvious_argument_forms(sd: statedir.api.StateDir, repo: Path) -> None:
    draft = repo / "draft.md"
    draft.write_text("draft\n")
    sd.new("p", topic="t")
    assert sd.stage("p", 1, "in_progress")["summary"] == "stage 1 in_progress"  # an int stage id
    made = sd.material("p", "rq_brief")  # one string is one name, not four letters
    assert sd.get("p", f"passports.{made['version_label']}.materials") == ["rq_brief"]
    sd.material("p", ["methodology_blueprint", "bibliography", "synthesis_report"])
    sd.stage("p", "1", "completed", outputs="Bibliography")
    assert sd.get("p", "stages.1.outputs") == ["Bibliography"]
    sd.confirm("p")
    label = sd.material("p", "paper_draft", files=[draft], upstream="research_v1")["version_label"]  # a Path
    assert sd.get("p", f"passports.{label}.files") == [{"path": "draft.md", "content_hash": sd.get(
        "p", f"passports.{label}.files.0.content_hash"), "fields": []}]
    with pytest.raises(UnknownStage):
        sd.stage("p", 9, "in_progress")


@pytest.mark.parametrize(("argument", "call"), [
    ("topic", lambda sd: sd.new("q", topic=42)),
    ("refs_total", lambda sd: sd.integrity("p", "2.5", "PASS", refs_total="62", refs_verified=62)),
    ("stage", lambda sd: sd.stage("p", 1.0, "in_progress")),
    ("names", lambda sd: sd.material("p", [Path("rq_brief")])),
])
def test_the_rest_is_invalid_value_naming_the_argument(sd: statedir.api.StateDir, repo: Path, argument: str,
                                                       call: object) -> None:
    sd.new("p", topic="t")
    before = snapshot(repo)
    with pytest.raises(InvalidValue) as exc:
        call(sd)  # type: ignore[operator]
    assert exc.value.details["argument"] == argument and argument in exc.value.message
    assert snapshot(repo) == before


def test_passport_paths_are_relative_to_the_repository_root(sd: statedir.api.StateDir, repo: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "docs").mkdir()
    (repo / "docs/plan.md").write_text("plan\n")
    (repo / "deep/er").mkdir(parents=True)
    sd.new("r", template="linear")
    monkeypatch.chdir(repo / "deep/er")
    typed = ["../../docs/plan.md", str(repo / "docs/plan.md")]  # as typed: relative to here, absolute
    label = sd.material("r", ["plan"], files=typed)["version_label"]
    assert [f["path"] for f in sd.get("r", f"passports.{label}.files")] == ["docs/plan.md", "docs/plan.md"]


def test_a_file_outside_the_repository_is_refused(sd: statedir.api.StateDir, repo: Path,
                                                  tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("elsewhere\n")
    sd.new("r", template="linear")
    before = snapshot(repo)
    with pytest.raises(InvalidValue, match="outside the repository"):
        sd.material("r", ["plan"], files=[str(outside)])
    assert snapshot(repo) == before


@pytest.mark.usefixtures("isolated")
def test_the_package_is_typed() -> None:
    assert (Path(statedir.__file__).parent / "py.typed").is_file()
    wheel_files = subprocess.run(["git", "ls-files", "statedir/py.typed"], cwd=Path(statedir.__file__).parent.parent,
                                 capture_output=True, text=True).stdout
    assert wheel_files.strip() == "statedir/py.typed"


def test_the_package_exports_its_errors_and_nothing_of_its_own_plumbing() -> None:
    """`except statedir.IllegalTransition:` works; dir(statedir) shows the API, not TYPE_CHECKING or
    the __future__ import; each error is a class named as it is spelled, its code and exit class on it."""
    import statedir.errors as errors

    shown = {name for name in dir(statedir) if not name.startswith("_")}
    assert not shown & {"TYPE_CHECKING", "annotations", "Any", "Path"}
    assert {"init", "open", "StatedirError", "IllegalTransition", "WriteFailed"} <= shown
    assert set(statedir.__all__) <= shown | {"__version__"}
    classes = {name: value for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, errors.StatedirError)}
    assert len(classes) > 20
    for name, cls in classes.items():
        assert cls.__name__ == name and cls.__qualname__ == name, name
        assert "code" in vars(cls) and cls.exit_code in (1, 2, 3), name
        if name != "StatedirError":
            assert getattr(statedir, name) is cls, name


@pytest.mark.usefixtures("isolated")
def test_statedir_errors_is_there_after_a_bare_import() -> None:
    """docs/cli.md tells a caller to catch `statedir.errors.StatedirError`: after `import statedir`
    alone (a fresh interpreter, nothing else imported), the errors module is an attribute."""
    code = ("import statedir; assert 'errors' in dir(statedir); "
            "assert issubclass(statedir.errors.IllegalTransition, statedir.errors.StatedirError); "
            "assert statedir.IllegalTransition is statedir.errors.IllegalTransition")
    subprocess.run([sys.executable, "-c", code], check=True)
