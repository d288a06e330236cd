"""The cross_model run setting: observer reports carry one score set per model; a dimension whose
scores differ by more than 2 is flagged with every model's score, never averaged."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from statedir.store import run_logs
from tests.support.util import cli_json, snapshot, stage_one_done

RUN = "run-x"
OBSERVER = "collaboration_depth_agent"


def at_full(sd: api.StateDir, *settings: str) -> None:
    stage_one_done(sd, RUN, settings=list(settings))


def observe(repo: Path, text: str) -> tuple[int, dict]:
    (repo / "obs.yaml").write_text(text)
    return cli_json("observe", RUN, "--stage", "1", "--checkpoint", "FULL", "--report", "obs.yaml",
                    "--actor", OBSERVER, cwd=repo)  # type: ignore[return-value]


def test_a_divergent_dimension_is_flagged_with_every_models_score(sd: api.StateDir, repo: Path) -> None:
    at_full(sd, "cross_model=true")
    code, out = observe(repo, "advisory_only: true\nzone: productive\nmodel_scores:\n"
                              "  model-a: {depth: 7, rigor: 5}\n  model-b: {depth: 4, rigor: 6}\n")
    assert code == 0, out
    assert out["flagged"] == ["depth"] and "diverge on depth" in out["summary"]
    (entry,) = run_logs.read(sd.store, sd.store.run_dir(RUN), "collaboration_depth")
    assert entry["model_scores"] == {"model-a": {"depth": 7, "rigor": 5}, "model-b": {"depth": 4, "rigor": 6}}
    assert entry["scores"] == {}  # never averaged into one set
    assert entry["cross_model_divergence"] == {"threshold": 2, "flagged": [
        {"dimension": "depth", "scores": {"model-a": 7, "model-b": 4}, "spread": 3}]}
    assert sd.get(RUN, "checkpoint")["stage"] == "1"  # advisory: nothing else changed


def test_a_spread_of_exactly_2_is_not_flagged(sd: api.StateDir, repo: Path) -> None:
    at_full(sd, "cross_model=true")
    code, out = observe(repo, "advisory_only: true\nmodel_scores:\n  a: {depth: 6}\n  b: {depth: 4}\n")
    assert code == 0 and out["flagged"] == []


@pytest.mark.parametrize(("settings", "text", "says"), [
    (("cross_model=true",), "advisory_only: true\nscores: {depth: 5}\n", "one score set per model"),
    (("cross_model=true",), "advisory_only: true\nmodel_scores: {a: {depth: 5}}\n", "two models or more"),
    (("cross_model=true",), "advisory_only: true\nmodel_scores: {a: {depth: x}, b: {depth: 1}}\n", "a number"),
    (("cross_model=true",), "advisory_only: true\ncross_model_divergence: {}\nmodel_scores: {a: {d: 1}, b: {d: 1}}\n",
     "flags the divergent dimensions itself"),
    ((), "advisory_only: true\nmodel_scores: {a: {d: 1}, b: {d: 5}}\n", "cross_model=true"),
])
def test_a_report_that_does_not_fit_the_setting_is_refused(sd: api.StateDir, repo: Path, settings: tuple[str, ...],
                                                           text: str, says: str) -> None:
    at_full(sd, *settings)
    (repo / "obs.yaml").write_text(text)
    before = snapshot(repo)
    code, out = observe(repo, text)
    assert code != 0 and out["error"]["code"] == "INVALID_VALUE" and says in out["error"]["message"], out
    assert snapshot(repo) == before
