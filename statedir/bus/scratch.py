"""The bus's reach outside the store: the opt-in cleanup of a scratch folder on `init
--clean DIR`, and the evidence check of `append --check-path`. Both stay inside the repository."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from statedir.bus.errors import EvidenceMissing
from statedir.errors import InvalidValue
from statedir.gitops import git
from statedir.hints import opt
from statedir.store.store import Store

KEEP = ".gitkeep"  # pipeline-state.sh's tracked placeholder that keeps the ignored folder in git


def check_scratch(store: Store, directory: Path) -> Path:
    """The real path of a folder `init --clean` may empty: inside the repository, not its top,
    not git's own folder, neither holding nor inside the store or another repository, holding
    nothing git tracks (but `.gitkeep`) nor untracked files git does not ignore. Anything else
    is INVALID_VALUE, before anything is touched."""
    shown = str(directory)
    if directory.is_symlink():
        raise InvalidValue(f"{opt('clean')} {shown} is a symlink; name the folder itself", path=shown)
    real = Path(os.path.realpath(directory))
    top = store.files_worktree.resolve()
    if real == top or top not in real.parents:
        raise InvalidValue(f"{opt('clean')} {shown} is not a folder inside the repository {top}", path=shown)
    if real.exists() and not real.is_dir():
        raise InvalidValue(f"{opt('clean')} {shown} is not a folder", path=shown)
    inside = real.relative_to(top)
    if inside.parts[0] == ".git":
        raise InvalidValue(f"{opt('clean')} {shown} is inside git's own folder", path=shown)
    if real == store.root or store.root in real.parents or real in store.root.parents:
        raise InvalidValue(f"{opt('clean')} {shown} holds or is inside the statedir store", path=shown)
    if real.is_dir():
        _check_contents(top, real, shown)
    return real


def _listed(top: Path, folder: Path, *options: str) -> list[str]:
    """Paths git lists under `folder` (relative to it; a whole folder as `name/`)."""
    inside = folder.relative_to(top).as_posix()
    out = git.run(top, "ls-files", "-z", *options, "--", f":(literal){inside}").stdout
    names = [n[len(inside) + 1:] for n in out.decode("utf-8", "surrogateescape").split("\0")
             if n.startswith(inside + "/")]
    if "" in names:  # the folder as a whole (--directory): each of its entries
        return sorted(e.name + ("/" if e.is_dir() and not e.is_symlink() else "") for e in folder.iterdir())
    return names


def _repository(top: Path, folder: Path) -> Path | None:
    """A git repository other than the work tree's own at or above `folder` (below `top`), or
    anywhere inside it (links not followed)."""
    for parent in [folder, *folder.parents]:
        if parent == top:
            break
        if (parent / ".git").exists() or (parent / ".git").is_symlink():
            return parent / ".git"
    for directory, subdirs, files in os.walk(folder):
        if ".git" in subdirs or ".git" in files:
            return Path(directory) / ".git"
    return None


def _check_contents(top: Path, folder: Path, shown: str) -> None:
    """Refuse a folder holding what statedir did not put there and git does not ignore: files
    git tracks (but `.gitkeep`), untracked files it does not ignore, a repository."""
    tracked = [p for p in _listed(top, folder) if p.rsplit("/", 1)[-1] != KEEP]
    if tracked:
        raise InvalidValue(f"{opt('clean')} {shown} holds files git tracks ({tracked[0]}, ...); it must be a "
                           "git-ignored scratch folder", path=shown, tracked=tracked[:10])
    repository = _repository(top, folder)
    if repository is not None:
        raise InvalidValue(f"{opt('clean')} {shown} holds or is inside a git repository ({repository}); statedir never "
                           "deletes one: move it out of the scratch folder", path=shown, repository=str(repository))
    unignored = _listed(top, folder, "--others", "--exclude-standard")
    unignored = [p for p in unignored if p != KEEP]
    if unignored:
        raise InvalidValue(f"{opt('clean')} {shown} holds files git does not ignore ({', '.join(unignored[:3])}"
                           f"{', ...' if len(unignored) > 3 else ''}); only git-ignored entries are removed: "
                           "commit or move them, or ignore them (hasbrains-agent-kit's .gitignore has `.ai_log/*`)",
                           path=shown, unignored=unignored[:10])


def clean(store: Store, folder: Path) -> list[str]:
    """Empty a folder `check_scratch` accepted (making it where missing) of the entries git
    ignores, keeping `.gitkeep`; its contents are checked again first (they may have changed
    since). Links are removed, never followed. Returns the paths removed, relative to it."""
    top = store.files_worktree.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    _check_contents(top, folder, str(folder))
    ignored = _listed(top, folder, "--others", "--ignored", "--exclude-standard", "--directory")
    removed = []
    for name in sorted(n.rstrip("/") for n in ignored if n.rstrip("/") != KEEP):
        entry = folder / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        elif entry.exists() or entry.is_symlink():
            entry.unlink()
        removed.append(name)
    return removed


def check_evidence(store: Store, value: str) -> str:
    """An evidence path that exists inside the repository (relative paths are taken from the
    repository's top, as pipeline-state.sh's `.ai_log/...` paths are); EVIDENCE_MISSING otherwise."""
    top = store.files_worktree.resolve()
    target = Path(value) if os.path.isabs(value) else top / value
    real = Path(os.path.realpath(target))
    if real != top and top not in real.parents:
        raise EvidenceMissing(f"evidence path {value!r} is outside the repository {top}", path=value)
    if not real.exists():
        raise EvidenceMissing(f"evidence path {value!r} does not exist (looked for {target})", path=value)
    return value
