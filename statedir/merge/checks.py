"""doctor's checks for many machines: the merge driver's registration (missing in a fresh
clone, stale after its interpreter went away), a store `.gitattributes` from before the
driver, files left with conflict markers, and runs a hand-resolved conflict left inconsistent."""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from statedir.engine import validate
from statedir.gitops import commit_message, merge_driver_config
from statedir.hints import Hint, said
from statedir.store import layout
from statedir.store.layout import JOURNAL
from statedir.store.store import Store
from statedir.store.write import persist

Finding = dict[str, Any]


def _finding(kind: str, file: str | None, message: str, fix: str, repair: Callable[[], None] | None) -> Finding:
    return {"kind": kind, "file": file, "message": message, "fix": fix, "_repair": repair}


def findings(store: Store, actor: str, timeout: float | None) -> list[Finding]:
    return registration(store, actor, timeout) + unresolved(store) + inconsistent(store)


def registration(store: Store, actor: str, timeout: float | None) -> list[Finding]:
    out = []
    if not merge_driver_config.names_driver(store.root):
        def rewrite() -> None:
            with store.locked(timeout):
                message = commit_message.message("doctor: .gitattributes names the statedir merge driver", "-",
                                                 actor, "doctor")
                persist(store, writes={".gitattributes": layout.GITATTRIBUTES.encode()}, message=message,
                        author=actor)
        out.append(_finding("merge_attributes", ".gitattributes", "the store's .gitattributes does not name the "
                            "statedir merge driver (logs would merge line by line: duplicated or broken entries)",
                            "write statedir's .gitattributes (one commit)", rewrite))
    value = merge_driver_config.configured(store.worktree)
    if value is None or merge_driver_config.stale(value) or merge_driver_config.unsafe(value):
        what = "does not register the statedir merge driver (a fresh clone?)" if value is None else \
            f"registers the merge driver as {value!r}, which would import a `statedir/` package from the " \
            "work tree (no -I)" if merge_driver_config.unsafe(value) else \
            f"registers the merge driver as {value!r}, whose program is gone"
        out.append(_finding("merge_driver", None, f"this repository's git config {what}",
                            f"register it: git config merge.statedir.driver {merge_driver_config.command()!r}",
                            lambda: merge_driver_config.register(store.worktree)))
    return out


def unresolved(store: Store) -> list[Finding]:
    """Store files that still hold git's conflict markers."""
    out = []
    for directory, _, names in os.walk(store.root):
        if "/.git" in directory or directory.endswith("/.schemas"):
            continue
        for name in names:
            if not name.endswith(".yaml"):
                continue
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                text = f.read()
            if b"\n<<<<<<< " in text or text.startswith(b"<<<<<<< "):
                rel = os.path.relpath(path, store.root).replace(os.sep, "/")
                out.append(_finding("unresolved_merge", rel, f"{rel} holds git's conflict markers: a merge was "
                                    "never resolved", "none: keep the side you want, remove the markers, `git add` "
                                    "and commit (or `git merge --abort`)", None))
    return out


def inconsistent(store: Store) -> list[Finding]:
    """Runs whose files disagree (validate's cross-file checks), e.g. after a hand-resolved merge."""
    if (store.root / JOURNAL).exists():  # a dead writer's half transition: doctor reports that first
        return []
    problems = [p for p in validate.opened_store(store) if "<<<<<<<" not in p.message
                and "unresolved merge" not in p.message]
    return [_finding("invalid", p.file, f"{p.path}: {p.message}", _repair_by_hand(store, p.file), None)
            for p in problems]


def _repair_by_hand(store: Store, rel: str) -> str:
    if rel == "signers.yaml":  # every transition reads it, so none can repair it
        path = store.git_path(rel)
        return (f"none: every transition reads it; restore a good version, `git log -- {path}` then "
                f"`git checkout REV -- {path}`, and commit it signed by a key it trusts (`git commit -S`)")
    return said("none: `{hint}` lists it; repair it by a transition, a rollback, or by hand and commit",
                Hint("validate"))
