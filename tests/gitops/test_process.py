"""statedir.gitops.process: a git process run as subprocess.run(capture_output=True) runs it (and a
long-lived one as subprocess.Popen starts it, a detached one in a session of its own),
compared with subprocess.run itself on the same commands."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading
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


def test_a_long_lived_git_answers_as_one_subprocess_started(repo: Path) -> None:
    """`start`: `cat-file --batch` asked twice over its pipes answers as subprocess.Popen's does."""
    (repo / "f.txt").write_text("hello\n")
    subprocess.run(["git", "add", "f.txt"], cwd=repo, check=True)
    ask = b":f.txt\nHEAD~999\n"
    ours = process.start(["git", "cat-file", "--batch"], str(repo))
    theirs = subprocess.Popen(["git", "cat-file", "--batch"], cwd=repo, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    answers = []
    for proc in (ours, theirs):
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(ask)
        proc.stdin.flush()
        header = proc.stdout.readline()
        answers.append((header, proc.stdout.read(int(header.split()[2]) + 1), proc.stdout.readline(),
                        proc.communicate()[0], proc.returncode))
    assert isinstance(ours, process.Child) and answers[0] == answers[1]
    assert answers[0][1] == b"hello\n\n" and answers[0][2].endswith(b"missing\n") and answers[0][4] == 0


def test_a_long_lived_git_s_refusal_is_on_its_stderr(repo: Path, tmp_path: Path) -> None:
    """With `stderr`, what git says on failing is read after stdin closes; without, it is not kept."""
    proc = process.start(["git", "mktree", "-z", "--batch"], str(repo), stderr=True)
    assert proc.stdin is not None
    proc.stdin.write(b"not a tree entry\0\0")
    out, err = proc.communicate()
    assert proc.returncode != 0 and err and out == b""
    quiet = process.start(["git", "mktree", "-z", "--batch"], str(repo))
    assert quiet.stdin is not None
    quiet.stdin.write(b"not a tree entry\0\0")
    assert quiet.communicate() == (b"", b"") and quiet.returncode != 0
    with pytest.raises(FileNotFoundError):
        process.start(["git", "cat-file", "--batch"], str(tmp_path / "gone"))


def test_a_long_lived_git_s_stdout_larger_than_a_pipe_holds_is_read_beside_its_stderr(repo: Path) -> None:
    """A child that writes more than a pipe holds (64 KiB) to stdout before it writes to stderr and
    exits: communicate reads both as they come, what the caller had read itself not returned again.
    Read in a thread joined with a time limit, only so that a deadlock fails instead of hanging."""
    alias = "alias.both=!head -c 300000 /dev/zero; printf done >&2"
    proc = process.start(["git", "-c", alias, "both"], str(repo), stderr=True)
    assert isinstance(proc, process.Child)
    assert proc.stdout.read(10) == bytes(10)  # the rest of a buffered read is stdout's too
    done: list[tuple[bytes, bytes]] = []
    reader = threading.Thread(target=lambda: done.append(proc.communicate()), daemon=True)
    reader.start()
    reader.join(timeout=60)
    if reader.is_alive():  # deadlocked: close our end of stdout so that the child's writer dies of SIGPIPE
        proc.kill()
        os.close(proc.stdout.fileno())
        reader.join(timeout=30)
        pytest.fail("communicate did not return: it waited on one pipe while the child filled the other")
    assert done == [(bytes(300000 - 10), b"done")] and proc.returncode == 0


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")
def test_a_detached_process_has_a_session_of_its_own_and_none_of_the_caller_s_streams(repo: Path,
                                                                                     tmp_path: Path) -> None:
    script = tmp_path / "look.py"
    script.write_text("import os, sys\n"
                      "def target(fd):\n"
                      "    try:\n"
                      "        return os.readlink(f'/proc/self/fd/{fd}')\n"
                      "    except OSError:\n"
                      "        return None\n"
                      "seen = (os.getsid(0) == os.getpid(), [target(fd) for fd in (0, 1, 2)],\n"
                      "        target(int(sys.argv[2])))\n"
                      "open(sys.argv[1], 'w').write(repr(seen))\n")
    held = os.open(tmp_path / "held", os.O_WRONLY | os.O_CREAT)
    os.set_inheritable(held, True)
    try:
        process.detach([sys.executable, str(script), str(tmp_path / "seen"), str(held)])  # reaped: it has finished
        leader, streams, held_there = ast.literal_eval((tmp_path / "seen").read_text())
    finally:
        os.close(held)
    assert leader and streams == [os.devnull] * 3 and held_there != str(tmp_path / "held")
