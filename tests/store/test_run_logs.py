"""Segmented logs: `history/<log>/<day>.yaml`, the segment decided by the entry's own time; old
single-file logs read first and moved by `doctor --fix`; a run holds the logs its template declares.

Multi-day histories are made by real transitions under a fixed clock (statedir's one clock,
`transaction.utc_now`): every entry, commit and replay is real; only the day is chosen."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import statedir
from statedir import api, fault_injection
from statedir.engine import transaction
from statedir.errors import StatedirError
from statedir.store import run_logs
from tests.support.util import FIXTURES, cli, cli_json, copy_of, segment, snapshot

FIXTURE = FIXTURES / "legacy-store.bundle"
DAYS = ("2026-11-20", "2026-11-21", "2026-11-22")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


class Clock:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = f"{DAYS[0]}T09:00:00Z"
        monkeypatch.setattr(transaction, "utc_now", lambda: self.now)

    def day(self, day: str, time: str = "09:00:00") -> None:
        self.now = f"{day}T{time}Z"


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    return Clock(monkeypatch)


def three_days(sd: api.StateDir, clock: Clock) -> list[str]:
    """Run p1 through stage 1 over three days; the commit of each day's last transition."""
    commits = []
    clock.day(DAYS[0])
    sd.new("p1", topic="three days")
    commits.append(sd.stage("p1", "1", "in_progress")["commit"])
    clock.day(DAYS[1])
    sd.material("p1", ["rq_brief"])
    commits.append(sd.stage("p1", "1", "completed")["commit"])
    clock.day(DAYS[2])
    commits.append(sd.confirm("p1", response="continue")["commit"])
    return commits


@pytest.fixture
def days(sd: api.StateDir, repo: Path, clock: Clock, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The test's store given `three_days` (made once per process and copied), its clock on the third
    day: the commit of each day's last transition."""
    def build(made: api.StateDir) -> list[str]:
        with pytest.MonkeyPatch.context() as monkeypatch:
            return three_days(made, Clock(monkeypatch))

    commits = copy_of("three-days", build, repo, tmp_path_factory)[1]
    clock.day(DAYS[2])
    return commits


def history_files(run: Path) -> list[str]:
    return sorted(p.relative_to(run).as_posix() for p in (run / "history").rglob("*") if p.is_file())


# --- where an entry goes -------------------------------------------------------------------------
def test_the_segment_is_decided_by_the_entry_itself() -> None:
    entry = {"at": "2026-11-29T23:59:59Z", "actor": "a", "action": "stage", "summary": "s"}
    assert run_logs.target("runs/a", "transitions", entry, "2026-11-29T23:59:59Z") == \
        "runs/a/history/transitions/2026-11-29.yaml"
    # the same entry lands in the same file whatever the clock of the machine placing it
    assert run_logs.target("runs/a", "transitions", entry, "2026-12-01T00:00:00Z") == \
        "runs/a/history/transitions/2026-11-29.yaml"
    # an entry whose schema has no `at` goes with the transition that wrote it
    assert run_logs.target("runs/a", "collaboration_depth", {"timestamp": "last week"}, "2026-11-30T01:00:00Z") == \
        "runs/a/history/collaboration_depth/2026-11-30.yaml"


def test_a_move_puts_old_entries_before_a_days_newer_ones() -> None:
    """doctor's move: entries by their day (`timestamp` where a log has no `at`, else the day
    of the entry before), and ahead of what a day's segment already holds (read order kept)."""
    old = [{"at": "2026-11-29T10:00:00Z", "n": 1}, {"timestamp": "2026-11-30T01:00:00Z", "n": 2},
           {"timestamp": "when the observer felt like it", "n": 3}]
    existing = {"runs/a/history/x/2026-11-30.yaml": [{"at": "2026-11-30T05:00:00Z", "n": 4}]}
    assert run_logs.migration("runs/a", "x", old, existing, "2026-12-01") == {
        "runs/a/history/x/2026-11-29.yaml": [old[0]],
        "runs/a/history/x/2026-11-30.yaml": [old[1], old[2], existing["runs/a/history/x/2026-11-30.yaml"][0]]}
    assert run_logs.migration("runs/a", "x", [{"n": 5}], {}, "2026-12-01") == {
        "runs/a/history/x/2026-12-01.yaml": [{"n": 5}]}


def test_same_entry_same_file_on_two_clones(sd: api.StateDir, repo: Path, tmp_path: Path) -> None:
    sd.new("p1", topic="t")
    git(repo, "add", "-A")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    for place in (repo, clone):
        other = statedir.open(place / "state")
        other.stage("p1", "1", "in_progress")
        entry = other.show("p1")["history"]["transitions"][-1]
        changed = git(place, "show", "--name-only", "--format=", "HEAD").split()
        assert f"state/runs/p1/history/transitions/{entry['at'][:10]}.yaml" in changed


def test_a_log_spanning_three_days_reads_in_order(sd: api.StateDir, repo: Path, days: list[str]) -> None:
    run = repo / "state" / "runs" / "p1"
    assert [f"history/transitions/{d}.yaml" for d in DAYS] == \
        [f for f in history_files(run) if f.startswith("history/transitions/")]
    entries = sd.show("p1")["history"]["transitions"]
    assert [e["summary"].split(" ")[0] for e in entries] == ["new", "stage", "material", "stage", "confirm"]
    assert [e["at"][:10] for e in entries] == [DAYS[0]] * 2 + [DAYS[1]] * 2 + [DAYS[2]]
    for day in DAYS:  # each segment is an ordinary statedir log file
        text = (run / "history" / "transitions" / f"{day}.yaml").read_text()
        assert text.startswith("# yaml-language-server: $schema=../../../../.schemas/academic-pipeline/")
    assert cli("validate", cwd=repo).returncode == 0


# --- an append costs the same at any log length --------------------------------------------------
def test_an_append_touches_only_todays_segment(sd: api.StateDir, repo: Path, clock: Clock, days: list[str]) -> None:
    from tests.support.opened import reads, record

    for n in range(40):  # older segments grow large; the append must not see them
        clock.day(DAYS[2], f"10:{n:02d}:00")
        sd.set("p1", "topic", f"topic {n}", reason="grow the log")
    run = repo / "state" / "runs" / "p1"
    sealed = {f: ((run / f).read_bytes(), (run / f).stat().st_mtime_ns) for f in history_files(run)}
    clock.day("2026-11-23")
    opened = record(lambda: sd.set("p1", "topic", "a new day", reason="append"))
    under_history = [p for p, _, _ in opened if "/history/" in p]
    assert under_history == [str(run / "history" / "transitions" / "2026-11-23.yaml")]
    assert reads(opened, "/history/") == []
    assert {f: ((run / f).read_bytes(), (run / f).stat().st_mtime_ns) for f in sealed} == sealed
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "state/runs/p1/history/transitions/2026-11-23.yaml", "state/runs/p1/state.yaml"]


