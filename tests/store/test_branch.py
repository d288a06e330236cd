"""`statedir init --branch NAME`: the store's commits on a branch of their own, checked out in a
linked work tree the user's ignores; the user's branch, index and work tree never touched. Real
repositories, the real CLI as a subprocess."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import statedir
from tests.support.branch import B, git, user_repo, with_remote
from tests.support.docs_text import readme_example
from tests.support.util import ROOT, cli, cli_json, shim, snapshot

SESSION = "2026-06-30-shared"


def users_view(repo: Path) -> dict[str, str]:
    """What the user sees of their own work: branch, HEAD, index, status, commit count."""
    return {"branch": git(repo, "symbolic-ref", "HEAD"), "head": git(repo, "rev-parse", "HEAD"),
            "index": git(repo, "ls-files", "--stage"), "status": git(repo, "status", "--porcelain"),
            "commits": git(repo, "rev-list", "--count", "main")}


def test_init_puts_the_store_on_an_orphan_branch_and_leaves_the_users_alone(repo: Path) -> None:
    user_repo(repo)
    before = users_view(repo)
    code, made = cli_json("init", "--branch", B, cwd=repo)
    assert code == 0, made
    assert made["created"] is True and made["attached"] is False and made["branch"] == B  # type: ignore[index]
    assert made["store"] == str(repo / "state")  # type: ignore[index]
    assert users_view(repo) == before
    # the branch holds the store alone, from a root of its own: no file of the user's, no shared history
    assert "notes.md" not in git(repo, "ls-tree", "-r", "--name-only", B).splitlines()
    assert "statedir.yaml" in git(repo, "ls-tree", "--name-only", B).splitlines()
    assert git(repo, "rev-list", "--count", B) == "1"
    assert git(repo, "merge-base", "main", B, check=False) == ""
    assert git(repo / "state", "symbolic-ref", "--short", "HEAD") == B
    assert "/state/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert git(repo, "config", "statedir.branch") == B and git(repo, "config", "statedir.store") == "state"
    assert not (repo / ".gitignore").read_text().count("state")  # nothing committed or written for it
    # again: nothing changes, exit 0
    files = snapshot(repo)
    code, again = cli_json("init", "--branch", B, cwd=repo)
    assert code == 0 and again["created"] is False, again  # type: ignore[index]
    assert snapshot(repo) == files


@pytest.mark.slow  # every command through the CLI on a store branch
def test_every_command_in_the_users_work_tree_commits_to_the_store_branch(repo: Path) -> None:
    user_repo(repo)
    git(repo, "add", "notes.md")
    git(repo, "commit", "-q", "-m", "clean start")
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    before = users_view(repo)
    store_head = git(repo, "rev-parse", B)
    # the README's bus example, verbatim, at the repository's top
    (repo / ".ai_log").mkdir()
    proc = subprocess.run(["bash", "-c", "set -euo pipefail\n" + readme_example()], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, "PATH": f"{shim(repo)}:{os.environ['PATH']}",
                                          "USER_REQUEST": "Gate the member blog."}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "state" / "bus" / "2026-06-30-member-blog-gating.yaml").is_file()  # where editors open it
    # a run's transitions, from deep in the user's work tree
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    (repo / "draft.md").write_text("a draft\n")
    steps = [("new", "r1", "--topic", "AI and QA"), ("stage", "r1", "1", "in_progress"),
             ("material", "r1", "rq_brief", "--file", "../../draft.md")]
    for step in steps:
        code, out = cli_json(*step, cwd=deep)
        assert code == 0, (step, out)
        assert git(repo, "rev-parse", B) == out["commit"]  # type: ignore[index]
    passport = repo / "state" / "runs" / "r1" / "materials" / f"{out['version_label']}.yaml"  # type: ignore[index]
    assert "  - path: draft.md\n" in passport.read_text()  # named as in the user's work tree
    after = users_view(repo)
    assert after["head"] == before["head"] and after["commits"] == before["commits"]  # 0 new commits on main
    assert after["branch"] == before["branch"] and after["index"] == before["index"]
    assert set(after["status"].splitlines()) - set(before["status"].splitlines()) <= {"?? draft.md", "?? src/"}
    made = git(repo, "log", "--format=%(trailers:key=Statedir-Action,valueonly)", f"{store_head}..{B}")
    actions = [a for a in made.splitlines() if a]
    assert actions[:3] == ["material", "stage", "new"] and actions[-1] == "bus-init"
    example = readme_example()
    writes = sum(example.count(f"statedir bus {verb}") for verb in ("init", "set", "append"))
    assert len(actions) == 3 + writes  # one commit each, all on the store's branch


@pytest.mark.slow  # every command through the CLI on a store branch
def test_history_commands_work_on_the_store_branch(repo: Path) -> None:
    user_repo(repo)
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    main_head = git(repo, "rev-parse", "HEAD")
    first = cli_json("new", "r1", "--topic", "x", cwd=repo)[1]
    cli_json("stage", "r1", "1", "in_progress", cwd=repo)
    code, log = cli_json("log", "r1", cwd=repo)
    assert code == 0 and [e["action"] for e in log] == ["stage", "new"], log  # type: ignore[index,union-attr]
    code, verified = cli_json("verify", cwd=repo)
    assert code == 0 and verified["clean"] is True and verified["checked"] == 3, verified  # type: ignore[index]
    code, diff = cli_json("diff", "r1", first["commit"], cwd=repo)  # type: ignore[index]
    assert code == 0 and any(c["path"] == "stages.1.status" and c["to"] == "in_progress"
                             for c in diff["changes"]), diff  # type: ignore[index]
    code, back = cli_json("rollback", "r1", "--to", first["commit"], "--reason", "undo", cwd=repo)  # type: ignore[index]
    assert code == 0 and git(repo, "rev-parse", B) == back["commit"], back  # type: ignore[index]
    assert cli_json("get", "r1", "stages.1.status", cwd=repo)[1] == "pending"
    code, doctor = cli_json("doctor", cwd=repo)
    assert code == 0, doctor
    assert git(repo, "rev-parse", "HEAD") == main_head


def test_bad_names_and_occupied_places_are_refused_with_nothing_changed(repo: Path) -> None:
    user_repo(repo)
    git(repo, "branch", "feature")
    files = snapshot(repo)
    for args, words in [(("--branch", "bad..name"), "not a valid branch name"),
                        (("--branch", "-x"), "not a valid branch name"),
                        (("--branch", "main"), "the branch you work on"),
                        (("--branch", "feature"), "holds no statedir store"),
                        (("notes.md", "--branch", B), "neither empty nor a statedir store")]:
        code, out = cli_json("init", *args, cwd=repo)
        assert code == 2 and out["error"]["code"] == "INVALID_VALUE", (args, out)  # type: ignore[index]
        assert words in out["error"]["message"], (args, out)  # type: ignore[index]
        assert snapshot(repo) == files, args
    assert cli("init", cwd=repo).returncode == 0  # a store on the user's branch cannot become one of its own
    files = snapshot(repo)
    code, out = cli_json("init", "--branch", B, cwd=repo)
    assert code == 2 and "whose commits go on branch main" in out["error"]["message"], out  # type: ignore[index]
    assert snapshot(repo) == files


def test_a_deleted_work_tree_is_named_and_made_again(repo: Path) -> None:
    user_repo(repo)
    made = statedir.init(repo / "state", branch=B)
    assert made["created"] and made["branch"] == B
    statedir.open(repo / "state").new("r1", topic="x")
    shutil.rmtree(repo / "state")
    proc = cli("runs", cwd=repo)
    assert proc.returncode == 3 and f"statedir init {repo / 'state'} --branch {B}" in proc.stderr, proc.stderr
    again = statedir.init(repo / "state", branch=B)
    assert again["attached"] and not again["created"]
    assert cli_json("runs", cwd=repo)[1][0]["run_id"] == "r1"  # type: ignore[index]


@pytest.mark.slow  # two clones and five syncs through the real CLI
def test_two_machines_share_the_store_branch_through_a_remote(repo: Path, tmp_path: Path) -> None:
    remote = with_remote(repo, tmp_path / "remote.git")
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    cli_json("new", "a1", "--topic", "from A", cwd=repo)
    code, pushed = cli_json("sync", cwd=repo)
    assert code == 0 and pushed["status"] == "pushed", pushed  # type: ignore[index]
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    assert cli("runs", cwd=other).returncode == 3  # a clone has no work tree of the store yet
    code, attached = cli_json("init", "--branch", B, cwd=other)
    assert code == 0 and attached["attached"] is True and attached["created"] is False, attached  # type: ignore[index]
    assert git(other, "status", "--porcelain") == ""
    assert git(other, "config", "merge.statedir.driver")  # registered: git copies no config
    assert [r["run_id"] for r in cli_json("runs", cwd=other)[1]] == ["a1"]  # type: ignore[index]
    # both machines write, different runs: sync merges them through the driver, on the store's branch
    cli_json("new", "b1", "--topic", "from B", cwd=other)
    cli_json("stage", "a1", "1", "in_progress", cwd=repo)
    # one list grown on both machines: git's line merge would conflict, statedir's driver takes both
    assert cli("bus", "init", SESSION, cwd=repo).returncode == 0
    assert cli_json("sync", cwd=repo)[0] == 0 and cli_json("sync", cwd=other)[0] == 0
    for machine, value in ((repo, "A again"), (other, "B again")):
        assert cli("bus", "append", SESSION, "notes", value, cwd=machine).returncode == 0
    assert cli_json("sync", cwd=other)[0] == 0
    code, merged = cli_json("sync", cwd=repo)
    assert code == 0 and merged["status"] == "merged", merged  # type: ignore[index]
    assert cli_json("sync", cwd=other)[0] == 0
    for machine in (repo, other):
        assert sorted(r["run_id"] for r in cli_json("runs", cwd=machine)[1]) == ["a1", "b1"]  # type: ignore[index]
        assert cli_json("verify", cwd=machine)[1]["clean"] is True  # type: ignore[index]
        assert sorted(json.loads(cli("bus", "get", SESSION, "notes", cwd=machine).stdout)) == ["A again", "B again"]
    assert git(repo, "rev-parse", "main") == git(remote, "rev-parse", "main")  # the user's branch: as pushed
    assert git(repo, "rev-list", "--count", "main") == "1"


def test_the_pre_push_example_checks_the_store_branch_only(repo: Path, tmp_path: Path) -> None:
    remote = with_remote(repo, tmp_path / "remote.git", push=False)
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    shutil.copy(ROOT / "examples" / "pre-push", hook)
    statedir.init(repo / "state", branch=B)  # in this process: what is tested is the hook
    statedir.open(repo / "state").new("r1", topic="x")
    state = repo / "state" / "runs" / "r1" / "state.yaml"
    state.write_text(state.read_text().replace("topic: x", "topic: by hand"))
    git(repo / "state", "commit", "-q", "-am", "a hand edit")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def push(cwd: Path, ref: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "push", "-q", "origin", ref], cwd=cwd, capture_output=True, text=True, env=env)

    assert push(repo, "main").returncode == 0  # the user's branch holds no store commit: not verified
    refused = push(repo / "state", B)
    assert refused.returncode != 0 and "hand_edit" in refused.stdout + refused.stderr
    assert git(remote, "branch", "--list", B) == ""


def doc_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", (ROOT / "docs" / "branch.md").read_text(), re.S)


def run_block(block: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)


def test_the_docs_first_example_runs_verbatim(repo: Path) -> None:
    user_repo(repo)
    git(repo, "add", "notes.md")
    git(repo, "commit", "-q", "-m", "clean start")
    proc = run_block(doc_blocks()[0], repo)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.splitlines()[-1]  # git log's line; git status prints nothing after it
    assert re.match(r"[0-9a-f]{7,} new run paper-1 ", last), proc.stdout
    assert git(repo, "rev-list", "--count", "main") == "2"


@pytest.mark.slow  # runs a docs page's commands as written, each a CLI process
def test_the_docs_recipe_moves_a_store_with_its_history(repo: Path) -> None:
    """docs/branch.md's "Moving a store" block, verbatim, on a store with transitions on main."""
    user_repo(repo)
    assert cli("init", cwd=repo).returncode == 0
    cli_json("new", "r1", "--topic", "x", cwd=repo)
    cli_json("stage", "r1", "1", "in_progress", cwd=repo)
    recipe = next(b for b in doc_blocks() if "subtree split" in b)
    proc = run_block(recipe, repo)
    assert proc.returncode == 0, proc.stderr
    assert "verified 3 commit(s): clean" in proc.stdout
    assert not git(repo, "ls-tree", "-r", "--name-only", "HEAD", "--", "state")  # gone from the user's branch
    code, moved = cli_json("stage", "r1", "1", "completed", cwd=repo)
    assert code == 0 and git(repo, "rev-parse", "statedir-state") == moved["commit"], moved  # type: ignore[index]


