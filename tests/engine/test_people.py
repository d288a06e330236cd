"""The store's people (statedir.yaml `people:`, `statedir people add|remove|list`): a listed person
acts with --actor NAME [--role ROLE] in one of their roles, recorded as Statedir-Actor and
Statedir-Person; a role not theirs is refused naming theirs; each change to the map is one commit by
the user, replayed by verify, and a map changed by hand or a commit naming a person who does not
hold its role is illegal. Without people, --actor names a role as it always did."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.errors import InvalidValue, PermissionDenied
from tests.support.util import at_mandatory_2_5, cli, cli_json, copy_of, snapshot, trailers

ORCH, INTEGRITY, USER = "pipeline_orchestrator", "integrity_verification", "user"


def _listed(sd: api.StateDir) -> None:
    """alice acts as the user or the orchestrator, bob as the integrity agent, carol as the user."""
    sd.add_person("alice", [USER, ORCH])
    sd.add_person("bob", [INTEGRITY], actor="alice", role=USER)
    sd.add_person("carol", [USER], actor="alice", role=USER)
    sd.new("r", topic="T")


@pytest.fixture
def listed(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    return copy_of("people-listed", _listed, repo, tmp_path_factory)[0]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def test_people_add_list_remove_through_the_cli(sd: api.StateDir) -> None:
    repo = sd.store.root.parent
    assert cli_json("people", "list", cwd=repo) == (0, [])
    assert "lists no people" in cli("people", "list", cwd=repo).stdout
    code, out = cli_json("people", "add", "alice", USER, ORCH, cwd=repo)
    assert code == 0 and out["roles"] == [USER, ORCH], out  # type: ignore[index]
    head = trailers(repo)
    assert head["Statedir-Action"] == "people" and head["Statedir-Actor"] == USER and "Statedir-Person" not in head
    assert cli_json("people", "add", "bob", INTEGRITY, "--actor", "alice", "--role", USER, cwd=repo)[0] == 0
    assert trailers(repo)["Statedir-Person"] == "alice"
    code, rows = cli_json("people", "list", cwd=repo)
    assert rows == [{"name": "alice", "roles": [USER, ORCH]}, {"name": "bob", "roles": [INTEGRITY]}]
    config = (sd.store.root / "statedir.yaml").read_text()
    assert "people:\n  alice:\n    - user\n    - pipeline_orchestrator\n" in config
    assert cli_json("people", "remove", "alice", ORCH, "--actor", "alice", "--role", USER, cwd=repo)[0] == 0
    assert cli_json("people", "remove", "bob", "--actor", "alice", cwd=repo)[0] == 0  # alice holds one role now
    assert cli_json("people", "list", cwd=repo)[1] == [{"name": "alice", "roles": [USER]}]
    assert "alice  user" in cli("people", "list", cwd=repo).stdout
    assert sd.verify() == {"clean": True, "checked": 5, "findings": []}


@pytest.mark.parametrize("args, code, error, said", [
    (["add", "bob", INTEGRITY], 1, "PERMISSION_DENIED", "act as alice or carol"),  # people listed: one of them
    (["add", "bob", INTEGRITY, "--actor", "bob"], 1, "PERMISSION_DENIED", "may not change the store's people"),
    (["add", "dave", INTEGRITY, "--actor", ORCH], 1, "PERMISSION_DENIED", "may not change the store's people"),
    (["add", "dave", "no_such_role", "--actor", "carol"], 2, "INVALID_VALUE", "no template of the store declares"),
    (["add", ORCH, USER, "--actor", "carol"], 2, "INVALID_VALUE", "is a role's name"),
    (["add", "bad\nname", USER, "--actor", "carol"], 2, "INVALID_ID", "invalid person"),
    (["add", "dave", "--actor", "carol"], 2, "Missing argument", "ROLE..."),  # no role named
    (["remove", "dave", "--actor", "carol"], 2, "INVALID_VALUE", "not one of the store's people"),
    (["remove", "bob", ORCH, "--actor", "carol"], 2, "INVALID_VALUE", "holds no role pipeline_orchestrator"),
    (["remove", "carol", "--actor", "alice", "--role", ORCH], 1, "PERMISSION_DENIED", "may not change"),
])
def test_a_refused_change_to_the_people_changes_nothing(listed: api.StateDir, args: list[str], code: int,
                                                         error: str, said: str) -> None:
    repo = listed.store.root.parent
    before = snapshot(repo)
    proc = cli("people", *args, "--json", cwd=repo)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert error in proc.stdout and said in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr
    assert snapshot(repo) == before


def test_nobody_holding_user_would_lock_the_map_so_it_is_refused(listed: api.StateDir) -> None:
    listed.remove_person("carol", actor="alice", role=USER)
    with pytest.raises(InvalidValue, match="nobody listed holds user"):
        listed.remove_person("alice", [USER], actor="alice", role=USER)
    listed.remove_person("bob", actor="alice", role=USER)
    listed.remove_person("alice", actor="alice", role=USER)  # nobody listed at all: --actor names roles again
    assert listed.people() == []
    assert listed.stage("r", "1", "in_progress", actor=ORCH)["commit"]


def test_the_first_person_with_a_role_no_template_declares_is_told_so(sd: api.StateDir) -> None:
    """On an empty map an unknown role is the reason named, not the missing user it leaves (that
    read as though the role were fine); nothing is written."""
    before = snapshot(sd.store.root.parent)
    with pytest.raises(InvalidValue, match="no template of the store declares the role no_such_role"):
        sd.add_person("alice", [ORCH, "no_such_role"], actor=USER)
    assert snapshot(sd.store.root.parent) == before


def test_a_person_acts_in_their_one_role_or_the_one_they_name(listed: api.StateDir) -> None:
    repo = listed.store.root.parent
    assert cli_json("stage", "r", "1", "in_progress", "--actor", "alice", "--role", ORCH, cwd=repo)[0] == 0
    head = trailers(repo)
    assert (head["Statedir-Actor"], head["Statedir-Person"]) == (ORCH, "alice")
    entry = listed.show("r")["history"]["transitions"][-1]
    assert (entry["actor"], entry["person"]) == (ORCH, "alice")
    assert listed.show("r", format="ars")["transition_history"][-1]["person"] == "alice"
    assert "alice as pipeline_orchestrator" in cli("log", "r", cwd=repo).stdout
    assert cli_json("log", "r", cwd=repo)[1][0]["by"] == "alice as pipeline_orchestrator"  # type: ignore[index]
    listed.material("r", ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"])
    listed.stage("r", "1", "completed")
    listed.confirm("r", response="continue", actor="carol")  # carol's one role: user
    head = trailers(repo)
    assert (head["Statedir-Actor"], head["Statedir-Person"], head["Statedir-Answered-By"]) == (USER, "carol", USER)
    assert listed.verify()["clean"], listed.verify()


def test_statedir_confirm_with_a_persons_name_works(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The issue's own words: `statedir confirm paper-1 --actor NAME`, NAME a person whose role may confirm."""
    def build(sd: api.StateDir) -> None:
        at_mandatory_2_5(sd)
        sd.add_person("dana", [USER])
    sd = copy_of("people-mandatory", build, repo, tmp_path_factory)[0]
    code, out = cli_json("confirm", "p", "--response", "continue", "--actor", "dana", cwd=repo)
    assert code == 0, out
    head = trailers(repo)
    assert (head["Statedir-Actor"], head["Statedir-Person"], head["Statedir-Channel"]) == (USER, "dana", "cli")
    assert "dana as user" in cli("log", "p", "--limit", "1", cwd=repo).stdout
    assert sd.verify()["clean"]


