"""A merge sync refuses, as data and in words: each conflicted file merged again by the rules for
its structured report (`unmerged`), the refusal's headline, and what resolves it (`next_steps`)."""
from __future__ import annotations

from typing import Any

from statedir.gitops import git
from statedir.hints import HINT, HINT2, SYNC_REPLAY, Hint, Placeholder
from statedir.merge import driver
from statedir.store.store import Store


def headline(conflicts: list[dict[str, Any]]) -> str:
    first = conflicts[0]
    fields = ", ".join(f["field"] for f in first["fields"]) or first.get("reason") or "its content"
    where = f"run {first['run']}, {first['file']}" if first["run"] else first["file"]
    more = f" (and {len(conflicts) - 1} more file(s))" if len(conflicts) > 1 else ""
    return f"merge refused: {where}: {fields} changed on both sides{more}; nothing was changed. {next_steps(conflicts)}"


def _settable(conflicts: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The first run-level field a conflict is about that `set` takes (its run, the field)."""
    fields = [(c["run"], f["field"]) for c in conflicts if c["run"] and c["file"].endswith("/state.yaml")
              for f in c["fields"] if f["field"] in SETTABLE or f["field"].startswith("team.")]
    return fields[0] if fields else None


SETTABLE = ("topic", "language", "settings.reset_boundaries")


def next_steps(conflicts: list[dict[str, Any]]) -> str:
    """What resolves a refused merge, its steps said by `next_hints(conflicts)`: the replay, and
    `set` for a run-level field."""
    text = (f"Next: `{HINT}` decides this machine's unpublished transitions again on top of the "
            "remote's state (the rules refuse what no longer holds; the originals are kept)")
    settable = _settable(conflicts)
    if settable:
        text += f", then `{HINT2}` if {settable[1]} should hold another value than the one the replay leaves"
    return text


def next_hints(conflicts: list[dict[str, Any]]) -> list[Hint]:
    """The steps `next_steps(conflicts)` names, in its order."""
    settable = _settable(conflicts)
    if settable is None:
        return [SYNC_REPLAY]
    run, field = settable
    return [SYNC_REPLAY, Hint("set", {"run_id": run, "field": field, "value": Placeholder("VALUE"),
                                      "reason": Placeholder("R")})]


def unmerged(store: Store) -> list[dict[str, Any]]:
    """Each conflicted file: a store file merged again by the rules for its structured report
    (paths in the store's terms; a file outside the store by its repository path)."""
    out = git.run(store.worktree, "ls-files", "-u", "-z", "--full-name", ":/").stdout.decode("utf-8", "surrogateescape")
    stages: dict[str, dict[int, str]] = {}
    for entry in filter(None, out.split("\0")):
        meta, path = entry.split("\t", 1)
        _, oid, stage = meta.split()
        stages.setdefault(path, {})[int(stage)] = oid
    prefix = "" if store.prefix == "." else store.prefix + "/"
    reports: list[dict[str, Any]] = []
    for path, oids in sorted(stages.items()):
        if not path.startswith(prefix):  # the user's own files: git's line merge conflicted
            reports.append({"run": None, "file": path, "reason": "outside the store: git's own merge of your "
                            "files conflicts; merge by hand with git", "fields": []})
            continue
        rel = path[len(prefix):]
        base, ours, theirs = (git.run(store.worktree, "cat-file", "blob", oids[n]).stdout if n in oids else None
                              for n in (1, 2, 3))
        outcome = driver.merge_file(rel, base, ours, theirs, root=store.root)
        if outcome.clean:
            outcome.note = "changed on one side and deleted on the other"
        reports.append(driver.describe(rel, outcome))
    return reports