# --- the logs a run holds ------------------------------------------------------------------------
def test_a_linear_run_holds_no_academic_logs(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="t", template="linear")
    run = repo / "state" / "runs" / "r1"
    assert history_files(run) == [segment("transitions")]  # a log appears with its first entry
    sd.stage("r1", "plan", "in_progress")
    sd.stage("r1", "plan", "done")
    sd.confirm("r1")
    assert {f.split("/")[1] for f in history_files(run)} == {"transitions", "checkpoints", "schema_validation"}
    assert set(sd.show("r1")["history"]) == {"transitions", "checkpoints", "schema_validation", "reset_boundary"}
    assert sd.verify()["clean"]


def test_a_template_that_leaves_out_a_log_it_writes_is_refused(sd: api.StateDir, repo: Path) -> None:
    """A run of it would be stuck at its first checkpoint: the template check refuses it up front."""
    text = (Path(statedir.__file__).parent.parent / "templates" / "linear.yaml").read_text()
    assert "logs: [checkpoints, schema_validation]" in text
    mine = repo / "mine.yaml"
    mine.write_text(text.replace("name: linear", "name: mine").replace("logs: [checkpoints, schema_validation]",
                                                                       "logs: [schema_validation]"))
    before = snapshot(repo)
    code, out = cli_json("new", "m1", "--template", str(mine), "--topic", "t", cwd=repo)
    assert code != 0 and "leaves out checkpoints" in out["error"]["message"], out
    assert snapshot(repo) == before