@pytest.mark.slow  # two clones, two syncs
def test_stores_made_apart_are_refused_by_sync_and_the_docs_recipe_takes_one(repo: Path, tmp_path: Path) -> None:
    remote = with_remote(repo, tmp_path / "remote.git")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    for machine in (repo, other):  # each makes a store before either pushed
        assert cli("init", "--branch", B, cwd=machine).returncode == 0
    cli_json("new", "a1", "--topic", "from A", cwd=repo)
    assert cli_json("sync", cwd=repo)[0] == 0
    head = git(other, "rev-parse", B)
    code, refused = cli_json("sync", cwd=other)
    assert code == 3 and "shares no history" in refused["error"]["message"], refused  # type: ignore[index]
    assert git(other, "rev-parse", B) == head and git(other / "state", "status", "--porcelain") == ""
    recipe = next(b for b in doc_blocks() if "worktree remove --force" in b)
    proc = run_block(recipe, other)
    assert proc.returncode == 0, proc.stderr
    assert [r["run_id"] for r in cli_json("runs", cwd=other)[1]] == ["a1"]  # type: ignore[index]


def test_the_users_other_work_trees_find_the_store_too(repo: Path, tmp_path: Path) -> None:
    user_repo(repo)
    statedir.init(repo / ".statedir/store", branch=B)  # not ./state: found by binding
    feature = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", str(feature), "-b", "feature")
    for cwd in (repo, repo / ".statedir", feature):
        code, made = cli_json("new", f"r-{cwd.name}", "--topic", "x", cwd=cwd)
        assert code == 0 and git(repo, "rev-parse", B) == made["commit"], (cwd, made)  # type: ignore[index]
    assert git(repo, "rev-list", "--count", "main") == git(repo, "rev-list", "--count", "feature") == "1"
    assert git(feature, "status", "--porcelain") == ""
    git(repo, "clean", "-fdxq")  # git's cleanup passes over the store's work tree (a repository of its own)
    assert cli("runs", cwd=feature).returncode == 0


