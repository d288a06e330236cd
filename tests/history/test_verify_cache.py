"""A second whole-store `verify` replays only the commits since the last clean one (a disposable
file under .git/statedir/), and finds what a full replay finds (issue 37, point 3)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from statedir import api
from statedir.engine import template
from tests.support.history import driven_copy, git, hand_commit
from tests.support.util import cli


def verify(repo: Path, trace: Path, *args: str) -> tuple[dict[str, object], list[list[str]]]:
    """verify --json's result and the argv of each `git log` it ran (git's trace2)."""
    trace.unlink(missing_ok=True)
    proc = cli("verify", "--json", *args, cwd=repo, env={"GIT_TRACE2_EVENT": str(trace)})
    assert proc.returncode in (0, 1), proc.stderr
    logs = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "start" and "log" in event["argv"] and "--raw" in event["argv"]:
            logs.append(event["argv"])
    assert logs  # verify read history by git log
    return json.loads(proc.stdout), logs


def cache_file(repo: Path) -> Path:
    found = list((repo / ".git").rglob("verified.json"))
    assert len(found) == 1
    return found[0]


def head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_second_verify_replays_only_the_new_commits(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="t")
    for n in range(4):
        sd.set("r1", "topic", f"t{n}", reason="r")
    trace = repo.parent / "trace.json"
    first, logs = verify(repo, trace)
    assert first["clean"] is True
    assert not any(".." in arg for argv in logs for arg in argv)  # the whole history
    verified = head(repo)
    sd.set("r1", "topic", "one more", reason="r")
    second, logs = verify(repo, trace)
    assert any(arg == f"{verified}..HEAD" for argv in logs for arg in argv)  # only what came after
    assert second["clean"] is True
    cache_file(repo).unlink()  # disposable: without it the whole history is replayed, to the same count
    full, logs = verify(repo, trace)
    assert not any(".." in arg for argv in logs for arg in argv)
    assert full["checked"] == second["checked"] == first["checked"] + 1  # type: ignore[operator]


def test_a_hand_edit_is_found_and_stays_found(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="t")
    trace = repo.parent / "trace.json"
    assert verify(repo, trace)[0]["clean"] is True
    verified = head(repo)
    state = repo / "state" / "runs" / "r1" / "state.yaml"
    state.write_text(state.read_text().replace("topic: t\n", "topic: forged\n"))
    subprocess.run(["git", "commit", "-q", "--no-verify", "-am", "hand edit"], cwd=repo, check=True)
    found, _ = verify(repo, trace)
    assert found["clean"] is False
    assert [f["kind"] for f in found["findings"]] == ["hand_edit"]  # type: ignore[index, union-attr]
    edited = head(repo)
    sd.set("r1", "topic", "after", reason="r")  # a transition on top: the hand edit is still named
    again, logs = verify(repo, trace)
    assert any(arg == f"{edited}..HEAD" for argv in logs for arg in argv)  # remembered with its finding
    assert again["findings"] == found["findings"] and again["checked"] == found["checked"] + 1  # type: ignore[operator]
    cache_file(repo).unlink()
    assert verify(repo, trace)[0] == again  # the same as the whole history replayed
    assert verified


def test_a_rewritten_history_or_a_damaged_cache_is_verified_whole(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="t")
    sd.set("r1", "topic", "t2", reason="r")
    trace = repo.parent / "trace.json"
    assert verify(repo, trace)[0]["clean"] is True
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=repo, check=True)  # the cached commit is gone
    sd.set("r1", "topic", "t3", reason="r")
    result, logs = verify(repo, trace)
    assert result["clean"] is True
    assert not any(".." in arg for argv in logs for arg in argv)
    for damaged in ("not json", json.dumps({"format": 1, "commit": "--upload-pack=x", "checked": 1}), "[]"):
        cache_file(repo).write_text(damaged)
        result, logs = verify(repo, trace)
        assert result["clean"] is True and result["checked"] == 3
        assert not any(".." in arg for argv in logs for arg in argv)


def test_a_verdict_of_other_rules_is_not_taken(sd: api.StateDir, repo: Path) -> None:
    """The cache names which statedir judged (its code, schemas and templates): after an upgrade the
    whole history is replayed by the rules at hand, as when a 3.22 store met 3.23's statedir."""
    sd.new("r1", topic="t")
    trace = repo.parent / "trace.json"
    assert verify(repo, trace)[0]["clean"] is True
    saved = json.loads(cache_file(repo).read_text())
    assert len(saved["rules"]) == 64
    sd.set("r1", "topic", "later", reason="r")
    cache_file(repo).write_text(json.dumps({**saved, "rules": "0" * 64}))  # as another statedir left it
    again, logs = verify(repo, trace)
    assert again["clean"] is True and not any(".." in arg for argv in logs for arg in argv)  # the whole history