def test_validate_reports_a_log_the_template_does_not_declare(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="t", template="linear")
    run = repo / "state" / "runs" / "r1"
    header = (run / segment("transitions")).read_text().partition("\n")[0].replace("log-transitions",
                                                                                    "log-collaboration_depth")
    (run / "history" / "collaboration_depth").mkdir()
    (run / segment("collaboration_depth")).write_text(
        header + "\n  - stage_id: pipeline\n    checkpoint_type: FULL\n    advisory_only: true\n")
    code, out = cli_json("validate", cwd=repo)
    assert code == 1 and out["errors"] == [{  # type: ignore[index]
        "file": "runs/r1/history/collaboration_depth", "path": "$",
        "message": "template linear declares no collaboration_depth log (its runs hold transitions, "
                   "schema_validation, checkpoints, reset_boundary); add it to the template's `logs:`"}]


def test_template_logs_are_checked_by_the_template_schema(repo: Path) -> None:
    text = (Path(statedir.__file__).parent.parent / "templates" / "linear.yaml").read_text()
    bad = repo / "bad.yaml"
    bad.write_text(text.replace("logs: [checkpoints, schema_validation]", "logs: [checkpoints, diary]"))
    proc = cli("validate", "--schema", "template", str(bad), cwd=repo)
    line = next(n for n, text in enumerate(bad.read_text().splitlines(), 1) if "diary" in text)
    assert proc.returncode == 1 and f"$.logs[1]: line {line}: expected one of" in proc.stdout, proc.stdout


# --- history over segments -----------------------------------------------------------------------
def test_show_at_diff_rollback_and_verify_over_segments(sd: api.StateDir, repo: Path, clock: Clock,
                                                        days: list[str]) -> None:
    first, second, _ = days
    then = sd.show("p1", at=first)["history"]
    assert [e["at"][:10] for e in then["transitions"]] == [DAYS[0]] * 2 and then["checkpoints"] == []
    diff = sd.diff("p1", first, second)
    assert any(c["path"].startswith("history.checkpoints") for c in diff["changes"]), diff
    clock.day("2026-11-23")
    sd.rollback("p1", to=second, reason="back to day two")
    now = sd.show("p1")["history"]["transitions"]
    assert len(now) == 6 and now[-1]["action"] == "rollback" and now[-1]["at"].startswith("2026-11-23")
    assert sd.verify() == {"clean": True, "checked": 7, "findings": []}


def test_verify_finds_a_rewritten_sealed_segment(sd: api.StateDir, repo: Path, days: list[str]) -> None:
    path = repo / "state" / "runs" / "p1" / "history" / "transitions" / f"{DAYS[0]}.yaml"
    path.write_text(path.read_text().replace("summary: stage 1 in_progress", "summary: stage 1 skipped"))
    git(repo, "commit", "-qam", "edit a sealed day")
    found = {(f["kind"], f["file"]) for f in sd.verify()["findings"]}
    assert found == {("hand_edit", f"runs/p1/history/transitions/{DAYS[0]}.yaml"),
                     ("log_rewritten", f"runs/p1/history/transitions/{DAYS[0]}.yaml")}


# --- a failed commit leaves no new day's segment behind --------------------------------------------
@pytest.mark.parametrize("fault", ["during_commit:git", "after_write:enospc"])
def test_a_failed_first_entry_of_a_new_day_leaves_nothing(sd: api.StateDir, repo: Path, clock: Clock, days: list[str],
                                                         fault: str) -> None:
    clock.day("2026-11-23")
    before = snapshot(repo, objects=False)  # a failed git command may leave unreachable blobs
    fault_injection.arm(fault)
    try:
        with pytest.raises(StatedirError):
            sd.set("p1", "topic", "never", reason="fails")
    finally:
        fault_injection.arm(None)
    assert snapshot(repo, objects=False) == before
    assert not (repo / "state" / "runs" / "p1" / "history" / "transitions").joinpath("2026-11-23.yaml").exists()
    assert sd.set("p1", "topic", "now", reason="works")["commit"]


def test_a_writer_killed_after_creating_a_new_segment_is_rolled_back(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="t")
    seg = repo / "state" / "runs" / "p1" / segment("checkpoints")
    sd.stage("p1", "1", "in_progress")
    killed = cli("stage", "p1", "1", "completed", cwd=repo, env={"STATEDIR_FAULT": "after_write"})
    assert killed.returncode == -9 and seg.exists()  # the checkpoint's first entry, uncommitted
    assert cli("status", "p1", cwd=repo).returncode == 0
    code, _ = cli_json("doctor", "--fix", cwd=repo)
    assert code == 0 and not seg.exists() and not seg.parent.exists()
    assert git(repo, "status", "--porcelain", "--", "state") == ""


