"""Git processes, started as subprocess starts them, without importing subprocess: that import
(with signal, threading, selectors and locale) costs about 6 ms, nearly what a small repository's
whole `git commit` takes, on every CLI transition.

`run` runs one short git process as `subprocess.run(capture_output=True)` runs it; `start` starts a
long-lived one (`cat-file --batch`, `mktree --batch`) as `subprocess.Popen(stdin=PIPE, stdout=PIPE)`
does; `detach` starts one in a session of its own, its standard streams /dev/null.

The child is started by `os.posix_spawnp` with SIGPIPE and SIGXFSZ back at their defaults (as
subprocess's restore_signals does), stdout and stderr captured, stdin a pipe fed `input` where
there is input and else the caller's; where the caller's own standard streams are closed (a pipe
could land on them), subprocess does it instead. Its working directory is given to git as `-C`.
Every other descriptor the caller holds open and inheritable (one it was itself handed, or one
made inheritable for another child) is closed in the child, as subprocess's close_fds does:
posix_spawn keeps them, and Linux has no POSIX_SPAWN_CLOEXEC_DEFAULT, so the open ones are
listed from /proc/self/fd (or /dev/fd) and each gets a close action.
"""
# Lazy imports: subprocess, the fallback where posix_spawn cannot start git as asked (the caller's descriptors cannot
#   be listed, or its standard streams are closed): subprocess (with threading, selectors, signal) costs about 6 ms;
#   a transition's git is posix_spawn. The one module below the API that defers subprocess: every other one starts
#   its processes here.
from __future__ import annotations

import errno
import os
import select
import stat

try:  # the signal numbers from the builtin module: `signal` builds enums at import
    from _signal import SIGKILL, SIGPIPE, SIGXFSZ
except ImportError:  # pragma: no cover - other Pythons
    from signal import SIGKILL, SIGPIPE, SIGXFSZ

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (nor contextlib: a no-op sync's short path
if TYPE_CHECKING:  # runs one git through here and loads neither, docs/reliability.md)
    import subprocess
    from typing import IO, Any

_CHUNK = 1 << 16
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)  # what a pipe takes whole once poll says it is writable


class Completed:
    """What subprocess.CompletedProcess holds: the command, its exit status and its output."""

    __slots__ = ("args", "returncode", "stdout", "stderr")

    def __init__(self, args: list[str], returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.args = args
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self) -> str:
        return f"Completed(args={self.args!r}, returncode={self.returncode!r})"


def run(args: list[str], cwd: str, env: dict[str, str], input: bytes | None) -> Completed:
    """Run `args` (a git command line: `git`, then its arguments) in `cwd`; OSError where it
    cannot be started (no git on PATH, no such directory)."""
    _check_directory(cwd)
    inherited = _inheritable_descriptors()
    if inherited is None:  # our descriptors cannot be listed: subprocess closes them its own way
        return _by_subprocess(args, cwd, env, input)
    pipes = [os.pipe(), os.pipe(), *([os.pipe()] if input is not None else [])]
    if any(fd < 3 for pipe in pipes for fd in pipe):  # a standard stream of ours is closed
        for pipe in pipes:
            os.close(pipe[0])
            os.close(pipe[1])
        return _by_subprocess(args, cwd, env, input)
    (out_r, out_w), (err_r, err_w), *feed = pipes
    in_r, in_w = feed[0] if feed else (None, None)
    actions = [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
    if in_r is not None:
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    actions.extend((os.POSIX_SPAWN_CLOSE, fd) for fd in inherited)
    pid = _spawn(args, cwd, env, actions, ours=(out_r, err_r, in_w), theirs=(out_w, err_w, in_r))
    try:
        stdout, stderr = _communicate(out_r, err_r, in_w, input or b"")
        _, status = os.waitpid(pid, 0)
    except BaseException:  # ^C while git runs: it goes too, as with subprocess.run
        try:
            os.kill(pid, SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
        raise
    return Completed(args, os.waitstatus_to_exitcode(status), stdout, stderr)


def _spawn(args: list[str], cwd: str, env: dict[str, str], actions: list[tuple[Any, ...]],
           ours: tuple[int | None, ...], theirs: tuple[int | None, ...]) -> int:
    """posix_spawn git (`args`) in `cwd` with the file `actions`; the pipes' ends the child was
    handed (`theirs`) are closed here in any case, ours too where it could not be started."""
    command = [args[0], "-C", cwd, *args[1:]]
    try:
        return os.posix_spawnp(command[0], command, env, file_actions=actions, setsigdef=(SIGPIPE, SIGXFSZ))
    except BaseException:
        for fd in ours:
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in theirs:
            if fd is not None:
                os.close(fd)


class Child:
    """A long-lived git process `start` started: `stdin` and `stdout` its pipes as buffered binary
    files, and `communicate`, `kill`, `wait` and `returncode` as subprocess.Popen's."""

    def __init__(self, args: list[str], pid: int, stdin: IO[bytes], stdout: IO[bytes], stderr: int | None) -> None:
        self.args = args
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self._stderr = stderr  # the read end of its stderr's pipe, where the caller keeps stderr
        self.returncode: int | None = None

    def communicate(self) -> tuple[bytes, bytes]:
        """Close stdin, read stdout and stderr to their ends together (a child filling one pipe
        while the other is read would wait on it for ever, as Popen.communicate knows), and wait."""
        try:
            self.stdin.close()
        except BrokenPipeError:
            pass
        out, err = (self.stdout.read(), b"") if self._stderr is None else self._read_both(self._stderr)
        self.stdout.close()
        self.wait()
        return out, err

    def _read_both(self, err_fd: int) -> tuple[bytes, bytes]:
        """stdout (what its buffer holds first: `read1` takes that before the pipe) and stderr
        (`err_fd`), each read as poll finds it readable, to both their ends; `err_fd` closed after."""
        out_fd = self.stdout.fileno()
        outputs: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
        poller = select.poll()
        for fd in outputs:
            poller.register(fd, select.POLLIN)
        reading = set(outputs)
        try:
            while reading:
                for fd, _ in poller.poll():
                    chunk = self.stdout.read1(_CHUNK) if fd == out_fd else os.read(fd, _CHUNK)
                    if chunk:
                        outputs[fd].append(chunk)
                    else:
                        poller.unregister(fd)
                        reading.discard(fd)
        finally:
            os.close(err_fd)
            self._stderr = None
        return b"".join(outputs[out_fd]), b"".join(outputs[err_fd])

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, SIGKILL)
            except OSError:
                pass

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        if self._stderr is not None:
            os.close(self._stderr)
            self._stderr = None
        return self.returncode


def start(args: list[str], cwd: str, env: dict[str, str] | None = None, *,
          stderr: bool = False) -> Child | subprocess.Popen[bytes]:
    """Start `args` (a git command line) in `cwd` with stdin and stdout piped, stderr piped where
    `stderr` (else /dev/null); OSError where it cannot be started."""
    _check_directory(cwd)
    environ = dict(os.environ) if env is None else env
    inherited = _inheritable_descriptors()
    pipes = [os.pipe(), os.pipe(), *([os.pipe()] if stderr else [])]
    if inherited is None or any(fd < 3 for pipe in pipes for fd in pipe):
        for pipe in pipes:
            os.close(pipe[0])
            os.close(pipe[1])
        return _popen(args, cwd, environ, stderr)
    (in_r, in_w), (out_r, out_w), *errs = pipes
    err_r, err_w = errs[0] if errs else (None, None)
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2) if err_w is not None else (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    actions.extend((os.POSIX_SPAWN_CLOSE, fd) for fd in inherited)
    pid = _spawn(args, cwd, environ, actions, ours=(in_w, out_r, err_r), theirs=(in_r, out_w, err_w))
    return Child(args, pid, os.fdopen(in_w, "wb"), os.fdopen(out_r, "rb"), err_r)


def detach(args: list[str]) -> None:
    """Start `args` in a session of its own, its standard streams /dev/null and none of the
    caller's descriptors open, and reap it: a command that puts its work in the background
    (`sh -c '... &'`) leaves that work running on its own, waited for by nobody. Nothing is
    started where the caller's descriptors cannot be listed; OSError where it cannot start."""
    inherited = _inheritable_descriptors()
    if inherited is None:
        return
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    actions.extend((os.POSIX_SPAWN_CLOSE, fd) for fd in inherited if fd > 2)
    pid = os.posix_spawnp(args[0], args, dict(os.environ), file_actions=actions, setsigdef=(SIGPIPE, SIGXFSZ),
                          setsid=True)
    os.waitpid(pid, 0)


def _check_directory(cwd: str) -> None:
    if not stat.S_ISDIR(os.stat(cwd).st_mode):  # the error subprocess's chdir would raise
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), cwd)


