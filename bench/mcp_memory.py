"""The MCP server's memory over many calls: `statedir mcp` as a real stdio subprocess, driven by
the SDK's client through a mix of reads (next, status, show, get) and, every WRITE_EVERY calls,
a transition (stage 1 blocked, then back in progress), its resident size read from /proc after each block. From the root:

    .venv/bin/python bench/mcp_memory.py [--calls 10000] [--every 1000]

Prints the server's RSS (MiB) after the warm-up and after each block, and the growth per call
from the warm-up on; flat is a few bytes a call (the allocator's noise), not kilobytes.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

# This folder holds mcp.py: it must not shadow the MCP SDK's `mcp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

import statedir  # noqa: E402
from statedir import api  # noqa: E402

BIN = Path(sys.executable).parent / "statedir"
WRITE_EVERY = 50
WARM = 200


def server_rss() -> tuple[int, float]:
    """The statedir server among this process's children: its pid and resident MiB."""
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if any(part.endswith(b"statedir") for part in cmd[:2]):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        return int(pid), int(line.split()[1]) / 1024
    raise SystemExit("the server process was not found")


async def drive(store: Path, calls: int, every: int) -> None:
    params = StdioServerParameters(command=str(BIN), args=["mcp", "--store", str(store)], env=dict(os.environ))
    reads = [("next", {"run_id": "r1"}), ("status", {"run_id": "r1"}), ("show", {"run_id": "r1"}),
             ("get", {"run_id": "r1", "path": "topic"})]
    async with Client(params) as client:
        refused = 0

        async def call(i: int) -> None:
            nonlocal refused
            if i % WRITE_EVERY == 0:
                status = "blocked" if i % (2 * WRITE_EVERY) else "in_progress"
                result = await client.call_tool("stage", {"run_id": "r1", "stage": "1", "status": status,
                                                          "reason": "bench"})
            else:
                name, arguments = reads[i % len(reads)]
                result = await client.call_tool(name, arguments)
            refused += bool(result.is_error)

        start = time.perf_counter()
        for i in range(WARM):
            await call(i)
        _, warm = server_rss()
        print(f"after {WARM} calls (warm-up): {warm:.1f} MiB")
        for i in range(WARM, WARM + calls):
            await call(i)
            if (i - WARM + 1) % every == 0:
                _, rss = server_rss()
                done = i - WARM + 1
                print(f"after {done + WARM} calls: {rss:.1f} MiB ({(rss - warm) * 1024 * 1024 / done:+.0f} B a call, "
                      f"{time.perf_counter() - start:.0f} s, {refused} refused)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--every", type=int, default=1000)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        for args in (["init", "-q", "-b", "main"], ["config", "user.name", "bench"],
                     ["config", "user.email", "bench@statedir.invalid"]):
            os.spawnvp(os.P_WAIT, "git", ["git", "-C", str(repo), *args])
        api.init(repo / "state")
        sd = statedir.open(repo / "state")
        sd.new("r1", topic="memory bench")
        sd.stage("r1", "1", "in_progress")
        anyio.run(drive, repo / "state", opts.calls, opts.every)


if __name__ == "__main__":
    main()