# --- stores of the layout before segments ----------------------------------------------------------
@pytest.fixture
def legacy(isolated: Path) -> Path:
    """A store recorded by statedir before segments (commit c6e6f12, clock fixed at 2026-11-26..29):
    runs p1 (academic) and r2 (linear), every log one file, the empty ones included."""
    repo = isolated / "legacy"
    subprocess.run(["git", "clone", "-q", str(FIXTURE), str(repo)], check=True)
    return repo


def legacy_logs(repo: Path) -> list[str]:
    return sorted(p.relative_to(repo / "state").as_posix() for p in (repo / "state" / "runs").glob("*/history/*.yaml"))


def test_an_old_store_reads_and_writes(legacy: Path) -> None:
    sd = statedir.open(legacy / "state")
    assert sd.verify()["clean"]
    old = sd.show("p1")["history"]
    assert [e["at"][:10] for e in old["transitions"]] == ["2026-11-26"] * 3 + ["2026-11-27"]
    olds = {rel: (legacy / "state" / rel).read_bytes() for rel in legacy_logs(legacy)}
    sd.stage("p1", "2", "completed")  # appends to transitions and checkpoints
    assert {rel: (legacy / "state" / rel).read_bytes() for rel in legacy_logs(legacy)} == olds  # sealed
    now = sd.show("p1")["history"]
    assert now["transitions"][:4] == old["transitions"] and now["transitions"][4]["summary"] == "stage 2 completed"
    assert now["checkpoints"][:2] == old["checkpoints"] and len(now["checkpoints"]) == 3
    assert (legacy / "state" / "runs" / "p1" / segment("checkpoints")).is_file()
    assert sd.verify()["clean"] and cli("validate", cwd=legacy).returncode == 0


def test_doctor_moves_every_legacy_log_in_one_commit(legacy: Path) -> None:
    sd = statedir.open(legacy / "state")
    sd.stage("p1", "2", "completed")  # a store in the middle of the change: legacy and dated files
    before = {run: sd.show(run)["history"] for run in ("p1", "r2")}
    code, out = cli_json("doctor", cwd=legacy)
    fixable = [f for f in out["findings"] if f["kind"] == "legacy_log"]
    assert code == 1 and [f["file"] for f in fixable] == legacy_logs(legacy) and len(fixable) == 14
    head = git(legacy, "rev-parse", "HEAD")
    code, out = cli_json("doctor", "--fix", cwd=legacy)
    assert code == 0 and out["findings"] == [], out
    moved = git(legacy, "log", "--format=%s", f"{head.strip()}..HEAD", "--", "state/runs").splitlines()
    assert moved == ["doctor: move 14 logs into day segments"]
    assert legacy_logs(legacy) == []
    for path in (legacy / "state" / "runs").glob("*/history/*/*.yaml"):  # as an append would write them
        assert "$schema=../../../../.schemas/academic-pipeline/3.21/log-" in path.read_text().partition("\n")[0] or \
            "$schema=../../../../.schemas/linear/1/log-" in path.read_text().partition("\n")[0], path
    assert {run: sd.show(run)["history"] for run in ("p1", "r2")} == before
    assert history_files(legacy / "state" / "runs" / "r2") == [
        "history/checkpoints/2026-11-28.yaml", "history/checkpoints/2026-11-29.yaml",
        "history/schema_validation/2026-11-29.yaml", "history/transitions/2026-11-27.yaml",
        "history/transitions/2026-11-28.yaml", "history/transitions/2026-11-29.yaml"]
    assert sd.verify()["clean"] and cli("validate", cwd=legacy).returncode == 0
    assert cli_json("doctor", cwd=legacy)[0] == 0


