"""The same document registered as a Source on two machines (issue 22, point 5): the merge
brings two Sources; `research --validate` names the later one, sync (or doctor --fix after a
plain git merge) records it as the earlier's alias, and verify holds the alias to the rules.
Real clones of one bare remote, the real CLI."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from statedir.gitops import commit_message
from statedir.research.aliases import duplicates
from tests.support.sync import clean, git, network, ok, store_files
from tests.support.util import cli


def _sources(clone: Path) -> dict[str, dict]:
    from statedir.files import yaml

    folder = clone / "state/research/sources"
    return {p.stem: yaml.to_plain(yaml.load(p.read_bytes(), p.name)) for p in sorted(folder.glob("*.yaml"))}


def _register(clone: Path, title: str, **flags: str) -> str:
    args = [f"--{k}={v}" for k, v in flags.items()]
    return ok(clone, "research", "--create-source", "--title", title, *args)["id"]


def _validate(clone: Path) -> dict:
    return json.loads(cli("research", "--validate", cwd=clone).stdout)


def test_duplicates_group_by_doi_or_normalized_url_and_keep_the_earliest() -> None:
    made = {
        "src_b": {"id": "src_b", "doi": "10.5/x", "url": None, "created_at": "2026-01-01T00:00:02Z"},
        "src_a": {"id": "src_a", "doi": None, "url": "https://Example.org/p/?utm_source=m",
                  "created_at": "2026-01-01T00:00:03Z"},
        "src_c": {"id": "src_c", "doi": "10.5/x", "url": "http://example.org/p", "created_at": "2026-01-01T00:00:01Z"},
        "src_d": {"id": "src_d", "doi": "10.5/other", "url": None, "created_at": "2026-01-01T00:00:00Z"},
        "src_e": {"id": "src_e", "doi": "10.5/x", "url": None, "created_at": "2026-01-01T00:00:00Z",
                  "alias_of": "src_c"},  # recorded already
    }
    def by_claim(ids: list[str]) -> str:  # where history cannot order them, arrival goes by created_at
        return min(ids, key=lambda sid: (made[sid]["created_at"], sid))

    assert [(d["id"], d["alias_of"]) for d in duplicates(made, by_claim)] == [("src_a", "src_c"), ("src_b", "src_c")]
    # which stays is `earliest`'s to say (history's order), never the group's own created_at
    assert [(d["id"], d["alias_of"]) for d in duplicates(made, min)] == [("src_b", "src_a"), ("src_c", "src_a")]


@pytest.mark.slow  # several clones and a remote, each step through the CLI
@pytest.mark.usefixtures("isolated")
def test_a_doi_registered_on_two_machines_is_one_source_and_an_alias_after_sync(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    first = _register(c["a"], "Paper", doi="10.5/same")
    second = _register(c["b"], "The paper", doi="10.5/same", url="https://example.org/paper")
    _register(c["b"], "Another", url="https://example.org/another")
    ok(c["a"], "sync")
    ok(c["b"], "sync")  # merges both Sources and records the later one as the earlier's alias
    ok(c["a"], "sync")
    assert store_files(c["a"]) == store_files(c["b"])
    sources = _sources(c["a"])
    earlier, later = first, second  # a's reached the remote first: every clone has it (in the same second too)
    assert sources[later]["alias_of"] == earlier and sources[earlier].get("alias_of") is None
    assert sum(1 for s in sources.values() if s.get("alias_of")) == 1
    message = git(c["b"], "log", "-1", "--format=%B", "--", "state/research/sources")
    assert "duplicate source(s) as aliases" in message and "Statedir-Action: research" in message
    for clone in c.values():
        assert _validate(clone) == {"violations": [], "clean": True}
        clean(clone)
    # registering it again on either machine answers the Source that stays
    assert ok(c["b"], "research", "--create-source", "--title", "Again", "--doi", "10.5/same")["commit"] is None


@pytest.mark.slow  # several clones and a remote, each step through the CLI
@pytest.mark.usefixtures("isolated")
def test_after_a_plain_git_merge_validate_names_the_duplicate_and_doctor_records_the_alias(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    first = _register(c["a"], "Paper", url="https://example.org/p?utm_source=feed")
    ok(c["a"], "sync")
    second = _register(c["b"], "Paper", url="http://EXAMPLE.org/p/")
    git(c["b"], "pull", "-q", "--no-rebase", "--no-edit")  # git's merge, with the driver: no statedir step
    found = _validate(c["b"])
    assert not found["clean"]
    # a's Source is the remote's, so every clone has it: b's own (registered later, or in the same
    # second with any id) is the duplicate, whatever the ids' order
    assert found["violations"] == [{"entity": "source", "id": second, "field": "url", "duplicate_of": first}]
    doctor = json.loads(cli("doctor", "--json", cwd=c["b"]).stdout)
    assert [f["kind"] for f in doctor["findings"]] == ["duplicate_source"]
    fixed = cli("doctor", "--fix", "--json", cwd=c["b"])
    assert fixed.returncode == 0, fixed.stdout
    assert _validate(c["b"])["clean"]
    clean(c["b"])
    ok(c["b"], "sync")
    ok(c["a"], "sync")
    clean(c["a"])


@pytest.mark.slow  # several clones and a remote, each step through the CLI
@pytest.mark.usefixtures("isolated")
def test_an_alias_the_rules_do_not_allow_is_illegal_to_verify(tmp_path: Path) -> None:
    """An alias to another document, or to a later Source, written by hand in a research commit."""
    c = network(tmp_path, ("a",))
    older = _register(c["a"], "One", doi="10.5/one")
    newer = _register(c["a"], "Two", doi="10.5/two")
    for source, target in ((newer, older), (older, newer)):
        path = c["a"] / f"state/research/sources/{source}.yaml"
        kept = path.read_text()
        path.write_text(kept.replace("created_at:", f"alias_of: {target}\ncreated_at:"))
        git(c["a"], "commit", "-qam", commit_message.message(f"research: alias {source}", "-", "user", "research"))
        found = json.loads(cli("verify", "--json", cwd=c["a"]).stdout)["findings"]
        assert [(f["kind"], f["file"]) for f in found] == [("illegal", f"research/sources/{source}.yaml")], found
        assert "alias_of names" in found[0]["message"]
        git(c["a"], "reset", "-q", "--hard", "HEAD~1")
        subprocess.run(["git", "status"], cwd=c["a"], capture_output=True, check=True)


def _branch_index_tree(clone: Path) -> dict[str, object]:
    """What a refused sync leaves as it found: the branch, the index, every work tree file."""
    from tests.support.util import snapshot

    return {"head": git(clone, "rev-parse", "HEAD"), "stage": git(clone, "ls-files", "--stage"),
            "files": {k: v for k, v in snapshot(clone, objects=False).items() if not k.startswith(".git/")}}


def _plant(clone: Path, victim: str, new_id: str, created_at: str, *, when: str | None = None) -> str:
    """A collaborator's hand-made research commit (plain git): a Source with the victim Source's
    DOI under an id of its own, claiming `created_at`; `when` forges the commit's dates too."""
    import os

    from statedir.research import records
    from statedir.research.kinds import KINDS

    folder = clone / "state/research/sources"
    record = records.parse((folder / f"{victim}.yaml").read_bytes(), f"{victim}.yaml")
    record.update(id=new_id, created_at=created_at, title="Collaborator's copy")
    (folder / f"{new_id}.yaml").write_bytes(records.encode(KINDS["source"], record, None))
    git(clone, "add", f"state/research/sources/{new_id}.yaml")
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
    subprocess.run(["git", "commit", "-q", "-F", "-"], cwd=clone, check=True, env={**os.environ, **dates},
                   input=commit_message.message(f"research: create source {new_id}", "-", "user", "research"),
                   text=True)
    return git(clone, "rev-parse", "HEAD")