@pytest.mark.parametrize("args, code, error, said", [
    (["--actor", "alice"], 2, "INVALID_VALUE", "alice acts as user or pipeline_orchestrator: say which with --role"),
    (["--actor", "alice", "--role", INTEGRITY], 1, "PERMISSION_DENIED",
     "alice may act as user or pipeline_orchestrator only, not as integrity_verification"),
    (["--actor", "bob"], 1, "PERMISSION_DENIED", "integrity_verification may not update stages"),
    (["--actor", "zed", "--role", ORCH], 1, "PERMISSION_DENIED", "zed is not one of the store's people"),
    (["--actor", "alice", "--role", "bad\nrole"], 2, "INVALID_ID", "invalid role"),
])
def test_a_person_in_a_role_not_theirs_is_refused_naming_theirs(listed: api.StateDir, args: list[str], code: int,
                                                                 error: str, said: str) -> None:
    repo = listed.store.root.parent
    before = snapshot(repo)
    proc = cli("stage", "r", "1", "in_progress", *args, "--json", cwd=repo)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert error in proc.stdout and said in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr and snapshot(repo) == before


def test_the_api_words_its_refusals_with_its_arguments(listed: api.StateDir) -> None:
    with pytest.raises(InvalidValue, match="say which with role="):
        listed.stage("r", "1", "in_progress", actor="alice")
    with pytest.raises(PermissionDenied) as refused:
        listed.integrity("r", "2.5", "PASS", refs_total=1, refs_verified=1, actor="alice", role=INTEGRITY)
    assert refused.value.details["roles"] == [USER, ORCH]
    made = listed.stage("r", "1", "in_progress", actor="alice", role=ORCH)
    assert trailers(listed.store.root.parent, made["commit"])["Statedir-Person"] == "alice"


