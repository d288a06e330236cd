"""The bus's reach outside the store: the opt-in cleanup of a scratch folder on `init
--clean DIR`, and the evidence check of `append --check-path`. Both stay inside the repository."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from statedir.bus.session import EvidenceMissing
from statedir.errors import InvalidValue
from statedir.gitops import git
from statedir.store.disk import Store

KEEP = ".gitkeep"  # the seed's tracked placeholder that keeps the ignored folder in git


def check_scratch(store: Store, directory: Path) -> Path:
    """The real path of a folder `init --clean` may empty: inside the repository, not its top,
    not git's own folder, neither holding nor inside the store, holding no file git tracks
    but `.gitkeep`. Anything else is INVALID_VALUE, before anything is touched."""
    shown = str(directory)
    if directory.is_symlink():
        raise InvalidValue(f"--clean {shown} is a symlink; name the folder itself", path=shown)
    real = Path(os.path.realpath(directory))
    top = store.worktree.resolve()
    if real == top or top not in real.parents:
        raise InvalidValue(f"--clean {shown} is not a folder inside the repository {top}", path=shown)
    if real.exists() and not real.is_dir():
        raise InvalidValue(f"--clean {shown} is not a folder", path=shown)
    inside = real.relative_to(top)
    if inside.parts[0] == ".git":
        raise InvalidValue(f"--clean {shown} is inside git's own folder", path=shown)
    if real == store.root or store.root in real.parents or real in store.root.parents:
        raise InvalidValue(f"--clean {shown} holds or is inside the statedir store", path=shown)
    if real.is_dir():
        tracked = git.run(top, "ls-files", "-z", "--", inside.as_posix()).stdout.decode(errors="replace")
        kept = [p for p in tracked.split("\0") if p and p.rsplit("/", 1)[-1] != KEEP]
        if kept:
            raise InvalidValue(f"--clean {shown} holds files git tracks ({kept[0]}, ...); it must be a "
                               "git-ignored scratch folder", path=shown, tracked=kept[:10])
    return real


def clean(folder: Path) -> list[str]:
    """Empty a folder `check_scratch` accepted (making it where missing), keeping `.gitkeep`;
    links are removed, never followed. Returns the names removed."""
    folder.mkdir(parents=True, exist_ok=True)
    removed = []
    for entry in sorted(folder.iterdir()):
        if entry.name == KEEP:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
        removed.append(entry.name)
    return removed


def check_evidence(store: Store, value: str) -> str:
    """An evidence path that exists inside the repository (relative paths are taken from the
    repository's top, as the seed's `.ai_log/...` paths are); EVIDENCE_MISSING otherwise."""
    top = store.worktree.resolve()
    target = Path(value) if os.path.isabs(value) else top / value
    real = Path(os.path.realpath(target))
    if real != top and top not in real.parents:
        raise EvidenceMissing(f"evidence path {value!r} is outside the repository {top}", path=value)
    if not real.exists():
        raise EvidenceMissing(f"evidence path {value!r} does not exist (looked for {target})", path=value)
    return value