@pytest.mark.slow  # crash tests: a killed CLI per fault point, then its recovery
@pytest.mark.parametrize("fault", ["between_files", "during_commit", "after_commit", "during_commit:git"])
def test_a_transition_killed_in_the_stores_work_tree_is_recovered_there(repo: Path, fault: str) -> None:
    """Killed (or failing) part way: the next command finishes or undoes it in the store's work
    tree; the user's branch, index and files are as they were throughout."""
    user_repo(repo)
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    cli_json("new", "r1", "--topic", "x", cwd=repo)
    before = users_view(repo)
    store_head = git(repo, "rev-parse", B)
    dead = cli("stage", "r1", "1", "in_progress", cwd=repo, env={"STATEDIR_FAULT": fault})
    assert dead.returncode != 0
    assert users_view(repo) == before
    code, status = cli_json("get", "r1", "stages.1.status", cwd=repo)
    assert code == 0, status
    landed = git(repo, "rev-parse", B) != store_head
    assert status == ("in_progress" if landed else "pending")
    assert git(repo / "state", "status", "--porcelain") == ""  # the store's work tree agrees with its branch
    assert cli_json("verify", cwd=repo)[1]["clean"] is True  # type: ignore[index]
    assert users_view(repo) == before


@pytest.mark.parametrize("name", ["", " ", "a b", "-b", "--orphan", "@{-1}", "@", "HEAD", "x.lock", "a..b", "a/",
                                  "/a", "a\x00b", "a\nb", "a\x7f", "r~1", "a^", "a:b", "a?", "a*", "a[", "a\\b",
                                  ".hidden", "a//b", "x" * 300, "ünï\udcff"])
