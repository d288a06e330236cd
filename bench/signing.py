"""What signing costs: a transition of a bound actor (git signs it through ssh-keygen), and
verify of a history whose every transition is signed. Run from the repository root:

    .venv/bin/python bench/signing.py [--transitions 1000] [--runs 10] [--repeat 3]

Builds two stores with the same transitions (bench/history.py's cycle): one where nobody is
bound, one where the orchestrator is bound to an ed25519 key and every transition is signed.
Prints the mean time a transition took while building each (in-process, through the Python
API) and the median wall and CPU time of `verify --json` on each (the real CLI).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from history import CPU, build, options, timed  # noqa: E402  (bench/history.py)


def main() -> None:
    opts = options(__doc__)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        for signed in (False, True):
            repo = Path(tmp) / ("signed" if signed else "unsigned")
            if signed:
                os.environ["STATEDIR_SIGNING_KEY"] = str(key)
                _bind(repo, key)
            start = time.perf_counter()
            build(repo, opts.transitions, opts.runs)
            per = (time.perf_counter() - start) / opts.transitions
            wall, out = timed(["verify", "--json"], repo, opts.repeat)
            result = json.loads(out)
            assert result["clean"], result["findings"][:3]
            raw = subprocess.run(["git", "log", "--pretty=raw"], cwd=repo, capture_output=True, text=True).stdout
            sigs = raw.count("\ngpgsig ")
            rows.append(("signed" if signed else "unsigned", per, wall, CPU[0], result["checked"], sigs))
    print(f"{opts.transitions} transitions over {opts.runs} runs; verify: median of {opts.repeat}")
    print(f"{'store':<10} {'a transition':>13} {'verify wall':>12} {'verify cpu':>11} {'commits':>8} {'signed':>7}")
    for name, per, wall, cpu, checked, sigs in rows:
        print(f"{name:<10} {1000 * per:11.1f}ms {wall:11.2f}s {cpu:10.2f}s {checked:8d} {sigs:7d}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def _bind(repo: Path, key: Path) -> None:
    """A store whose orchestrator is bound to `key` (git init and the store come first)."""
    from statedir import api

    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        subprocess.run(["git", "config", name, value], cwd=repo, check=True)
    api.init(repo / "state")
    api.StateDir(repo / "state").add_signer("pipeline_orchestrator", f"{key}.pub")


if __name__ == "__main__":
    main()
