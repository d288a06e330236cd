"""A store's files as of any commit, parsed once per blob: runs, templates, passports, logs."""
from __future__ import annotations

import copy
import datetime
from dataclasses import dataclass
from typing import Any

from statedir.engine import materials, renumbered, run_settings, run_shape
from statedir.engine import template as template_mod
from statedir.engine.template import Template
from statedir.engine.template import identity as template_identity
from statedir.engine.template import versions as template_versions
from statedir.engine.transition_data import RunData
from statedir.errors import CorruptStore, GitError, UnknownRun
from statedir.gitops import objects
from statedir.gitops.object_ids import blob_id
from statedir.gitops.objects import ObjectReader
from statedir.history.repaired_view import HandMerges
from statedir.history.stored_files import parse
from statedir.merge.expected import fixed
from statedir.store import layout, run_logs
from statedir.store.store import Store


@dataclass
class Snapshot:
    """One run as of one commit."""

    commit: str
    template: Template
    run: RunData
    passports: dict[str, dict[str, Any]]
    histories: dict[str, list[dict[str, Any]]]


class CommitReader:
    """Reads and parses store files at commits through one `ObjectReader`; a blob is parsed once."""

    def __init__(self, store: Store, objects: ObjectReader) -> None:
        self.store = store
        self.objects = objects
        self._parsed: dict[tuple[str, str], tuple[Any, bool]] = {}
        self._templates: dict[str, Template] = {}
        self.rendered: dict[str, Any] = {}  # path -> the plain data a replay just wrote there
        self._held: dict[str, dict[str, str]] = {}  # commit -> the store's templates: name -> blob id
        self.made_with: dict[str, str] = {}  # run -> the template digest its `new` replayed with
        self.hand_merges = HandMerges()  # met so far: what they forged, and what the driver gives
        # (commit, forged files): the parent a replay now reads, on the state its hand merges should have left
        self.viewing: tuple[str, dict[str, tuple[bytes | None, bytes | None]]] | None = None
        self._own: dict[str, bytes] = {}  # blob id -> bytes of a file of that state (no git object)
        self._run_trees: dict[tuple[str, str], str] = {}  # (commit, "runs/<id>") -> the run's tree

    def spec(self, commit: str, rel: str) -> str:
        """`commit:path`, or for a run whose tree `files` read, `tree:path in the run` (git reads
        the whole `runs/` listing for each path through it: most of a read in a large store)."""
        parts = rel.split("/", 2)
        tree = self._run_trees.get((commit, f"runs/{parts[1]}")) if len(parts) >= 2 and parts[0] == "runs" else None
        if tree and len(parts) == 2:
            return tree
        return f"{tree}:{parts[2]}" if tree else f"{commit}:{self.store.git_path(rel)}"

    def know_trees(self, rel_dir: str, trees: dict[str, str | None]) -> None:
        """Take the trees of run folder `rel_dir` (`runs/<id>`) at these commits as found
        (statedir.history.path_trees): its files are read by them. A commit without the folder
        is left to be read by its path (which then finds nothing)."""
        for commit, tree in trees.items():
            if tree is not None and len(commit) in (40, 64):
                self._run_trees[(commit, rel_dir)] = tree

    def files(self, commit: str, rel_dir: str) -> dict[str, str]:
        """Every file under a store directory at `commit`: store-relative path -> blob id. A
        run's tree is read with the store's templates, then its usual folders by that tree."""
        out: dict[str, str] = {}
        usual = ["stages", "materials", "history"] if rel_dir.startswith("runs/") else []
        found = self.objects.read_many([self.spec(commit, rel_dir), *([self.spec(commit, "templates")] * bool(usual))])
        if usual:  # the store's templates too: the run's template is read next
            self._held[commit] = {n[:-5]: oid for n, (_, oid) in objects.entries(found.pop()).items()
                                  if n.endswith(".yaml")}
            if found[0] is not None and found[0][1] == "tree" and len(commit) in (40, 64) and rel_dir.count("/") == 1:
                self._run_trees[(commit, rel_dir)] = found[0][0]
        top = objects.entries(found[0])
        if usual:  # the run's usual folders, by the run's tree
            found += self.objects.read_many([self.spec(commit, f"{rel_dir}/{d}") for d in usual])
        pending = [(rel_dir, {n: e for n, e in top.items() if n not in usual or not e[0].startswith("4")})]
        pending += [(f"{rel_dir}/{d}", objects.entries(tree)) for d, tree in zip(usual, found[1:], strict=True)
                    if d in top and top[d][0].startswith("4")]
        while pending:
            directory, entries = pending.pop()
            for name, (mode, oid) in entries.items():
                if mode.startswith("4"):
                    pending.append((f"{directory}/{name}", self.objects.tree(oid)))
                else:
                    out[f"{directory}/{name}"] = oid
        if self.viewing is not None and self.viewing[0] == commit:
            held = self._held.get(commit) if usual else None
            for rel in self.viewing[1]:
                if rel.startswith(f"{rel_dir}/"):
                    _put(out, rel, self.viewed(rel, out.get(rel)))
                elif held is not None and _is_template(rel):
                    _put(held, rel[len("templates/"):-5], self.viewed(rel, held.get(rel[len("templates/"):-5])))
        return out

    def viewed(self, rel: str, oid: str | None) -> str | None:
        """The blob `rel` holds on the state the hand merges in view should have left, where
        the commit holds `oid` (None: absent, as is the answer)."""
        if self.viewing is None or rel not in self.viewing[1]:
            return oid
        merged, want = self.viewing[1][rel]
        now = self.raw(oid) if oid and set(oid) != {"0"} else None
        result = fixed(rel, want, merged, now)
        if isinstance(result, str):  # changed since the merge: as it is (its change was replayed on the view)
            return oid
        if result is None:
            return None
        found = blob_id(result, len(self.viewing[0]))
        self._own[found] = result
        return found

    def blob_id(self, commit: str, rel: str) -> str | None:
        """The blob id of `rel` at `commit` (as viewed), or None."""
        found = self.objects.read(self.spec(commit, rel))
        oid = found[0] if found and found[1] == "blob" else None
        return self.viewed(rel, oid) if self.viewing is not None and self.viewing[0] == commit else oid

    def blob(self, commit: str, rel: str) -> bytes | None:
        oid = self.blob_id(commit, rel)
        return self.raw(oid) if oid else None

    def raw(self, oid: str) -> bytes:
        blob = self._own[oid] if oid in self._own else self.objects.blob(oid)
        if blob is None:
            raise CorruptStore(f"git object {oid} is missing")
        return blob

    def parsed(self, rel: str, oid: str) -> tuple[Any, bool]:
        key = (layout.schema_ref(rel), oid)  # the schema (and its path) the bytes are read against
        if key not in self._parsed:
            self._parsed[key] = parse(rel, self.raw(oid))
        return self._parsed[key]

    def plain(self, rel: str, oid: str) -> Any:
        return self.parsed(rel, oid)[0]

    def adopt(self, rel: str, oid: str, plain: Any) -> None:
        """Remember that blob `oid` holds `plain`, as statedir wrote it (a replay proved it)."""
        self._parsed.setdefault((layout.schema_ref(rel), oid), (plain, True))

    def template(self, commit: str, name: str, version: str | None = None, digest: str | None = None) -> Template:
        """The template `name` as the store held it at `commit` (in `version`, where the run names
        one: kept beside it, or earlier in history), else the one statedir ships; with `digest`,
        the one of that content (a run's template is its name, version and digest), or CORRUPT_STORE."""
        t = self._found(commit, name, version, digest)
        if self.viewing is not None and self.viewing[0] == commit and t.digest in self.hand_merges.planted:
            raise CorruptStore(f"template {name!r} version {t.doc.get('version')} is one a hand-resolved merge "
                               "planted (not what the statedir merge driver gives), which no run follows",
                               template=name, version=version)
        return t

    def _found(self, commit: str, name: str, version: str | None, digest: str | None) -> Template:
        t = self._template(commit, name)
        if version is not None and str(t.doc.get("version")) != version:
            key = f"{name}@{version}@{commit}"
            if key not in self._templates:
                older = self._kept(commit, name, version) or template_mod.shipped_version(name, version) or \
                    template_versions.from_history(
                    self.store, name, version, commit)
                self._templates[key] = older or t  # none: the rules of the version at hand, as before
            t = self._templates[key]
        if digest is None or t.digest == digest:
            return t
        key = f"{name}@{version}#{digest}@{commit}"
        if key not in self._templates:
            at_hand = [self._kept(commit, name, str(version)), self._stored(commit, name),
                       *template_identity.shipped_with(name, version)]
            found = next((c for c in at_hand if c is not None and c.digest == digest), None)
            found = found or template_versions.from_history(self.store, name, str(version), commit, digest)
            if found is None:
                raise CorruptStore(f"the run was made on template {name!r} version {version} with content "
                                   f"{digest}, which neither the store at {commit[:10]}, its history nor statedir "
                                   "holds", template=name, version=version)
            self._templates[key] = found
        return self._templates[key]

    def _kept(self, commit: str, name: str, version: str) -> Template | None:
        rel = template_versions.kept_rel(name, version)
        kept = self.blob(commit, rel)
        return template_mod.parse_cached(kept, rel, self.store.cache_dir) if kept is not None else None

    def _stored(self, commit: str, name: str) -> Template | None:
        """The store's own `templates/<name>.yaml` at `commit`, or None."""
        try:
            t = self._template(commit, name)
        except CorruptStore:
            return None
        return t if t.source.startswith("templates/") else None

    def _template(self, commit: str, name: str) -> Template:
        rel = f"templates/{name}.yaml"
        if commit in self._held:  # listed with the run's files
            oid = self._held[commit].get(name)
        else:
            oid = self.blob_id(commit, rel)
        key = oid or f"shipped:{name}"
        if key not in self._templates:
            if oid:
                self._templates[key] = template_mod.parse_cached(self.raw(oid), f"{rel}@{commit[:10]}",
                                                                 self.store.cache_dir)
            elif name in template_mod.shipped():
                self._templates[key] = template_mod.load(name, cache_dir=self.store.cache_dir)
            else:
                raise CorruptStore(f"template {name!r} is neither in the store at {commit[:10]} nor shipped",
                                   template=name)
        return self._templates[key]

    def run(self, commit: str, run_id: str, files: dict[str, str] | None = None, *,
            boundary_log: bool = False) -> tuple[Template, RunData]:
        """A run as plain data at `commit` (`files`: its files there, when already listed)."""
        base = f"runs/{layout.check_run_id(run_id)}"
        if files is None:
            files = self.files(commit, base)
        if f"{base}/state.yaml" not in files:
            raise UnknownRun(f"no run {run_id!r} at {commit[:10]}", run_id=run_id, commit=commit)
        state = self.plain(f"{base}/state.yaml", files[f"{base}/state.yaml"])
        digest = state.get("template_digest") or self.made_with.get(run_id)  # a run made before runs recorded it:
        t = self.template(commit, state["template"], state.get("template_version"), digest)  # its `new`'s

        def need(rel: str) -> Any:
            if rel not in files:
                raise CorruptStore(f"{rel} is missing at {commit[:10]}", file=rel)
            return self.plain(rel, files[rel])

        # Shared with the parse memo, not copied: decisions never change their input (the rules'
        # tests hold them to it), and verify reads the same unchanged files commit after commit.
        # What the files leave out at its defaults is filled in (statedir.engine.run_shape).
        state = run_shape.filled_state(t, state)
        stages = {sid: run_shape.filled_stage(t, sid, self.plain(rel, files[rel]) if rel in files else None)
                  for sid in t.stage_ids for rel in (f"{base}/stages/{sid}.yaml",)}
        passports = {label: need(f"{base}/materials/{label}.yaml")
                     for label in state.get("current_version", {}).values()}
        run = RunData(run_id, state, stages, passports)
        if boundary_log or run_settings.effect_on(t, state, "reset_boundaries"):
            run.boundary_log = self.log(files, base, "reset_boundary")
        return t, run

    def log(self, files: dict[str, str], base: str, name: str) -> list[dict[str, Any]]:
        """A whole log as of the listing `files` (path -> blob id): its segments in order."""
        out: list[dict[str, Any]] = []
        for rel in run_logs.ordered(files, base, name):
            out += self.plain(rel, files[rel])
        return out

    def snapshot(self, commit: str, run_id: str, clock: datetime.datetime) -> Snapshot:
        """The run at `commit` with every passport (status as read at `clock`) and every log."""
        base = f"runs/{layout.check_run_id(run_id)}"
        files = self.files(commit, base)
        t, run = self.run(commit, run_id, files, boundary_log=True)
        hours = float(t.doc.get("passport_stale_hours", 24))
        passports = {}
        labels = sorted(r[len(base) + 11:-5] for r in files
                        if r.startswith(f"{base}/materials/") and r.endswith(".yaml") and r.count("/") == 3)
        for label in labels:
            rel = f"{base}/materials/{label}.yaml"
            passport = dict(self.plain(rel, files[rel]))
            passport["verification_status"] = materials.effective_status(passport, clock, hours)
            passports[label] = passport
        histories = {name: copy.deepcopy(self.log(files, base, name)) for name in t.logs}
        return Snapshot(commit, t, run, passports, renumbered.histories(histories, passports))