def test_a_name_git_refuses_as_a_branch_changes_nothing(repo: Path, name: str) -> None:
    from statedir.errors import InvalidValue

    user_repo(repo)
    files = snapshot(repo)
    with pytest.raises(InvalidValue):
        statedir.init(repo / "state", branch=name)
    assert snapshot(repo) == files


def test_doctor_restores_the_binding_and_the_exclusion(repo: Path) -> None:
    user_repo(repo)
    statedir.init(repo / "state", branch=B)  # in this process: what is tested is doctor
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("".join(line for line in exclude.read_text().splitlines(True) if line != "/state/\n"))
    git(repo, "config", "--remove-section", "statedir")
    assert "?? state/" in git(repo, "status", "--porcelain")  # git add -A would take it now
    code, report = cli_json("doctor", cwd=repo)
    assert code == 1 and {f["kind"] for f in report["findings"]} == {"branch_binding", "branch_exclude"}, report  # type: ignore[index]
    code, fixed = cli_json("doctor", "--fix", cwd=repo)
    assert code == 0 and fixed["findings"] == [], fixed  # type: ignore[index]
    assert "?? state/" not in git(repo, "status", "--porcelain")
    assert git(repo, "config", "statedir.branch") == B and git(repo, "config", "statedir.store") == "state"


