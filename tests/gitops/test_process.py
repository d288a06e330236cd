"""statedir.gitops.process: a git process run as subprocess.run(capture_output=True) runs it,
compared with subprocess.run itself on the same commands."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from statedir.gitops import process


def _both(args: list[str], cwd: Path, stdin: bytes | None = None) -> tuple[process.Completed,
                                                                           subprocess.CompletedProcess[bytes]]:
    env = dict(os.environ)
    ours = process.run(args, str(cwd), env, stdin)
    theirs = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, env=env, check=False)
    return ours, theirs


def test_output_status_and_working_directory_are_subprocess_s(repo: Path) -> None:
    (repo / "sub").mkdir()
    for args in (["git", "rev-parse", "--show-toplevel", "--show-prefix"], ["git", "no-such-command"],
                 ["git", "cat-file", "-t", "0" * 40]):
        ours, theirs = _both(args, repo / "sub")
        assert (ours.args, ours.returncode, ours.stdout, ours.stderr) == \
            (theirs.args, theirs.returncode, theirs.stdout, theirs.stderr)
    assert ours.returncode != 0 and ours.stderr


@pytest.mark.parametrize("size", [0, 10, 3 << 20])
def test_input_larger_than_a_pipe_holds_is_fed_while_output_is_read(repo: Path, size: int) -> None:
    """`git hash-object --stdin` reads it all; `cat-file --batch` echoes as much as it reads."""
    data = bytes(range(256)) * (size // 256)
    ours, theirs = _both(["git", "hash-object", "--stdin"], repo, data)
    assert ours.returncode == 0 and ours.stdout == theirs.stdout
    listing = b"".join(b"HEAD~%d\n" % n for n in range(size // 200))  # each line answered "... missing"
    ours, theirs = _both(["git", "cat-file", "--batch-check"], repo, listing)
    assert ours.stdout == theirs.stdout and ours.stdout.count(b"\n") == listing.count(b"\n")


def test_a_command_that_cannot_start_raises_as_subprocess_does(repo: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FileNotFoundError):
        process.run(["git", "status"], str(tmp_path / "gone"), dict(os.environ), None)
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        process.run(["git", "status"], str(tmp_path / "file"), dict(os.environ), None)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError):
        process.run(["git", "status"], str(repo), dict(os.environ), None)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_git_runs_with_sigpipe_at_its_default(repo: Path) -> None:
    """Python ignores SIGPIPE, and an ignored signal stays ignored across exec: git must not
    inherit that (subprocess's restore_signals)."""
    ours = process.run(["git", "-c", "alias.mask=!grep SigIgn /proc/self/status", "mask"], str(repo),
                       dict(os.environ), None)
    ignored = int(ours.stdout.split()[1], 16)
    assert ours.returncode == 0 and not ignored & (1 << (13 - 1)), ours.stdout  # SIGPIPE is 13


def test_with_its_standard_streams_closed_a_caller_still_gets_git_s_output(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = ("import os, sys\nfor fd in (0, 1, 2):\n    os.close(fd)\nfrom statedir.gitops import process\n"
            f"done = process.run(['git', 'rev-parse', '--show-toplevel'], {str(repo)!r}, dict(os.environ), b'')\n"
            f"open({str(out)!r}, 'wb').write(done.stdout)")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert out.read_bytes().decode().strip() == str(repo)


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads /proc")
def test_git_does_not_inherit_the_caller_s_open_descriptors(repo: Path, tmp_path: Path) -> None:
    """A descriptor the caller holds inheritable (handed down to it, or kept for another child)
    is closed in git, as subprocess's close_fds closes it; git's own 0, 1 and 2 stay."""
    held = [os.open(tmp_path / name, os.O_WRONLY | os.O_CREAT) for name in ("seven", "nine")]
    try:
        for fd in held:
            os.set_inheritable(fd, True)
        for stdin in (None, b""):
            ours = process.run(["git", "-c", "alias.fds=!ls /proc/self/fd", "fds"], str(repo),
                               dict(os.environ), stdin)
            assert ours.returncode == 0, ours.stderr
            listed = {int(name) for name in ours.stdout.split()}
            assert {0, 1, 2} <= listed and not listed & set(held), (held, listed)
        assert all(os.get_inheritable(fd) for fd in held)  # the caller's own are left as they were
    finally:
        for fd in held:
            os.close(fd)