def test_what_was_remembered_is_read_back_neither_walked_nor_written_again(sd: api.StateDir, repo: Path) -> None:
    """The findings and the template versions history stored are remembered with the verdict: a
    verify after a clean transition reads them back (no walk of the templates' history) and leaves
    the findings' file as it was; a template stored later with other content is still found."""
    own = repo.parent / "mine.yaml"
    own.write_text(template.shipped()["linear"].read_text().replace("name: linear", "name: mypipe"))
    assert cli("new", "a", "--topic", "t", "--template", str(own), cwd=repo).returncode == 0
    state = repo / "state" / "runs" / "a" / "state.yaml"
    state.write_text(state.read_text().replace("topic: t\n", "topic: by hand\n"))
    subprocess.run(["git", "commit", "-q", "--no-verify", "-am", "hand edit"], cwd=repo, check=True)
    trace = repo.parent / "trace.json"
    first, _ = verify(repo, trace)
    [kept] = cache_file(repo).parent.glob("verified-findings/*.json")
    before = (kept.stat().st_ino, kept.stat().st_mtime_ns, kept.read_bytes())
    sd.set("a", "topic", "later", reason="r")
    second, logs = verify(repo, trace)
    assert second["findings"] == first["findings"] and second["checked"] == first["checked"] + 1  # type: ignore[operator]
    assert not any(argv[-1] == "state/templates" for argv in logs)  # the template versions read back, not walked
    assert (kept.stat().st_ino, kept.stat().st_mtime_ns, kept.read_bytes()) == before
    assert list(cache_file(repo).parent.glob("verified-findings/*.json")) == [kept]
    stored = repo / "state" / "templates" / "mypipe.yaml"
    stored.write_text(stored.read_text().replace("Linear Pipeline", "Other rules"))
    subprocess.run(["git", "commit", "-q", "--no-verify", "-am", "other rules"], cwd=repo, check=True)
    third, logs = verify(repo, trace)
    assert any(".." in arg for argv in logs for arg in argv)  # from what was remembered
    forged = [f for f in third["findings"] if f["file"] == "templates/mypipe.yaml"]  # type: ignore[union-attr,index]
    assert [f["kind"] for f in forged] == ["illegal"] and "stores template 'mypipe' version 1" in forged[0]["message"]
    assert len(list(cache_file(repo).parent.glob("verified-findings/*.json"))) == 1  # the old one removed
    cache_file(repo).unlink()
    assert verify(repo, trace)[0] == third  # the same as the whole history replayed


