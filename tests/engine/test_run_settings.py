"""Run settings (issue 33, point 4): fixed at `new --setting KEY=VALUE`, the ARS_* variables read
only then, recorded in state.yaml, shown by `status` and the ARS export, never changed."""
from __future__ import annotations

from pathlib import Path

from statedir import api
from tests.support.util import cli, cli_json, snapshot

OFF = {"passport_reset": False, "claim_audit": False, "inquiry_ledger": False, "cross_model": False,
       "re_review_legacy": False}


def test_settings_are_recorded_at_new_and_shown(sd: api.StateDir, repo: Path) -> None:
    code, out = cli_json("new", "r1", "--topic", "t", "--setting", "claim_audit=true",
                         "--setting", "re_review_legacy=1", cwd=repo)
    assert code == 0, out
    assert sd.get("r1", "settings") == {**OFF, "claim_audit": True, "re_review_legacy": True}
    status = cli("status", "r1", cwd=repo).stdout
    assert "Settings: claim_audit, re_review_legacy" in status and "[LEGACY-NO-CONTRACT]" in status
    ars = sd.show("r1", format="ars")
    assert ars["settings"]["claim_audit"] is True and ars["marks"] == ["[LEGACY-NO-CONTRACT]"]
    sd.new("r2", topic="t")
    assert sd.get("r2", "settings") == OFF
    assert "Settings:" not in cli("status", "r2", cwd=repo).stdout
    assert sd.verify()["clean"]


def test_the_environment_is_read_at_new_only(sd: api.StateDir, repo: Path) -> None:
    env = {"ARS_PASSPORT_RESET": "1", "ARS_CLAIM_AUDIT": "1"}
    assert cli("new", "r1", "--topic", "t", "--setting", "claim_audit=false", cwd=repo, env=env).returncode == 0
    assert sd.get("r1", "settings") == {**OFF, "passport_reset": True}  # the flag given wins over its variable
    sd.new("r2", topic="t")
    for args in (["stage", "r2", "1", "in_progress"],
                 ["material", "r2", "rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"],
                 ["stage", "r2", "1", "completed"]):
        assert cli(*args, cwd=repo, env=env).returncode == 0
    assert sd.get("r2", "settings") == OFF  # made without it: a later variable changes nothing
    assert sd.show("r2")["history"].get("reset_boundary", []) == []
    assert sd.verify()["clean"]


def test_a_bad_variable_is_refused_naming_it(sd: api.StateDir, repo: Path) -> None:
    before = snapshot(repo)
    code, out = cli_json("new", "r1", "--topic", "t", cwd=repo, env={"ARS_CLAIM_AUDIT": "maybe"})
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE", out  # type: ignore[index]
    message = out["error"]["message"]  # type: ignore[index]
    assert "ARS_CLAIM_AUDIT='maybe'" in message and "run setting claim_audit" in message and "true or false" in message
    assert out["error"]["details"]["variable"] == "ARS_CLAIM_AUDIT"  # type: ignore[index]
    assert snapshot(repo) == before
    code, out = cli_json("new", "r1", "--topic", "t", "--setting", "claim_audit=true", cwd=repo,
                         env={"ARS_CLAIM_AUDIT": "maybe"})
    assert code == 0 and sd.get("r1", "settings")["claim_audit"] is True, out  # the flag wins: the variable unread


def test_settings_never_change(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="t", settings=["cross_model=true"])
    before = snapshot(repo)
    code, out = cli_json("set", "r1", "settings.cross_model", "false", "--reason", "x", cwd=repo)
    assert code == 1 and out["error"]["code"] == "IMMUTABLE_FIELD", out  # type: ignore[index]
    code, out = cli_json("set", "r1", "settings.reset_boundaries", "true", "--reason", "x", cwd=repo)
    assert code == 1 and out["error"]["code"] == "IMMUTABLE_FIELD", out  # type: ignore[index]
    assert "--setting passport_reset=VALUE" in out["error"]["message"], out  # the setting it is, by its name
    code, out = cli_json("set", "r1", "settings.bogus", "true", "--reason", "x", cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE", out  # type: ignore[index]
    assert "passport_reset, claim_audit, inquiry_ledger, cross_model, re_review_legacy" in out["error"]["message"]
    code, out = cli_json("set", "r1", "bogus", "true", "--reason", "x", cwd=repo)
    assert code == 2 and "settings.reset_boundaries" not in out["error"]["message"], out  # 3.21 runs' only
    assert snapshot(repo) == before
    moves = sd.next("r1")["moves"]
    assert not [m for m in moves if m["command"] == "set" and any(str(a).startswith("settings") for a in m["args"])]


def test_bad_settings_are_refused_with_the_list(sd: api.StateDir, repo: Path) -> None:
    before = snapshot(repo)
    for setting, word in (("bogus=true", "passport_reset, claim_audit, inquiry_ledger, cross_model, re_review_legacy"),
                          ("claim_audit=maybe", "true or false"), ("claim_audit", "KEY=VALUE"),
                          ("=1", "KEY=VALUE"), ("claim_audit=", "needs a value: true or false"),
                          ("cross_model=maybe", "yes or no, on or off")):
        code, out = cli_json("new", "r1", "--topic", "t", "--setting", setting, cwd=repo)
        assert code == 2 and out["error"]["code"] == "INVALID_VALUE", out  # type: ignore[index]
        assert word in out["error"]["message"], out  # type: ignore[index]
    code, out = cli_json("new", "r1", "--topic", "t", "--template", "linear", "--setting", "claim_audit=1", cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE", out  # type: ignore[index]
    assert snapshot(repo) == before


def test_a_forged_setting_does_not_verify(sd: api.StateDir, repo: Path) -> None:
    """The settings a run records are the ones its `new` request named: replay decides them again."""
    import subprocess

    sd.new("r1", topic="t", settings=["claim_audit=true"])
    state = repo / "state" / "runs" / "r1" / "state.yaml"
    state.write_text(state.read_text().replace("claim_audit: true", "claim_audit: false"))
    subprocess.run(["git", "commit", "-qam", "amend", "--amend", "--no-verify"], cwd=repo, check=True)
    assert not sd.verify()["clean"]