def test_verify_refuses_a_move_that_loses_an_entry(legacy: Path) -> None:
    assert statedir.open(legacy / "state").doctor(fix=True)["findings"] == []  # the API's: verify is tested
    git(legacy, "reset", "-q", "--hard", "HEAD~1")  # undo the move, keep the schema copy commit
    assert statedir.open(legacy / "state").doctor(fix=True)["findings"] == []
    seg = legacy / "state" / "runs" / "r2" / "history" / "transitions" / "2026-11-28.yaml"
    text = seg.read_text()
    cut = text.index("  - at: '2026-11-28T12:00:00Z'")
    seg.write_text(text[:cut])  # the move "forgets" the last entry of that day
    git(legacy, "commit", "-q", "--amend", "--no-edit", "-a")
    result = statedir.open(legacy / "state").verify()
    assert not result["clean"]
    assert any(f["kind"] == "illegal" and "1 lost" in f["message"] for f in result["findings"]), result


def test_segment_files_match_the_pre_commit_hook(repo: Path) -> None:
    import re

    hooks = (Path(statedir.__file__).parent.parent / ".pre-commit-hooks.yaml").read_text()
    pattern = re.search(r"^  files: (.+)$", hooks, re.M).group(1)  # type: ignore[union-attr]
    for rel in ("state/runs/p1/history/transitions/2026-11-30.yaml", "state/runs/p1/history/transitions.yaml"):
        assert re.search(pattern, rel), rel
    assert not re.search(pattern, "state/runs/p1/history/transitions/notes.txt")


# --- a day's file never grows past what readers accept --------------------------------------------
@pytest.mark.slow  # 68 commits of a growing 16 MiB file
def test_a_full_days_segment_rolls_over_and_stays_readable(repo: Path) -> None:
    """68 observer reports of 250 kB in one day (about 17 MB, past the 16 MiB readers take; one
    report through the CLI may be at most 256 KiB): the last goes into the day's second file;
    show, validate and verify read the run as before."""
    from statedir.files import yaml

    sd = statedir.open(statedir.init(repo / "state")["store"])
    sd.new("p1", topic="t")
    report = {"advisory_only": True, "dialogue_log_ref": "x" * 250_000}
    for _ in range(68):
        sd.observe("p1", "pipeline", "pipeline_completion", report, actor="collaboration_depth_agent")
    store = repo / "state"
    folder = store / "runs" / "p1" / "history" / "collaboration_depth"
    day = sorted(folder.iterdir())[0].name[:10]
    assert sorted(p.name for p in folder.iterdir()) == [f"{day}.2.yaml", f"{day}.yaml"]
    assert all(p.stat().st_size <= yaml.MAX_BYTES for p in folder.iterdir())
    code, shown = cli_json("show", "p1", cwd=store)
    assert code == 0, shown
    assert len(shown["history"]["collaboration_depth"]) == 68  # type: ignore[index]
    assert cli("validate", cwd=store).returncode == 0
    code, verified = cli_json("verify", cwd=store)
    assert code == 0 and verified["clean"], verified  # type: ignore[index]


def test_entries_are_placed_by_size_and_read_in_part_order() -> None:
    """`place` stats the day's parts (never reads them): an entry goes into the last part, a new
    one where it would not fit, one too large for any file is refused; parts read in order."""
    from statedir.errors import InvalidValue
    from statedir.files import yaml

    day = "runs/a/history/transitions/2026-11-30"
    sizes = {f"{day}.yaml": yaml.MAX_BYTES - 10}
    header = "# header\n"
    placed = run_logs.place([(f"{day}.yaml", "- small\n", header), (f"{day}.yaml", "- " + "y" * 20 + "\n", header),
                         (f"{day}.yaml", "- z\n", header)], sizes.get)
    assert [rel for rel, _, _ in placed] == [f"{day}.yaml", f"{day}.2.yaml", f"{day}.2.yaml"]
    assert run_logs.place([(f"{day}.yaml", "- z\n", header)], {**sizes, f"{day}.2.yaml": 30}.get)[0][0] == \
        f"{day}.2.yaml"  # the last part, though an earlier one has room
    with pytest.raises(InvalidValue, match="more than a log file may hold"):
        run_logs.place([(f"{day}.yaml", "x" * yaml.MAX_BYTES, header)], {}.get)
    files = [f"{day}.10.yaml", f"{day}.2.yaml", f"{day}.yaml", "runs/a/history/transitions/2026-11-29.yaml",
             "runs/a/history/transitions.yaml"]
    assert run_logs.ordered(files, "runs/a", "transitions") == [
        "runs/a/history/transitions.yaml", "runs/a/history/transitions/2026-11-29.yaml", f"{day}.yaml",
        f"{day}.2.yaml", f"{day}.10.yaml"]