def _verify_loading(repo: Path) -> tuple[dict[str, object], set[str]]:
    """verify --json's result in a fresh process, and the top-level packages it loaded."""
    code = ("import contextlib, io, sys\nfrom statedir.cli import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    main(['verify', '--json'])\n"
            "print(out.getvalue().strip())\nprint(sorted({m.split('.')[0] for m in sys.modules}))")
    proc = subprocess.run([sys.executable, "-P", "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    document, modules = proc.stdout.strip().rsplit("\n", 1)
    return json.loads(document), set(eval(modules))


def test_the_second_verify_parses_no_template_and_reads_a_commits_findings_as_one_row(
        sd: api.StateDir, repo: Path) -> None:
    """After one transition on a run of a shipped template and one of a stored one, a whole verify
    loads no ruamel at all: the shipped templates' identities and the replayed templates are read
    from the store's caches under .git/statedir, not parsed again. A commit of 40 files made by hand
    is remembered as one row of 40 names. With those caches gone (a fresh clone), the same result."""
    own = repo.parent / "mine.yaml"
    own.write_text(template.shipped()["linear"].read_text().replace("name: linear", "name: mypipe"))
    assert cli("new", "b", "--topic", "t", "--template", str(own), cwd=repo).returncode == 0
    sd.new("a", topic="t")
    for n in range(40):
        (repo / "state" / "runs" / f"copy{n}").mkdir()
        (repo / "state" / "runs" / f"copy{n}" / "state.yaml").write_text(f"run_id: copy{n}\n")
    subprocess.run(["git", "add", "state/runs"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "copies by hand"], cwd=repo, check=True)
    hand = head(repo)
    first, loaded = _verify_loading(repo)
    assert "ruamel" in loaded and len(first["findings"]) == 40  # type: ignore[arg-type]
    [kept] = cache_file(repo).parent.glob("verified-findings/*.json")
    assert [[row[0], len(row[3])] for row in json.loads(kept.read_bytes())] == [[hand, 40]]
    sd.set("a", "topic", "later", reason="r")
    sd.set("b", "topic", "later", reason="r")
    second, loaded = _verify_loading(repo)
    assert "ruamel" not in loaded, sorted(loaded)
    assert second["findings"] == first["findings"] and second["checked"] == first["checked"] + 2  # type: ignore[operator]
    shutil.rmtree(repo / ".git" / "statedir")  # as a fresh clone has it: every cache rebuilt
    again, loaded = _verify_loading(repo)
    assert "ruamel" in loaded and again == second



def _kinds(result: dict[str, object]) -> list[tuple[str, str, str]]:
    return [(f["commit"], f["kind"], f["file"]) for f in result["findings"]]  # type: ignore[attr-defined]


def test_a_passport_deleted_before_the_remembered_commit_and_added_again_after_it_is_label_reused(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A Material Passport deleted by hand, then, after a verify remembered that commit, added again
    with its label naming other content: the verify from what was remembered reports label_reused as
    the whole history's replay does (the deletion is remembered with the verdict). One added again as
    it was is no finding either way. And wherever a verify had stopped before, the next one finds the
    same as the whole replay."""
    driven = driven_copy(repo, tmp_path_factory, 11)  # paper_draft_v1 and _v2 registered (of one draft)
    materials = repo / "state" / "runs" / "p1" / "materials"
    first, second = (materials / f"paper_draft_v{n}.yaml" for n in (1, 2))
    texts = first.read_text(), second.read_text()
    other = re.sub(r"content_hash: '[0-9a-f]{64}'", f"content_hash: '{'0' * 64}'", texts[0])
    assert other != texts[0]
    git(repo, "rm", "-q", str(first), str(second))
    deleted = hand_commit(repo, "drop the drafts' passports")
    trace = repo.parent / "trace.json"
    before, _ = verify(repo, trace)
    assert [kind for _, kind, _ in _kinds(before)] == ["hand_edit"] * 2
    second.write_text(texts[1])  # back as it was: the label names what it named
    first.write_text(other)  # v1 now names another draft's content
    git(repo, "add", str(first), str(second))
    readded = hand_commit(repo, "put them back")
    cached, logs = verify(repo, trace)
    assert any(arg == f"{deleted}..HEAD" for argv in logs for arg in argv)  # replayed from what was remembered
    cache_file(repo).unlink()
    whole, logs = verify(repo, trace)
    assert not any(".." in arg for argv in logs for arg in argv)
    assert _kinds(cached) == _kinds(whole)
    assert (readded, "label_reused", "runs/p1/materials/paper_draft_v1.yaml") in _kinds(whole)
    assert [kind for _, kind, _ in _kinds(whole)].count("label_reused") == 1
    tip = head(repo)
    for commit in git(repo, "rev-list", "HEAD").split():  # a verify remembered at each commit, then HEAD's
        git(repo, "reset", "-q", "--hard", commit)
        driven.verify()
        git(repo, "reset", "-q", "--hard", tip)
        assert _kinds(driven.verify()) == _kinds(whole), commit
