"""The hooks of a store on a branch of its own: two fixed scripts statedir writes under the git
directory (`statedir/hooks/`, never a file of any branch), set as the hooks of the store's work tree
alone (`git config --worktree core.hooksPath`). A commit there checks the store files it changes
(`statedir validate`), a push verifies the store's commits it sends (`statedir verify`), and
nothing else runs: not a hook a branch names (a `.pre-commit-config.yaml` a remote changed), not
the user's own hooks, which stay the hooks of the user's work trees.
"""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from statedir.gitops import git

FOLDER = ("statedir", "hooks")  # under the repository's git directory (the common one)

_PREAMBLE = """\
#!/bin/sh
# statedir: the {name} hook of the store's work tree, written by statedir (init --branch, doctor --fix)
# and run there alone (git config --worktree core.hooksPath). It runs statedir's own check and nothing
# a branch, a remote or a hook manager's config names. Do not edit: statedir writes it again.
statedir() {{
    if [ -x {python} ]; then {python} -I -m statedir "$@"; else command statedir "$@"; fi
}}
"""

PRE_COMMIT = """\
# The store files this commit changes, checked against their schemas and templates.
files=$(git diff --cached --name-only --diff-filter=d -- '*.yaml')
[ -z "$files" ] && exit 0
IFS='
'
set -f
statedir validate --skip-outside-stores -- $files </dev/null
"""

# As examples/pre-push: only the store's branch, only what the remote lacks.
PRE_PUSH = """\
remote="$1"
zero=0000000000000000000000000000000000000000
status=0
store_branch=$(git config --get statedir.branch)
while read -r local_ref local_sha remote_ref remote_sha; do
    [ "$local_sha" = "$zero" ] && continue   # deleting a branch pushes no history
    if [ -n "$store_branch" ] && [ "$local_ref" != "refs/heads/$store_branch" ]; then
        continue   # another branch: none of the store's commits are on it
    fi
    if [ "$remote_sha" != "$zero" ] && git cat-file -e "$remote_sha^{commit}" 2>/dev/null; then
        base="$remote_sha"
    else   # a new branch: start where the remote's known branches meet it, if anywhere
        base=$(git for-each-ref --format='%(objectname)' "refs/remotes/$remote/" |
               while read -r tip; do git merge-base "$local_sha" "$tip" 2>/dev/null; done |
               xargs git rev-list --no-walk --date-order 2>/dev/null | head -n 1)
    fi
    if [ -n "$base" ]; then
        statedir verify --since "$base" </dev/null || status=1
    else
        statedir verify </dev/null || status=1
    fi
done
[ "$status" -eq 0 ] || echo "pre-push: statedir verify found the findings above; push refused" >&2
exit "$status"
"""


def scripts(python: str | None = None) -> dict[str, str]:
    """Each hook's name -> its text, naming `python` (this interpreter) by absolute path, and
    `statedir` on PATH where that one is gone."""
    python = python or shlex.quote(sys.executable)
    return {name: _PREAMBLE.format(name=name, python=python) + body
            for name, body in (("pre-commit", PRE_COMMIT), ("pre-push", PRE_PUSH))}


def directory(worktree: Path) -> Path:
    return git.common_dir(git.git_dir(worktree)).joinpath(*FOLDER)


def _ours(path: Path, name: str) -> bool:
    """Whether `path` holds statedir's script `name`, as some statedir wrote it (any interpreter
    still there: `python` and `python3` of one environment write the same hook)."""
    try:
        text = path.read_text()
    except OSError:
        return False
    marker = "    if [ -x "
    start = text.find(marker)
    python = text[start + len(marker):text.find(" ]", start)] if start >= 0 else ""
    try:
        program = shlex.split(python)
    except ValueError:
        return False
    return len(program) == 1 and os.access(program[0], os.X_OK) and os.access(path, os.X_OK) \
        and text == scripts(python)[name]


def write(worktree: Path) -> tuple[Path, bool]:
    """The hooks directory with statedir's scripts in it: (it, whether a script was written)."""
    folder = directory(worktree)
    changed = False
    for name, text in scripts().items():
        path = folder / name
        if _ours(path, name):
            continue
        folder.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{name}.{os.getpid()}.tmp")
        temporary.write_text(text)
        temporary.chmod(0o755)
        os.replace(temporary, path)
        changed = True
    return folder, changed


def installed(worktree: Path) -> bool:
    """Whether the store's work tree runs statedir's scripts, and no other hooks."""
    folder = directory(worktree)
    proc = git.run(worktree, "config", "--worktree", "--get", "core.hooksPath", check=False)  # outranks the rest
    return proc.stdout.decode().strip() == str(folder) and all(_ours(folder / name, name) for name in scripts())


def install(worktree: Path) -> bool:
    """Make statedir's scripts the hooks of the store's work tree `worktree` alone; whether
    anything changed."""
    folder, changed = write(worktree)
    enabled = git.run(worktree, "config", "--bool", "--get", "extensions.worktreeConfig", check=False)
    if enabled.stdout.decode().strip() != "true":  # per-work-tree config: git's own, since 2.20
        git.run(worktree, "config", "extensions.worktreeConfig", "true")
        changed = True
    current = git.run(worktree, "config", "--worktree", "--get", "core.hooksPath", check=False)
    if current.stdout.decode().strip() != str(folder):
        git.run(worktree, "config", "--worktree", "core.hooksPath", str(folder))
        changed = True
    return changed
