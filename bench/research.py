"""The research ledger at 100 and at 100,000 entities: query and write costs, and their ratio.

    .venv/bin/python bench/research.py [--small 100] [--large 100000] [--repeat 15]

Each store is built fast: its entity files are written directly (the bytes statedir writes)
and committed once; the index is then built by one full `--rebuild-index` (timed too). Each
figure is a median; queries are measured in-process (the Python API) and as the CLI process
an agent runs, over ids picked across the whole store.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import statedir
from statedir import api, yaml
from statedir.research.kinds import KINDS
from statedir.store import schema_ref

BIN = Path(sys.executable).parent / "statedir"
STAMP = "2026-11-30T00:00:00Z"


def median(action: Callable[[int], object], repeat: int) -> float:
    action(-1)  # warm once, as a store in use would be
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        action(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def records(total: int) -> dict[str, list[dict[str, object]]]:
    """`total` entities in the shape of a real ledger: per question one hypothesis, one
    experiment, two runs, each run a result and a claim; sources and evidence beside them."""
    per_question = 10  # q, hyp, exp, 2 runs, 2 results, a claim, a source and its evidence
    questions = max(1, (total - 1) // per_question)
    out: dict[str, list[dict[str, object]]] = {k: [] for k in KINDS}
    out["project"].append({"id": "proj_default", "name": "Default Project", "description": None,
                           "status": "active", "created_at": STAMP, "created_by": "user"})
    for n in range(questions):
        q, h, e = f"q_20261130_{n:06x}", f"hyp_20261130_{n:06x}", f"exp_20261130_{n:06x}"
        out["question"].append({"id": q, "text": f"Question {n}?", "origin_skill": "deep-research",
                                "project_id": "proj_default", "status": "open", "created_at": STAMP,
                                "updated_at": STAMP})
        out["hypothesis"].append({"id": h, "question_id": q, "statement": "Auto", "status": "proposed",
                                  "synthetic": True, "created_at": STAMP, "created_by": "deep-research"})
        out["experiment"].append({"id": e, "hypothesis_id": h, "description": "Auto", "status": "planned",
                                  "synthetic": True, "created_at": STAMP, "created_by": "deep-research"})
        for r in range(2):
            run = f"run_20261130_{n:05x}{r}"
            out["run"].append({"id": run, "skill": f"skill{n % 50}", "mode": None, "question_id": q,
                               "hypothesis_id": h, "experiment_id": e, "status": "completed",
                               "started_at": STAMP, "ended_at": STAMP})
            out["result"].append({"event": "result", "id": f"res_20261130_{n:05x}{r}", "run_id": run,
                                  "summary": "S", "artifact_ref": None, "ts": STAMP, "schema_version": 1})
        out["claim"].append({"event": "claim", "id": f"clm_20261130_{n:06x}", "run_id": run, "statement": "C",
                             "confidence": "high", "evidence_ref": None, "evidence_id": None, "ts": STAMP,
                             "schema_version": 1})
        src = f"src_20261130_{n:06x}"
        out["source"].append({"id": src, "title": f"Paper {n}", "authors": "Ng T", "year": 2025,
                              "doi": f"10.1000/{n}", "url": None, "venue": None, "evidence_tier": None,
                              "screening_status": "pending", "exclusion_reason": None,
                              "project_id": "proj_default", "created_at": STAMP, "created_by": "user"})
        out["evidence"].append({"id": f"evd_20261130_{n:06x}", "source_id": src, "question_id": q,
                                "hypothesis_id": None, "statement": "S", "stance": "supports", "limitations": None,
                                "uncertainty_note": None, "created_at": STAMP, "created_by": "user"})
    while sum(len(rows) for rows in out.values()) < total:  # round up to exactly `total`
        n = len(out["project"])
        out["project"].append({"id": f"proj_20261130_{n:06x}", "name": f"Project {n}", "description": None,
                               "status": "active", "created_at": STAMP, "created_by": "user"})
    return out


def build(root: Path, total: int) -> tuple[api.StateDir, dict[str, list[dict[str, object]]], float]:
    repo = root / f"n{total}"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    api.init(repo / "state")
    sd = statedir.open(repo / "state")
    made = records(total)
    for name, rows in made.items():
        kind = KINDS[name]
        folder = repo / "state" / "research" / kind.folder
        folder.mkdir(parents=True, exist_ok=True)
        for record in rows:
            rel = kind.rel(str(record["id"]))
            data = {"schema_version": 1, **{k: v for k, v in record.items() if k != "schema_version"}}
            (folder / f"{record['id']}.yaml").write_text(yaml.dump(data, schema_ref(rel)))
    subprocess.run(["git", "config", "gc.auto", "0"], cwd=repo, check=True)  # no repack while measuring
    subprocess.run(["git", "add", "state/research"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "bulk research records"], cwd=repo, check=True)
    start = time.perf_counter()
    sd.research.rebuild_index(full=True)
    return sd, made, time.perf_counter() - start


def measure(sd: api.StateDir, made: dict[str, list[dict[str, object]]], repeat: int) -> dict[str, float]:
    ledger = sd.research
    pick = random.Random(7)
    runs = [str(r["id"]) for r in made["run"]]
    questions = [str(q["id"]) for q in made["question"]]
    repo = sd.store.worktree
    cli_env = {**os.environ, "STATEDIR_STORE": str(sd.store.root)}
    figures = {
        "query --run-id (API)": median(lambda _: ledger.query(run_id=pick.choice(runs)), repeat * 10),
        "query --question-id (API)": median(lambda _: ledger.query(question_id=pick.choice(questions)), repeat * 10),
        "query --run-id (CLI)": median(lambda _: subprocess.run(
            [str(BIN), "research", "--query", "--run-id", pick.choice(runs), "--json"], cwd=repo, env=cli_env,
            capture_output=True, check=True), repeat),
        "record-claim (API)": median(lambda _: ledger.record_claim(pick.choice(runs), "bench claim"), repeat),
        "start-run --question-id (CLI)": median(lambda _: subprocess.run(
            [str(BIN), "research", "--start-run", "--skill", "bench", "--question-id", pick.choice(questions),
             "--json"], cwd=repo, env=cli_env, capture_output=True, check=True), repeat),
        "create-source, DOI dedup hit (API)": median(
            lambda _: ledger.create_source("again", doi=f"10.1000/{pick.randrange(len(questions))}"), repeat),
    }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for total in (args.small, args.large):
            sd, made, rebuild = build(Path(tmp), total)
            count = sum(len(rows) for rows in made.values())
            figures = measure(sd, made, args.repeat)
            figures["rebuild-index --full (API)"] = rebuild
            results[count] = figures
        small, large = results
        print(f"{'research ledger (median ms)':38} {small:>10,} {large:>10,}   ratio")
        for name in results[small]:
            a, b = results[small][name] * 1000, results[large][name] * 1000
            print(f"{name:38} {a:10.2f} {b:10.2f}   {b / a:5.2f}x")


if __name__ == "__main__":
    main()
