"""What a whole-store `validate` found valid, remembered per run so the next one checks only the
runs that changed since (issue 37): a disposable file under `.git/statedir/`, rebuilt when absent.

A run is remembered by a key over every entry of its folder (path, size, inode, and the change
time the kernel sets on any write, which no tool can set back), under a salt naming the rules at
hand (statedir's code, schemas and shipped templates: statedir.files.rules_identity) and the
store's own files that a run's checks read (statedir.yaml, signers.yaml, templates/). A run
whose key is remembered is valid as it was; anything else (a transition, a hand edit, a copied
or restored file, a new template, another statedir) is checked again. Only runs with no problem
at all are remembered. The YAML files stay the only truth: deleting the file loses nothing.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from statedir.files import rules_identity
from statedir.files.parse_cache import digest
from statedir.store.store import Store

FORMAT = "validated-runs 1"  # raise it whenever what a run's checks read changes
_STORE_FILES = ("statedir.yaml", "signers.yaml")


def _stat(path: str) -> str:
    try:
        info = os.lstat(path)
    except OSError:
        return "missing"
    return f"{info.st_mode:o}:{info.st_size}:{info.st_ino}:{info.st_ctime_ns}:{info.st_mtime_ns}"


class Remembered:
    """The runs of one store a whole-store validate may pass over, and what it found now."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.path = store.cache_dir / "validated-runs.json"
        self.keys: dict[str, str] = {}  # run -> its folder's key now
        self.salt = self._salt()
        self.known = self._load()

    def _salt(self) -> str:
        root = self.store.root
        parts = [rules_identity.key(FORMAT), *(f"{rel}={_stat(str(root / rel))}" for rel in _STORE_FILES)]
        templates = root / "templates"
        if templates.is_dir() and not templates.is_symlink():
            parts += sorted(f"{entry.name}={_stat(entry.path)}" for entry in os.scandir(templates))
        else:
            parts.append(f"templates={_stat(str(templates))}")
        return digest("\n".join(parts).encode())

    def _load(self) -> dict[str, str]:
        try:
            saved = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(saved, dict) or saved.get("salt") != self.salt or not isinstance(saved.get("runs"), dict):
            return {}
        return {k: v for k, v in saved["runs"].items() if isinstance(k, str) and isinstance(v, str)}

    def add(self, run_id: str, entries: list[str]) -> None:
        """Run `run_id`'s folder as found: `entries` its paths (folders too), store-relative."""
        root = str(self.store.root)
        self.keys[run_id] = digest("\n".join(f"{rel}={_stat(os.path.join(root, rel))}"
                                             for rel in sorted(entries)).encode())

    def unchanged(self, run_id: str) -> bool:
        """Whether the run is as a validate found it valid."""
        key = self.keys.get(run_id)
        return key is not None and self.known.get(run_id) == key

    def keep(self, valid: set[str]) -> None:
        """Remember the runs now valid (a failed write is a cache not kept)."""
        runs = {run_id: self.keys[run_id] for run_id in sorted(valid) if run_id in self.keys}
        if runs == self.known:
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"salt": self.salt, "runs": runs}, separators=(",", ":")))
            os.replace(tmp, self.path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)


def run_of(rel: str) -> str | None:
    """The run a store-relative path belongs to (`runs/<id>/...`), else None."""
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "runs" else None


def problem_runs(files: list[str]) -> set[str]:
    """The runs problems' files (store-relative) name, a run's own folder included."""
    return {parts[1] for parts in (file.split("/") for file in files) if len(parts) > 1 and parts[0] == "runs"}
