"""The options and variables every git statedir runs is given or kept from, and the operations in
progress it must not slip into: plain constants, importable without pathlib by the paths that read
the repository's files themselves (statedir.sync.unmoved) and re-exported by statedir.gitops.git."""
from __future__ import annotations

# State commits are ours alone: no user hooks, no signing prompts, no auto-gc or auto-maintenance
# (`git commit` would start `git maintenance run --auto`, a process per commit).
QUIET = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "gc.auto=0",
         "-c", "maintenance.auto=false", "-c", "core.quotepath=false")

# Variables that point git at another repository, work tree or index. statedir works on the
# repository that holds the store: every git it runs has them removed, and a write refuses to
# start while one points elsewhere (inside a git hook, say), rather than commit to one
# repository and write files in another.
REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR")

# Config that outranks the repository's file (statedir.gitops.config_file).
CONFIG_ENVIRONMENT = ("GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")

# Operations in progress that a commit of statedir's would slip into (and `--abort` discard).
IN_PROGRESS = (("MERGE_HEAD", "a merge"), ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert"),
               ("rebase-merge", "a rebase"), ("rebase-apply", "a rebase or `git am`"), ("BISECT_LOG", "a bisect"))
