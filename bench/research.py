"""The research ledger at 100 and at 100,000 entities: query and write costs, and their ratio.

    .venv/bin/python bench/research.py [--small 100] [--large 100000] [--repeat 15]

Each store is built fast: its entity files are written directly (the bytes statedir writes)
and committed once; the index is then built by one full `--rebuild-index` (timed too). Each
figure is a median; the two stores are measured in turn (small, large, small, ...) and the
ratio is the median of the pair-by-pair ratios, so a busy machine slows both sides alike.
Queries run in-process (the Python API) and as the CLI process an agent runs, over ids picked
across the whole store; `--skill` returns more runs the larger the store.
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
from statedir import api
from statedir.files import yaml
from statedir.research.kinds import KINDS
from statedir.store.layout import schema_ref

BIN = Path(sys.executable).parent / "statedir"
STAMP = "2026-11-30T00:00:00Z"


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


Store = tuple[api.StateDir, dict[str, list[dict[str, object]]]]


def paired(small: Callable[[], object], large: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """Medians of both, and the median of their ratios measured in turn (small, large, small,
    ...), so a busy machine slows both sides of each pair alike."""
    small(), large()  # warm once, as a store in use would be
    a_times, b_times, ratios = [], [], []
    for _ in range(repeat):
        start = time.perf_counter()
        small()
        middle = time.perf_counter()
        large()
        end = time.perf_counter()
        a_times.append(middle - start)
        b_times.append(end - middle)
        ratios.append((end - middle) / (middle - start))
    return statistics.median(a_times), statistics.median(b_times), statistics.median(ratios)


def actions(store: Store, pick: random.Random) -> dict[str, Callable[[], object]]:
    sd, made = store
    ledger = sd.research
    runs = [str(r["id"]) for r in made["run"]]
    questions = [str(q["id"]) for q in made["question"]]
    env = {**os.environ, "STATEDIR_STORE": str(sd.store.root)}

    def cli(*args: str) -> object:
        return subprocess.run([str(BIN), "research", *args, "--json"], cwd=sd.store.worktree, env=env,
                              capture_output=True, check=True)

    return {
        "query --run-id (API)": lambda: ledger.query(run_id=pick.choice(runs)),
        "query --question-id (API)": lambda: ledger.query(question_id=pick.choice(questions)),
        "query --skill (API, 2% of all runs)": lambda: ledger.query(skill=f"skill{pick.randrange(50)}"),
        "query --run-id (CLI)": lambda: cli("--query", "--run-id", pick.choice(runs)),
        "create-source, DOI dedup hit (API)": lambda: ledger.create_source(
            "again", doi=f"10.1000/{pick.randrange(len(questions))}"),
        "record-claim (API)": lambda: ledger.record_claim(pick.choice(runs), "bench claim"),
        "start-run --question-id (CLI)": lambda: cli("--start-run", "--skill", "bench", "--question-id",
                                                     pick.choice(questions)),
    }


QUERIES = 10  # queries are cheap: ten times the repeats of a write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small_sd, small_made, small_rebuild = build(Path(tmp), args.small)
        large_sd, large_made, large_rebuild = build(Path(tmp), args.large)
        sizes = [sum(len(rows) for rows in made.values()) for made in (small_made, large_made)]
        print(f"{'research ledger (median ms)':38} {sizes[0]:>10,} {sizes[1]:>10,}   ratio (paired)")
        small_actions = actions((small_sd, small_made), random.Random(7))
        large_actions = actions((large_sd, large_made), random.Random(7))
        for name, small in small_actions.items():
            repeat = args.repeat * (QUERIES if "(API)" in name and name.startswith(("query", "create")) else 1)
            a, b, ratio = paired(small, large_actions[name], repeat)
            print(f"{name:38} {a * 1000:10.2f} {b * 1000:10.2f}   {ratio:5.2f}x")
        print(f"{'rebuild-index --full (API, once)':38} {small_rebuild * 1000:10.2f} {large_rebuild * 1000:10.2f}"
              f"   {large_rebuild / small_rebuild:5.2f}x")


if __name__ == "__main__":
    main()