def test_a_second_binding_is_refused_naming_the_first(repo: Path) -> None:
    user_repo(repo)
    statedir.init(repo / "state", branch=B)  # in this process: what is tested is the second one
    config = (repo / ".git" / "config").read_bytes()
    files = snapshot(repo)
    for args in (("--branch", "other-state"), ("elsewhere", "--branch", "other-state")):
        code, out = cli_json("init", *args, cwd=repo)
        error = out["error"]  # type: ignore[index]
        assert (code, error["code"]) == (2, "INVALID_VALUE"), out
        assert f"already on branch {B}" in error["message"] and f"statedir init --branch {B}" in error["message"]
        assert snapshot(repo) == files and (repo / ".git" / "config").read_bytes() == config
    assert not (repo / "elsewhere").exists() and git(repo, "branch", "--list", "other-state") == ""
    proc = cli("init", "--branch", B, cwd=repo)
    assert proc.returncode == 0 and "nothing changed" in proc.stdout, proc.stdout
    assert (repo / ".git" / "config").read_bytes() == config


def test_init_again_says_what_it_repaired_instead_of_nothing_changed(repo: Path) -> None:
    user_repo(repo)
    statedir.init(repo / "state", branch=B)  # in this process: what is tested is init again
    git(repo, "config", "--remove-section", "statedir")
    proc = cli("init", "--branch", B, cwd=repo)
    assert proc.returncode == 0 and "nothing changed" not in proc.stdout, proc.stdout
    assert "recorded the store in the repository's config" in proc.stdout
    assert git(repo, "config", "statedir.branch") == B


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_fresh_clone_is_pointed_at_the_pushed_store_branch_not_at_a_second_store(repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    user_repo(repo)
    git(repo, "remote", "add", "origin", str(remote))
    statedir.init(repo / "state", branch=B)
    statedir.open(repo / "state").new("r1", topic="x")
    git(repo, "push", "-q", "origin", "main", B)
    clone, insisting = tmp_path / "clone", tmp_path / "insisting"
    for where in (clone, insisting):
        git(tmp_path, "clone", "-q", str(remote), str(where))
    files = snapshot(clone)
    proc = cli("runs", cwd=clone)
    assert proc.returncode == 3 and f"run `statedir init --branch {B}`" in proc.stderr, proc.stderr
    code, out = cli_json("init", cwd=clone)
    error = out["error"]  # type: ignore[index]
    assert (code, error["code"]) == (2, "INVALID_VALUE") and f"`statedir init --branch {B}`" in error["message"]
    assert "--new-store" in error["message"] and snapshot(clone) == files
    assert "--new-store" in cli("init", "--help").stdout
    assert cli("init", "--branch", B, cwd=clone).returncode == 0
    assert [r["run_id"] for r in cli_json("runs", cwd=clone)[1]] == ["r1"]  # type: ignore[index]
    assert git(clone, "rev-list", "--count", "main") == "1"  # nothing committed to the user's branch
    made = cli_json("init", "--new-store", cwd=insisting)[1]  # they asked for a second store: they get one
    assert made["created"] is True and git(insisting, "rev-list", "--count", "main") == "2"  # type: ignore[index]
