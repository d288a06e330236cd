"""Files a caller names: a file of the repository is hashed by its repository path; one outside it
is refused, and so is a link in the repository to a file outside it (a hostile commit can plant
one): what would be read is the file outside, which no other clone holds."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from tests.support.runs import at_re_review
from tests.support.util import cli_json, snapshot


@pytest.fixture
def outside_link(repo: Path, tmp_path: Path) -> str:
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "s3cret"}\n')
    (repo / "report.json").symlink_to(secret)
    return "report.json"


def test_a_link_to_a_file_outside_is_refused_by_every_command_that_hashes_a_file(
        repo: Path, sd: api.StateDir, outside_link: str) -> None:
    at_re_review(sd, "r")
    before = snapshot(repo)
    for args in (["material", "r", "re_review_report", "--file", outside_link],
                 ["contract", "r", "3p", "manifest", "--file", outside_link]):
        code, out = cli_json(*args, cwd=repo)
        error = out["error"]  # type: ignore[index]
        assert (code, error["code"]) == (2, "INVALID_VALUE"), (args, out)
        assert "a link to" in error["message"] and "outside the repository" in error["message"], error
        assert "s3cret" not in str(out)
        assert snapshot(repo) == before


def test_a_link_to_a_file_inside_the_repository_is_hashed_by_the_links_path(repo: Path, sd: api.StateDir) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "plan.md").write_text("the plan\n")
    (repo / "plan.md").symlink_to(Path("docs") / "plan.md")
    sd.new("r", template="linear")
    label = sd.material("r", ["plan"], files=["plan.md"])["version_label"]
    [recorded] = sd.get("r", f"passports.{label}.files")
    assert recorded["path"] == "plan.md"


def test_a_contract_file_over_the_size_limit_is_refused_as_an_advisorys_is(repo: Path, sd: api.StateDir) -> None:
    at_re_review(sd, "r")
    (repo / "big.md").write_bytes(b"x" * ((1 << 20) + 1))
    (repo / "small.md").write_bytes(b"x" * (1 << 20))
    before = snapshot(repo)
    code, out = cli_json("contract", "r", "3p", "manifest", "--file", "big.md", cwd=repo)
    assert (code, out["error"]["code"]) == (2, "INVALID_VALUE"), out  # type: ignore[index]
    assert "over the size limit (1048576 bytes)" in out["error"]["message"]  # type: ignore[index]
    assert snapshot(repo) == before
    assert cli_json("contract", "r", "3p", "manifest", "--file", "small.md", cwd=repo)[0] == 0


def test_a_compliance_report_is_named_as_the_caller_gave_it(repo: Path, sd: api.StateDir, tmp_path: Path) -> None:
    sd.new("r", topic="t")
    outside = tmp_path / "report.json"
    outside.write_text("{}\n")
    code, out = cli_json("compliance", "r", "1", "--report", str(outside), "--actor", "compliance_agent", cwd=repo)
    assert code == 2 and out["error"]["message"].startswith(f"--report {outside} is outside"), out  # type: ignore[index]