def _put(listing: dict[str, str], key: str, oid: str | None) -> None:
    if oid is None:
        listing.pop(key, None)
    else:
        listing[key] = oid


def _is_template(rel: str) -> bool:
    return rel.startswith("templates/") and rel.count("/") == 1 and rel.endswith(".yaml")


def read_at(store: Store, run_id: str, rev: str) -> Snapshot:
    """The run as of `rev` (anything `git rev-parse` takes); nothing is checked out."""
    layout.check_run_id(run_id)
    sha = objects.resolve(store.worktree, rev)
    with ObjectReader(store.worktree) as objs:
        when = commit_time(objs, sha)
        try:
            return CommitReader(store, objs).snapshot(sha, run_id, when)
        except UnknownRun:
            raise UnknownRun(f"no run {run_id!r} at {rev} ({sha[:10]})", run_id=run_id, rev=rev) from None


def commit_time(objs: ObjectReader, sha: str) -> datetime.datetime:
    """The commit's committer time (UTC), read from the commit object itself."""
    found = objs.read(sha)
    if found and found[1] == "commit":
        for line in found[2].split(b"\n\n", 1)[0].splitlines():
            if line.startswith(b"committer "):
                return datetime.datetime.fromtimestamp(int(line.rsplit(b" ", 2)[1]), datetime.timezone.utc)
    raise GitError(f"cannot read commit {sha}")
