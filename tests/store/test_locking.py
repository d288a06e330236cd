"""The store lock is fair to writers: a reader that comes while a writer waits waits behind it,
so readers in tight loops cannot keep a writer out until its timeout."""
from __future__ import annotations

import errno
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statedir import api
from tests.support.util import cli


def gate_taken(root: Path) -> bool:
    """Whether someone holds the store's gate exclusively (a writer waiting for the lock)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        assert exc.errno in (errno.EAGAIN, errno.EACCES)
        return True
    finally:
        os.close(fd)
    return False


@pytest.mark.slow  # timed waits on the store lock
def test_a_reader_arriving_while_a_writer_waits_goes_after_it(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="before")
    store = repo / "state"
    with sd.reading():  # a reader in the middle of its read: the writer must wait for it
        writer = subprocess.Popen([sys.executable, "-P", "-m", "statedir", "set", "p1", "topic", "after",
                                   "--reason", "r", "--json"], cwd=store, stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not gate_taken(store):  # the writer has come and is waiting
            assert writer.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        late = cli("status", "p1", "--json", cwd=store, env={"STATEDIR_LOCK_TIMEOUT": "0.5"})
        assert late.returncode == 3 and json.loads(late.stdout)["error"]["code"] == "LOCK_TIMEOUT", late.stdout
        assert writer.poll() is None
    out, _ = writer.communicate(timeout=120)
    assert writer.returncode == 0 and json.loads(out)["commit"]
    assert sd.get("p1", "topic") == "after"
