"""The record a sync with nothing to exchange leaves (statedir.sync.unmoved_record): written only
where the files said everything plainly, so that the next sync may answer from them; else none."""
from __future__ import annotations

from pathlib import Path

from tests.support.sync import git, network, ok
from tests.support.util import cli


def _record(clone: Path) -> Path:
    return clone / ".git/statedir/synced"


def test_a_sync_with_nothing_to_exchange_leaves_the_record_of_what_it_read(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    head = git(c["b"], "rev-parse", "HEAD")
    assert ok(c["b"], "sync")["status"] == "up_to_date"
    lines = _record(c["b"]).read_text().splitlines()
    assert lines[1] == str((c["b"] / "state").resolve()) and lines[5] == "main" and lines[6] == head
    assert lines[-3:] == ["origin", "main", str(c["b"].resolve())]
    ok(c["b"], "set", "r1", "topic", "moved", "--reason", "r")
    assert ok(c["b"], "sync")["status"] == "pushed"  # an exchange leaves the record as it was: it no longer holds
    assert _record(c["b"]).read_text().splitlines()[6] == head
    assert ok(c["b"], "sync")["status"] == "up_to_date"
    assert _record(c["b"]).read_text().splitlines()[6] == git(c["b"], "rev-parse", "HEAD")


def test_no_record_where_git_was_asked_or_a_warning_stands(tmp_path: Path) -> None:
    """Each change below is made on a record left by the sync before it, and the sync after it removes it."""
    c = network(tmp_path, ("a", "b"))
    config = c["b"] / ".git/config"
    plain = config.read_text()
    changes = [
        lambda: config.write_text(plain + "[include]\n\tpath = nothing-here\n"),  # the file no longer answers alone
        lambda: git(c["b"], "config", "--unset", "branch.main.remote"),  # no upstream: git would be asked for one
        lambda: git(c["b"], "config", "--remove-section", "merge.statedir"),  # the merge driver's warning stands
        lambda: git(c["b"], "config", "url./elsewhere/.insteadOf", "nowhere:"),  # URLs rewritten (not this one)
    ]
    for change in changes:
        config.write_text(plain)
        ok(c["b"], "sync")
        assert _record(c["b"]).exists()
        change()
        assert ok(c["b"], "sync", "--remote", "origin")["status"] == "up_to_date"
        assert not _record(c["b"]).exists(), change


def test_no_record_where_the_merge_driver_is_registered_outside_the_repository(tmp_path: Path) -> None:
    """The driver registered in git's global config alone: whether the whole sync warns of it rests
    on a file the record holds no digest of, so every sync there runs whole (and warns once it goes)."""
    c = network(tmp_path, ("a", "b"))
    driver = git(c["b"], "config", "--get", "merge.statedir.driver")
    git(c["b"], "config", "--remove-section", "merge.statedir")
    (tmp_path / "global").write_text(f"[merge \"statedir\"]\n\tname = statedir\n\tdriver = {driver}\n")
    env = {"GIT_CONFIG_GLOBAL": str(tmp_path / "global")}
    proc = cli("sync", cwd=c["b"], env=env)
    assert proc.returncode == 0 and "merge driver" not in proc.stderr, proc.stderr
    assert not _record(c["b"]).exists()
    (tmp_path / "global").write_text("")  # the registration gone: the next sync says so
    proc = cli("sync", cwd=c["b"], env=env)
    assert proc.returncode == 0 and "does not register it" in proc.stderr, proc.stderr
