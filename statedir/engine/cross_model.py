"""The `cross_model` run setting's effect on observer reports: one score set per model
(`model_scores: {MODEL: {DIMENSION: SCORE}}`), and each dimension whose scores differ by more than
the setting's `threshold` flagged with every model's score, never averaged. statedir computes the
flags (`cross_model_divergence`); a report never supplies them. Pure; no model or dimension is
named here."""
from __future__ import annotations

from typing import Any

from statedir.engine import run_settings
from statedir.engine.template import Template
from statedir.errors import InvalidValue
from statedir.hints import HINT, Hint, Placeholder

EFFECT = "cross_model"
KEY = "model_scores"


def applies(t: Template, state: dict[str, Any]) -> dict[str, Any] | None:
    """The setting's declaration where the run was made with it on (None otherwise)."""
    name = run_settings.setting_for(t, EFFECT)
    return run_settings.declared(t)[name] if name and run_settings.on(t, state, name) else None


def entry_fields(t: Template, state: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """What the log entry carries of the models' scores: `model_scores` and the flags, on a
    cross-model run; INVALID_VALUE for a report that does not fit the run's setting."""
    spec = applies(t, state)
    given = report.get(KEY)
    if spec is None:
        if given is not None:
            name = run_settings.setting_for(t, EFFECT)
            raise InvalidValue(f"{KEY} is for runs made with the setting {name or EFFECT} on (`{HINT}`); give this "
                               "run's report one score set, `scores`",
                               hint=Hint("new", {"run_id": Placeholder("RUN"), "setting": f"{name or EFFECT}=true"}))
        return {}
    if report.get("cross_model_divergence") is not None:
        raise InvalidValue("on a cross-model run statedir flags the divergent dimensions itself: leave out "
                           "cross_model_divergence and give every model's scores in model_scores")
    if report.get("scores"):
        raise InvalidValue("a cross-model run's observer report carries one score set per model (model_scores: "
                           "{MODEL: {DIMENSION: SCORE}}), not one averaged set (scores)")
    models = _checked(given)
    threshold = float(spec.get("threshold", 2))
    dimensions = sorted({d for scores in models.values() for d in scores})
    flagged = []
    for dimension in dimensions:
        by_model = {m: s[dimension] for m, s in models.items() if s.get(dimension) is not None}
        if len(by_model) > 1 and max(by_model.values()) - min(by_model.values()) > threshold:
            flagged.append({"dimension": dimension, "scores": by_model,
                            "spread": max(by_model.values()) - min(by_model.values())})
    return {KEY: models, "cross_model_divergence": {"threshold": spec.get("threshold", 2), "flagged": flagged}}


def _checked(given: Any) -> dict[str, dict[str, Any]]:
    shape = f"{KEY}: {{MODEL: {{DIMENSION: SCORE}}}}, two models or more"
    if not isinstance(given, dict) or len(given) < 2:
        raise InvalidValue(f"a cross-model run's observer report needs {shape}", argument=KEY)
    for model, scores in given.items():
        if not isinstance(model, str) or not model.strip() or not isinstance(scores, dict) or not scores:
            raise InvalidValue(f"model {model!r}: {shape}; each model a mapping of dimension to score", argument=KEY)
        for dimension, score in scores.items():
            if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
                raise InvalidValue(f"model {model}, dimension {dimension}: a score is a number (or null), "
                                   f"not {score!r}", argument=KEY)
    return {str(m): {str(d): s for d, s in scores.items()} for m, scores in given.items()}