@pytest.mark.slow  # two clones and a remote, each step through the CLI
@pytest.mark.usefixtures("isolated")
def test_a_planted_source_claiming_1999_neither_passes_sync_nor_takes_the_doi(tmp_path: Path) -> None:
    """The collaborator's copy of the victim's Source, dated 1999: in a commit of today it is refused
    (its created_at is not its commit's), branch, index and work tree as they were; in a commit
    dated 1999 too it passes, and the victim's Source, earlier by history, stays the Source."""
    c = network(tmp_path, ("a", "b"))
    real = _register(c["a"], "Paper", doi="10.5/victim")
    ok(c["a"], "sync")
    git(c["b"], "pull", "-q", "--no-rebase")
    planted = _plant(c["b"], real, "src_19990101_000000", "1999-01-01T00:00:00Z")
    git(c["b"], "push", "-q", "origin", "HEAD:main")
    before = _branch_index_tree(c["a"])
    refused = cli("sync", "--json", cwd=c["a"])
    assert refused.returncode == 1, refused.stdout
    error = json.loads(refused.stdout)["error"]
    assert [(f["commit"], f["file"]) for f in error["details"]["findings"]] == \
        [(planted, "research/sources/src_19990101_000000.yaml")], error
    assert "created_at 1999-01-01T00:00:00Z" in error["message"] and "its commit's" in error["message"]
    assert _branch_index_tree(c["a"]) == before
    git(c["b"], "reset", "-q", "--hard", "HEAD~1")  # again, its commit dated 1999 as well
    _plant(c["b"], real, "src_19990101_000000", "1999-01-01T00:00:00Z", when="1999-01-01T00:00:00Z")
    git(c["b"], "push", "-q", "-f", "origin", "HEAD:main")
    ok(c["a"], "sync")
    sources = _sources(c["a"])
    assert sources["src_19990101_000000"]["alias_of"] == real and sources[real].get("alias_of") is None
    again = ok(c["a"], "research", "--create-source", "--title", "Again", "--doi", "10.5/victim")
    assert (again["id"], again["commit"]) == (real, None)
    clean(c["a"])


