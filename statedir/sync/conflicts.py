"""A merge sync refuses, as data and in words: each conflicted file merged again by the rules for
its structured report (`unmerged`), the refusal's headline, and what resolves it (`next_steps`)."""
from __future__ import annotations

from typing import Any

from statedir.gitops import git
from statedir.merge import driver
from statedir.store.store import Store


def headline(conflicts: list[dict[str, Any]]) -> str:
    first = conflicts[0]
    fields = ", ".join(f["field"] for f in first["fields"]) or first.get("reason") or "its content"
    where = f"run {first['run']}, {first['file']}" if first["run"] else first["file"]
    more = f" (and {len(conflicts) - 1} more file(s))" if len(conflicts) > 1 else ""
    return f"merge refused: {where}: {fields} changed on both sides{more}; nothing was changed. {next_steps(conflicts)}"


SETTABLE = ("topic", "language", "settings.reset_boundaries")


def next_steps(conflicts: list[dict[str, Any]]) -> str:
    """What resolves a refused merge: the replay, and `statedir set` for a run-level field."""
    text = ("Next: `statedir sync --replay` decides this machine's unpublished transitions again on top of the "
            "remote's state (the rules refuse what no longer holds; the originals are kept)")
    fields = [(c["run"], f["field"]) for c in conflicts if c["run"] and c["file"].endswith("/state.yaml")
              for f in c["fields"] if f["field"] in SETTABLE or f["field"].startswith("team.")]
    if fields:
        run, field = fields[0]
        text += (f", then `statedir set {run} {field} VALUE --reason R` if {field} should hold another value "
                 "than the one the replay leaves")
    return text


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