def _inheritable_descriptors() -> list[int] | None:
    """The caller's descriptors above 2 that an exec would keep open; None where the open ones
    cannot be listed. Python opens its own close-on-exec (PEP 446), so this is usually empty."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(listing)
        except OSError:
            continue
        inheritable = []
        for name in names:
            fd = int(name)
            if fd > 2:
                try:
                    if os.get_inheritable(fd):
                        inheritable.append(fd)
                except OSError:  # the listing's own descriptor, closed once listed
                    continue
        return inheritable
    return None


def _communicate(out_r: int, err_r: int, in_w: int | None, data: bytes) -> tuple[bytes, bytes]:
    """Feed `data` to `in_w` while reading `out_r` and `err_r` to their ends; every fd closed after."""
    outputs: dict[int, list[bytes]] = {out_r: [], err_r: []}
    reading = {out_r, err_r}
    poller = select.poll()
    for fd in reading:
        poller.register(fd, select.POLLIN)
    if in_w is not None and not data:
        os.close(in_w)
        in_w = None
    if in_w is not None:
        poller.register(in_w, select.POLLOUT)
    sent = 0
    try:
        while reading or in_w is not None:
            for fd, _ in poller.poll():
                if fd == in_w:
                    try:
                        sent += os.write(in_w, data[sent:sent + _PIPE_BUF])  # never blocks after POLLOUT
                    except BrokenPipeError:  # git stopped reading (it failed): its reason is on stderr
                        sent = len(data)
                    if sent >= len(data):
                        poller.unregister(in_w)
                        os.close(in_w)
                        in_w = None
                    continue
                chunk = os.read(fd, _CHUNK)
                if chunk:
                    outputs[fd].append(chunk)
                else:
                    poller.unregister(fd)
                    os.close(fd)
                    reading.discard(fd)
    finally:
        for fd in (*reading, *([in_w] if in_w is not None else [])):
            os.close(fd)
    return b"".join(outputs[out_r]), b"".join(outputs[err_r])


def _by_subprocess(args: list[str], cwd: str, env: dict[str, str], input: bytes | None) -> Completed:
    import subprocess

    proc = subprocess.run(args, cwd=cwd, input=input, capture_output=True, env=env, check=False)
    return Completed(args, proc.returncode, proc.stdout, proc.stderr)


def _popen(args: list[str], cwd: str, env: dict[str, str], stderr: bool) -> subprocess.Popen[bytes]:
    import subprocess

    return subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE if stderr else subprocess.DEVNULL)
