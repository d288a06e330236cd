"""A soak of many machines, one store: N clones of a bare remote, R rounds. Run from the repository root:

    .venv/bin/python bench/soak.py [--clones 10] [--rounds 20] [--seed 1] [--json] [--keep]

Each round every clone makes a few transitions through the real CLI (appends to one shared bus
list, its own bus phase, a shared phase's status, versions of a shared run's materials, pauses
and resumes of that run, outputs of its stage, the topic of a run of its own, and the shared run's
topic and language: moves two machines make differently, which no merge can take), all clones
alike in the same seconds, as one committer; then every clone exchanges with the remote at once (so
pushes race) by `statedir sync`, a plain `git pull` + `git push`, or `git fetch` + a plain
`git merge` + `git push`, chosen at random. A plain merge git cannot finish (two versions of one
label: only sync can number them apart; or a field both sides changed) is aborted and the clone
syncs instead; a push the remote rejects waits for the next round. A sync the merge refuses
(MERGE_REFUSED) is resolved by `statedir sync --replay`, never by `git reset`: the clone's
unpublished transitions are decided again on top of the remote's state. At the end every clone
syncs until all stand at one commit, and the invariants are checked:

- every clone's tree is the same, and the remote's;
- every accepted transition's commit is in the history, or its replay's (following
  `Statedir-Replayed-From` through replays of replays), or the replay reported the rules refuse it
  now; its request id in exactly one commit (an original that was replayed: in none),
  and in exactly one entry of its run's transitions log (a material: in exactly one passport,
  each version its own content); every bus append's value is in the list exactly once;
- `statedir validate` and `statedir verify` are clean.

Exit 0 when they hold; the figures (transitions, merges, pushes rejected, fallbacks, time) go to stdout.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from statedir.files import yaml

SESSION = "2026-01-01-soak"
SHARED = "shared"
MATERIALS = ("paper_draft", "rq_brief")  # two version series of the academic pipeline


class Soak:
    def __init__(self, base: Path, clones: int, seed: int) -> None:
        self.base = base
        self.rng = random.Random(seed)
        self.names = [f"c{n:02d}" for n in range(clones)]
        self.env = {"HOME": str(base / "home"), "GIT_CONFIG_NOSYSTEM": "1", "PATH": _path(),
                    "GIT_CONFIG_GLOBAL": str(base / "home" / ".gitconfig")}
        self.accepted: list[dict[str, Any]] = []
        self.replayed: dict[str, str | None] = {}  # original commit -> its replay (None: no commit needed)
        self.refused_on_replay: dict[str, str] = {}  # original commit -> the rules' refusal code
        self.figures: Counter[str] = Counter()
        self.rounds = 0
        self.lock = threading.Lock()  # clones act in threads: the ledger and the figures are shared

    def count(self, figure: str, n: int = 1) -> None:
        with self.lock:
            self.figures[figure] += n

    # --- processes --------------------------------------------------------------------------------
    def run(self, clone: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(list(args), cwd=self.base / clone, env=self.env, capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise SystemExit(f"{clone}: {' '.join(args)} failed ({proc.returncode}): {proc.stdout}{proc.stderr}")
        return proc

    def sd(self, clone: str, *args: str) -> tuple[int, Any]:
        proc = self.run(clone, sys.executable, "-m", "statedir", *args, "--json", check=False)
        try:
            return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None
        except ValueError:
            raise SystemExit(f"{clone}: statedir {' '.join(args)}: {proc.stdout}{proc.stderr}") from None

    # --- the network ------------------------------------------------------------------------------
    def build(self) -> None:
        (self.base / "home").mkdir()
        (self.base / "home" / ".gitconfig").write_text("[user]\n\tname = Soak\n\temail = soak@example.invalid\n"
                                                       "[init]\n\tdefaultBranch = main\n")
        self.run(".", "git", "init", "-q", "--bare", "-b", "main", "remote.git")
        first = self.names[0]
        self.run(".", "git", "clone", "-q", "remote.git", first)
        for args in (("init",), ("new", SHARED, "--topic", "shared"), ("stage", SHARED, "1", "in_progress"),
                     ("bus", "init", SESSION), *(("new", f"own-{n}", "--topic", n) for n in self.names)):
            code, out = self.sd(first, *args)
            assert code == 0, (args, out)
        self.run(first, "git", "push", "-q", "-u", "origin", "HEAD:main")
        for name in self.names[1:]:
            self.run(".", "git", "clone", "-q", "remote.git", name)
            self.run(name, sys.executable, "-m", "statedir", "doctor", "--fix")

    # --- a round ----------------------------------------------------------------------------------
    def transitions(self, clone: str, rng: random.Random) -> None:
        for n in range(rng.randint(1, 3)):
            tag = f"{clone}-r{self.rounds}-{n}"
            kind = rng.choice(["bus-append", "bus-evidence", "bus-own", "bus-shared", "material", "pause",
                               "resume", "output", "topic", "shared-topic", "shared-language"])
            args = {
                "bus-append": ("bus", "append", SESSION, "notes", tag),
                "bus-evidence": ("bus", "append", SESSION, "phases.1-shared.evidence", f".ai_log/{tag}.md"),
                "bus-own": ("bus", "set", SESSION, f"phases.{clone}.status", rng.choice(["todo", "in_progress",
                                                                                         "done"])),
                "bus-shared": ("bus", "set", SESSION, "phases.1-shared.status", rng.choice(["in_progress", "done"])),
                "material": ("material", SHARED, rng.choice(MATERIALS), "--file", f"{tag}.md"),
                "pause": ("pipeline", SHARED, "paused"),
                "resume": ("pipeline", SHARED, "running"),
                "output": ("output", SHARED, "1", "--output", tag),
                "topic": ("set", f"own-{clone}", "topic", tag, "--reason", tag),
                "shared-topic": ("set", SHARED, "topic", tag, "--reason", tag),
                "shared-language": ("set", SHARED, "language", rng.choice(["de", "fr", "en", "ja"]), "--reason", tag),
            }[kind]
            if kind == "material":
                (self.base / clone / f"{tag}.md").write_text(f"{tag}\n")
            code, out = self.sd(clone, *args)
            if code not in (0, 1):
                raise SystemExit(f"{clone}: statedir {' '.join(args)}: {out}")
            if code == 1 or not out.get("commit"):  # pausing a paused run, a phase set back, ...
                self.count("transitions refused by the rules (or no change)")
                continue
            with self.lock:
                self.accepted.append({"clone": clone, "kind": kind, "tag": tag, "commit": out["commit"]})
            self.count("transitions accepted")

    def exchange(self, clone: str, how: str) -> None:
        if how == "sync":
            self.sync(clone)
            return
        self.count(f"plain git {how}")
        if how == "pull":
            merged = self.run(clone, "git", "pull", "-q", "--no-rebase", "--no-edit", check=False)
        else:
            self.run(clone, "git", "fetch", "-q", "origin")
            merged = self.run(clone, "git", "merge", "-q", "--no-edit", "origin/main", check=False)
        if merged.returncode != 0:  # two versions of one label: git cannot rename a passport
            self.count(f"plain git {how} conflicted, then statedir sync")
            self.run(clone, "git", "merge", "--abort")
            self.sync(clone)
            return
        if self.run(clone, "git", "push", "-q", "origin", "HEAD:main", check=False).returncode != 0:
            self.count("plain git push rejected (the remote moved)")

    def sync(self, clone: str) -> dict[str, Any]:
        replay = False
        for _ in range(20):
            code, out = self.sd(clone, "sync", *(["--replay"] if replay else []))
            moving = code == 3 and any(m in out["error"]["message"] for m in ("kept moving", "after the replay"))
            if moving:
                self.count("statedir sync gave up on a moving remote, then again")  # as a user would
                continue
            if code == 1 and out["error"]["code"] == "MERGE_REFUSED" and not replay:
                if "sync --replay" not in out["error"]["message"]:
                    raise SystemExit(f"{clone}: the refusal does not name sync --replay: {out['error']['message']}")
                self.count("statedir sync refused (MERGE_REFUSED), then sync --replay")
                replay = True
                continue
            break
        if code != 0:
            raise SystemExit(f"{clone}: statedir sync{' --replay' if replay else ''} refused: {json.dumps(out)[:2000]}")
        self.count(f"statedir sync {out['status']}")
        self.count("statedir sync pushes rejected (retried)", out["attempts"] - 1)
        if out["status"] == "replayed":
            self.count("sync --replay: transitions replayed", sum(1 for r in out["replayed"] if r["commit"]))
            self.count("sync --replay: already so on the remote's side (no commit)",
                       sum(1 for r in out["replayed"] if not r["commit"]))
            for item in out["refused"]:
                self.count(f"sync --replay: refused now by the rules ({item['code']})")
            self.count("sync --replay: skipped (hand edits, merges)", len(out["skipped"]))
            with self.lock:
                self.replayed.update({r["from"]: r["commit"] for r in out["replayed"]})
                self.refused_on_replay.update({r["commit"]: r["code"] for r in out["refused"]})
        return dict(out)

    def round(self) -> None:
        self.rounds += 1
        seeds = {name: self.rng.random() for name in self.names}
        ways = {name: self.rng.choice(["sync", "sync", "pull", "merge"]) for name in self.names}
        with ThreadPoolExecutor(max_workers=len(self.names)) as pool:
            list(pool.map(lambda n: self.transitions(n, random.Random(seeds[n])), self.names))
        order = self.rng.sample(self.names, len(self.names))
        with ThreadPoolExecutor(max_workers=len(self.names)) as pool:
            list(pool.map(lambda n: self.exchange(n, ways[n]), order))

    def settle(self) -> None:
        """Every clone syncs until all stand at the remote's commit."""
        for _ in range(3):
            for name in self.names:
                self.sync(name)
            heads = {self.run(n, "git", "rev-parse", "HEAD").stdout.strip() for n in self.names}
            remote = self.run(".", "git", "--git-dir", "remote.git", "rev-parse", "main").stdout.strip()
            if heads == {remote}:
                return
        raise SystemExit(f"the clones did not come to one commit: {heads} (remote {remote})")

    # --- the invariants -----------------------------------------------------------------------------
    def check(self) -> list[str]:
        problems = []
        first = self.names[0]
        trees = {n: self.run(n, "git", "rev-parse", "HEAD^{tree}").stdout.strip() for n in self.names}
        if len(set(trees.values())) != 1:
            problems.append(f"the clones' trees differ: {trees}")
        log = self.run(first, "git", "log", "--format=%H %(trailers:key=Statedir-Request-Id,valueonly,separator=,)")
        ids: dict[str, str] = {}
        per_id: Counter[str] = Counter()
        for line in log.stdout.splitlines():
            sha, _, request_id = line.partition(" ")
            ids[sha] = request_id
            per_id[request_id] += bool(request_id)
        self.figures["commits in the history"] = len(ids)
        self.figures["merge commits"] = len(self.run(first, "git", "rev-list", "--merges", "HEAD").stdout.split())
        entries: Counter[str] = Counter()
        for run in [SHARED, *(f"own-{n}" for n in self.names)]:
            code, doc = self.sd(first, "show", run, "--format", "json")
            assert code == 0, doc
            entries.update(e.get("request_id") for e in doc["history"]["transitions"] if e.get("request_id"))
        folder = self.base / first / "state" / "runs" / SHARED / "materials"
        passports = [yaml.to_plain(yaml.load(p.read_bytes(), p.name)) for p in sorted(folder.glob("*.yaml"))]
        session = self.sd(first, "bus", "get", SESSION)[1]
        lists = {"bus-append": session.get("notes", []),
                 "bus-evidence": session["phases"].get("1-shared", {}).get("evidence", [])}
        registered = Counter(p.get("request_id") for p in passports)
        for made in self.accepted:
            commit: str | None = made["commit"]
            while commit not in ids and commit in self.replayed:  # replayed, perhaps more than once
                original_id = self.request_id(made["clone"], commit)  # replays stay in their clone
                if per_id[original_id]:
                    problems.append(f"the replayed original {commit[:10]}'s request {original_id} is in the history")
                commit = self.replayed[commit]
            if commit is None or commit in self.refused_on_replay:
                self.count("accepted transitions a replay found already so, or the rules refused on replay")
                continue
            made_id = ids.get(commit)
            if made_id is None:
                problems.append(f"{made['clone']}'s {made['kind']} {made['commit'][:10]} is not in the history")
                continue
            if commit != made["commit"]:
                self.count("accepted transitions in the history as their replay")
            if per_id[made_id] != 1:
                problems.append(f"request {made_id} is in {per_id[made_id]} commits")
            if not made["kind"].startswith("bus") and entries[made_id] != 1:
                problems.append(f"{made['kind']} {made_id} has {entries[made_id]} transitions log entries")
            if made["kind"] == "material" and registered[made_id] != 1:
                problems.append(f"material {made_id} is in {registered[made_id]} passports")
            value = made["tag"] if made["kind"] == "bus-append" else f".ai_log/{made['tag']}.md"
            if made["kind"] in lists and lists[made["kind"]].count(value) != 1:
                problems.append(f"bus value {value} is in its list {lists[made['kind']].count(value)} times")
        contents = Counter((p["series"], p["content_hash"]) for p in passports)
        problems += [f"{series} content {digest[:10]} has {n} labels"
                     for (series, digest), n in contents.items() if n > 1]
        labels = Counter(p["version_label"] for p in passports)
        problems += [f"label {label} names {n} versions" for label, n in labels.items() if n > 1]
        self.figures["versions registered"] = len(passports)
        for args in (("validate",), ("verify",)):
            code, out = self.sd(first, *args)
            if code != 0:
                problems.append(f"statedir {args[0]}: {json.dumps(out)[:2000]}")
        return problems


    def request_id(self, clone: str, commit: str) -> str:
        return self.run(clone, "git", "log", "-1", "--format=%(trailers:key=Statedir-Request-Id,valueonly)",
                        commit).stdout.strip()


def _path() -> str:
    return os.environ.get("PATH", "/usr/bin:/bin")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clones", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="the figures and problems as one JSON document")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (its path is printed)")
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="statedir-soak-"))
    start = time.perf_counter()
    try:
        soak = Soak(base, args.clones, args.seed)
        soak.build()
        for _ in range(args.rounds):
            soak.round()
        soak.settle()
        problems = soak.check()
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    figures = {"clones": args.clones, "rounds": args.rounds, "seed": args.seed, **soak.figures,
               "seconds": round(time.perf_counter() - start, 1)}
    if args.json:
        print(json.dumps({"figures": figures, "problems": problems}, indent=1))
    else:
        for key, value in figures.items():
            print(f"{key:55} {value}")
        print("\n".join(["", *problems]) if problems else "invariants hold")
        if args.keep:
            print(f"kept {base}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