def test_without_people_actor_names_a_role_as_before(sd: api.StateDir) -> None:
    repo = sd.store.root.parent
    sd.new("r", topic="T")
    assert cli_json("stage", "r", "1", "in_progress", "--actor", ORCH, cwd=repo)[0] == 0
    assert "Statedir-Person" not in trailers(repo)
    before = snapshot(repo)
    proc = cli("stage", "r", "1", "completed", "--actor", "alice", "--role", ORCH, "--json", cwd=repo)
    assert proc.returncode == 2 and "lists no people" in proc.stdout, proc.stdout
    assert snapshot(repo) == before
    proc = cli("stage", "r", "1", "completed", "--actor", "alice", "--json", cwd=repo)
    assert proc.returncode == 1 and "alice is no role of template academic-pipeline nor a person the store lists; " \
        "pipeline_orchestrator may update stages" in proc.stdout, proc.stdout


def test_a_role_is_still_a_role_beside_people(listed: api.StateDir) -> None:
    """An agent is no person: with people listed, --actor ROLE still acts in the role (no person recorded)."""
    repo = listed.store.root.parent
    assert cli_json("stage", "r", "1", "in_progress", "--actor", ORCH, cwd=repo)[0] == 0
    assert "Statedir-Person" not in trailers(repo)


def test_a_hand_edit_giving_oneself_a_role_is_illegal(listed: api.StateDir) -> None:
    repo = listed.store.root.parent
    config = listed.store.root / "statedir.yaml"
    config.write_text(config.read_text().replace("  bob:\n    - integrity_verification\n",
                                                 "  bob:\n    - integrity_verification\n    - user\n"))
    git(repo, "commit", "-qam", "bob may answer too", "--no-verify")
    found = listed.verify()["findings"]
    assert [(f["kind"], f["file"]) for f in found] == [("illegal", "statedir.yaml")], found
    assert "changed by hand" in found[0]["message"]


