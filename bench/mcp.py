"""What an agent reads of the MCP server (tools/list: tool count and size, the default, all and by group),
then a transition through MCP against `git add` + `git commit` and against the CLI. From the root:

    .venv/bin/python bench/mcp.py [--repeat 25] [--list-only]

(bench/mcp_run.py counts the bytes of a whole run driven through the server.)

One store in a temp dir; `statedir mcp` runs as a real stdio subprocess driven by the SDK's
client (the server's start-up is paid once, before timing; it commits in-process with libgit2).
The Python API is timed both ways: committing with a git process, and `inprocess_git=True`.
Each row is a median; its ratio is
the median of pair-by-pair ratios with the git floor run in turn (A B A B ...).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

# This file is named mcp.py: its own folder must not shadow the MCP SDK's `mcp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

import statedir  # noqa: E402
from statedir import api  # noqa: E402
from statedir.mcp.catalog import GROUPS  # noqa: E402
from statedir.mcp.server import wire_bytes  # noqa: E402

BIN = Path(sys.executable).parent / "statedir"


def sh(args: list[str], cwd: Path) -> None:
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)


def git_floor(repo: Path) -> Callable[[int], None]:
    """git add + git commit of a one-line change."""
    def action(i: int) -> None:
        with (repo / "notes.txt").open("a") as out:
            out.write(f"git {i}\n")
        sh(["git", "add", "notes.txt"], repo)
        sh(["git", "commit", "-q", "-m", f"note {i}"], repo)
    return action


async def paired(action: Callable[[int], Awaitable[object]], floor: Callable[[int], None],
                 repeat: int) -> tuple[float, float, float]:
    await action(-1)
    floor(-1)
    a, b = [], []
    for i in range(repeat):
        start = time.perf_counter()
        await action(i)
        a.append(time.perf_counter() - start)
        start = time.perf_counter()
        floor(i)
        b.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b, strict=True))


async def tool_list(store: Path) -> None:
    """How many tools an agent reads and their size (the `tools/list` result as sent on the wire,
    statedir.mcp.server.wire_bytes): the default set, all of them, then each `--tools` group."""
    for groups in ((), ("all",), *((g,) for g in GROUPS)):
        args = ["mcp", "--store", str(store), *(["--tools", ",".join(groups)] if groups else [])]
        async with Client(StdioServerParameters(command=str(BIN), args=args, env=dict(os.environ))) as client:
            listed = await client.list_tools()
        print(f"tools/list {'--tools ' + groups[0] if groups else '(default)':<22} {len(listed.tools):>3} tools "
              f"{wire_bytes(listed):>7,} bytes")


async def measure(repo: Path, repeat: int) -> list[tuple[str, float, float, float]]:
    store = repo / "state"
    floor = git_floor(repo)
    rows = []
    await tool_list(store)
    if repeat == 0:
        return rows
    # `set` is the control group's (statedir mcp serves the pipeline group unless told otherwise)
    params = StdioServerParameters(command=str(BIN), args=["mcp", "--store", str(store), "--tools", "pipeline,control"],
                                   env=dict(os.environ))
    async with Client(params) as client:
        async def through_mcp(i: int) -> None:
            result = await client.call_tool("set", {"run_id": "r1", "field": "topic", "value": f"mcp {i}",
                                                    "reason": "bench"})
            assert not result.is_error, result.content
        rows.append(("MCP over stdio (set + commit)", *await paired(through_mcp, floor, repeat)))

    async def through_cli(i: int) -> None:
        sh([str(BIN), "set", "r1", "topic", f"cli {i}", "--reason", "bench", "--store", str(store)], repo)
    rows.append(("CLI subprocess (set + commit)", *await paired(through_cli, floor, repeat)))

    for label, inprocess_git in (("Python API, git process", False), ("Python API, inprocess_git", True)):
        sd = statedir.open(store, inprocess_git=inprocess_git)

        async def through_api(i: int, sd: statedir.api.StateDir = sd, tag: str = label) -> None:
            sd.set("r1", "topic", f"{tag} {i}", reason="bench")
        rows.append((f"{label} (set + commit)", *await paired(through_api, floor, repeat)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--list-only", action="store_true", help="the tools/list figures alone, no timing")
    opts = parser.parse_args()
    for var, value in (("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@x"),
                       ("GIT_COMMITTER_NAME", "bench"), ("GIT_COMMITTER_EMAIL", "bench@x")):
        os.environ.setdefault(var, value)
    with tempfile.TemporaryDirectory(prefix="statedir-bench-mcp-") as tmp:
        repo = Path(tmp) / "repo"
        sh(["git", "init", "-q", str(repo)], Path(tmp))
        api.init(repo / "state")
        statedir.open(repo / "state").new("r1", topic="bench")
        (repo / "notes.txt").write_text("0\n")
        sh(["git", "add", "notes.txt"], repo)
        sh(["git", "commit", "-q", "-m", "notes"], repo)
        rows = anyio.run(measure, repo, 0 if opts.list_only else opts.repeat)
    print(f"{'transition':<40} {'median':>9} {'git add + commit':>17} {'ratio':>6}")
    for what, value, floor, ratio in rows:
        print(f"{what:<40} {value * 1000:>7.1f}ms {floor * 1000:>15.1f}ms {ratio:>5.2f}x")


if __name__ == "__main__":
    main()