@pytest.mark.slow  # two clones and a remote, each step through the CLI
@pytest.mark.usefixtures("isolated")
def test_a_source_forked_in_from_before_the_victims_cannot_make_the_victims_an_alias(tmp_path: Path) -> None:
    """The collaborator forks from before the victim registered, plants the DOI dated (commit and all)
    in 1999, merges the remote in and pushes: the victim's sync keeps its own, already shared,
    Source; with an alias of the victim's Source to the planted one pushed as well, sync refuses."""
    c = network(tmp_path, ("a", "b"))
    _register(c["a"], "Base", doi="10.5/base")  # the default project, on both sides of the fork
    ok(c["a"], "sync")
    git(c["b"], "pull", "-q", "--no-rebase")
    fork = git(c["b"], "rev-parse", "HEAD")
    real = _register(c["a"], "Paper", doi="10.5/victim")
    ok(c["a"], "sync")
    git(c["b"], "fetch", "-q")
    git(c["b"], "checkout", "-q", "-b", "old", fork)
    (c["b"] / "state/research/sources").mkdir(parents=True, exist_ok=True)
    git(c["b"], "checkout", "-q", "origin/main", "--", f"state/research/sources/{real}.yaml")
    git(c["b"], "rm", "-q", "--cached", f"state/research/sources/{real}.yaml")
    _plant(c["b"], real, "src_19990101_000000", "1999-01-01T00:00:00Z", when="1999-01-01T00:00:00Z")
    (c["b"] / f"state/research/sources/{real}.yaml").unlink()
    git(c["b"], "merge", "-q", "--no-edit", "origin/main")  # the remote's history, the planted branch first
    path = c["b"] / f"state/research/sources/{real}.yaml"  # and the victim's Source made an alias of the planted
    path.write_text(path.read_text().replace("created_at:", "alias_of: src_19990101_000000\ncreated_at:"))
    subprocess.run(["git", "commit", "-qaF", "-"], cwd=c["b"], check=True, text=True,
                   input=commit_message.message("research: alias", "-", "user", "research"))
    setter = git(c["b"], "rev-parse", "HEAD")
    git(c["b"], "push", "-q", "origin", "HEAD:main")
    before = _branch_index_tree(c["a"])
    refused = cli("sync", "--json", cwd=c["a"])
    assert refused.returncode == 1, refused.stdout
    error = json.loads(refused.stdout)["error"]
    assert [(f["commit"], f["file"]) for f in error["details"]["findings"]] == \
        [(setter, f"research/sources/{real}.yaml")], error
    assert "already shared" in error["message"]
    assert _branch_index_tree(c["a"]) == before
    git(c["b"], "reset", "-q", "--hard", "HEAD~1")  # the merge alone: the victim's sync orders the two itself
    git(c["b"], "push", "-q", "-f", "origin", "HEAD:main")
    ok(c["a"], "sync")
    sources = _sources(c["a"])
    assert sources["src_19990101_000000"]["alias_of"] == real and sources[real].get("alias_of") is None
    clean(c["a"])