def test_a_people_change_riding_in_another_transition_is_illegal(listed: api.StateDir) -> None:
    repo = listed.store.root.parent
    listed.stage("r", "1", "in_progress")
    config = listed.store.root / "statedir.yaml"
    config.write_text(config.read_text().replace("  bob:\n    - integrity_verification\n", ""))
    git(repo, "commit", "-q", "--amend", "--no-edit", "--no-verify", "-a")
    found = listed.verify()["findings"]
    assert any(f["kind"] == "illegal" and f["file"] == "statedir.yaml" and "stage transition" in f["message"]
               for f in found), found


def test_a_forged_person_is_illegal(listed: api.StateDir) -> None:
    """A transition's commit rewritten to name a person who does not hold its role (or is not listed)."""
    repo = listed.store.root.parent
    for forged, why in (("bob", "bob acts as integrity_verification"), ("zed", "does not list")):
        git(repo, "reset", "-q", "--hard", "HEAD")
        listed.stage("r", "1", "in_progress", actor="alice", role=ORCH)
        message = git(repo, "log", "-1", "--format=%B").replace("Statedir-Person: alice", f"Statedir-Person: {forged}")
        git(repo, "commit", "-q", "--amend", "--no-verify", "-m", message)
        found = [f for f in listed.verify()["findings"] if f["kind"] == "illegal"]
        assert any(why in f["message"] for f in found), found
        git(repo, "reset", "-q", "--hard", "HEAD~1")


def test_a_forged_people_commit_is_illegal(listed: api.StateDir) -> None:
    """A people commit whose author is not the user, or whose file is not its recorded change."""
    repo = listed.store.root.parent
    listed.add_person("erin", [ORCH], actor="carol")
    message = git(repo, "log", "-1", "--format=%B").replace("Statedir-Actor: user", f"Statedir-Actor: {ORCH}")
    message = message.replace("Statedir-Person: carol", "Statedir-Person: alice")
    git(repo, "commit", "-q", "--amend", "--no-verify", "-m", message)
    found = listed.verify()["findings"]
    assert any(f["kind"] == "illegal" and "may not change the store's people" in f["message"] for f in found), found


def test_people_is_no_mcp_tool_and_role_no_tool_argument() -> None:
    from statedir.cli.registry import command_table
    from statedir.mcp.tools import tools

    served = tools(command_table())
    assert not any(name.startswith("people") for name in served)
    assert all("as_role" not in tool.input_schema["properties"] for tool in served.values())
    assert "role" in served["bind"].input_schema["properties"]  # bind's own --role (an artifact's) stays


def test_every_people_command_has_help_and_is_documented(isolated: Path) -> None:
    """Read from processes of their own: in-process help takes the console an earlier test left."""
    from tests.support.docs_text import documentation, page

    docs, identity = documentation(), page("identity")
    for command in ("add", "remove", "list"):
        proc = cli("people", command, "--help", cwd=isolated)
        assert proc.returncode == 0 and "Usage:" in proc.stdout, command
        assert f"statedir people {command}" in docs and f"statedir people {command}" in identity, command
    out = cli("stage", "--help", cwd=isolated).stdout
    assert "--role" in out and "statedir people" in " ".join(out.split())
    assert "..." not in cli("people", "--help", cwd=isolated).stdout.partition("\n")[2]



@pytest.mark.parametrize("action", ["new", "stage", "output", "pipeline", "set", "material", "integrity", "revision",
                                    "loop", "observe", "confirm", "redo", "resume", "resolve", "rollback"])
def test_every_write_access_refusal_names_the_action_in_words(action: str) -> None:
    from statedir.engine.template import load
    from statedir.engine.transition_data import require_permission
    from statedir.engine.wording import DOING

    with pytest.raises(PermissionDenied) as refused:
        require_permission(load("academic-pipeline"), "nobody", action)
    message = refused.value.message  # a name that is no role, then the roles that may, in words
    assert message.startswith("nobody is no role of template academic-pipeline nor a person the store lists; "), message
    assert message.endswith(f" may {DOING[action]}"), message
    assert " " in DOING[action] and DOING[action] != action  # words, never the action's bare name
