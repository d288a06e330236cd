"""Run settings: the opt-in switches a template declares (`run_settings:`), fixed when a run is
created (`new --setting KEY=VALUE`, or the setting's environment variable, read only then),
recorded in `state.yaml` and never changed. Pure; no setting is named here: a setting's `effect`
(e.g. `reset_boundaries`) is what the engine asks for."""
from __future__ import annotations

from typing import Any

from statedir.engine.template import Template
from statedir.errors import ImmutableField, InvalidValue
from statedir.hints import HINT, Hint, Placeholder, opt

TRUE, FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off", "")
SPELLINGS = "true or false (also 1 or 0, yes or no, on or off)"


def declared(t: Template) -> dict[str, dict[str, Any]]:
    """The template's settings by name (empty: it declares none; its runs keep `reset_boundaries`)."""
    return dict(t.doc.get("run_settings") or {})


def from_environment(t: Template, environ: dict[str, str], given: Any = ()) -> dict[str, str]:
    """The values the declared settings' environment variables give (read at `new` only), for the
    settings not `given` (`--setting` wins over its variable); a value that is not a boolean is
    INVALID_VALUE naming the variable, its value and the spellings allowed."""
    out = {}
    for name, spec in declared(t).items():
        var = spec.get("env")
        if not var or var not in environ or name in given:
            continue
        value = environ[var]
        if value.strip().lower() not in TRUE + FALSE:
            raise InvalidValue(f"environment variable {var}={value!r} (the run setting {name}, read at `new`) "
                               f"takes {SPELLINGS}; set it to one of those, unset it, or give {opt('setting')} "
                               f"{name}=VALUE, which wins over it", variable=var, setting=name, value=value,
                               allowed=["true", "false"])
        out[name] = value
    return out


def parse_pairs(pairs: list[str]) -> dict[str, str]:
    """`KEY=VALUE` strings as given to `new --setting`, a key given once."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidValue(f"{opt('setting')} {pair!r} must look like KEY=VALUE", argument="setting", value=pair)
        if not value.strip():  # the environment's empty variable is off; a flag names its value
            raise InvalidValue(f"{opt('setting')} {key.strip()}= needs a value: {SPELLINGS}", argument="setting",
                               key=key.strip(), allowed=["true", "false"])
        if key.strip() in out:
            raise InvalidValue(f"{opt('setting')} {key.strip()} is given twice", argument="setting", key=key.strip())
        out[key.strip()] = value.strip()
    return out


def initial(t: Template, given: dict[str, Any] | None) -> dict[str, bool]:
    """The `settings` a new run records: every declared setting, off unless `given` turns it on;
    an unknown key or a value that is not a boolean is INVALID_VALUE naming what is allowed."""
    known = declared(t)
    given = dict(given or {})
    if not known:
        if given:
            raise InvalidValue(f"template {t.name} {t.doc.get('version')} declares no run settings "
                               f"(given: {', '.join(sorted(given))})", settings=sorted(given), allowed=[])
        return {"reset_boundaries": False}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise InvalidValue(f"unknown run setting {', '.join(unknown)}; template {t.name} knows "
                           f"{', '.join(known)}", settings=unknown, allowed=list(known))
    out = {name: bool(spec.get("default", False)) for name, spec in known.items()}
    for name, value in given.items():
        out[name] = _boolean(name, value)
    return out


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE or text in FALSE:
        return text in TRUE
    raise InvalidValue(f"run setting {name} takes {SPELLINGS}, not {value!r}", setting=name,
                       value=str(value), allowed=["true", "false"])


def on(t: Template, state: dict[str, Any], name: str) -> bool:
    """Whether the run's setting `name` is on (False where the template or run has none)."""
    return bool((state.get("settings") or {}).get(name)) and name in declared(t)


def effect_on(t: Template, state: dict[str, Any], effect: str, args: dict[str, Any] | None = None) -> bool:
    """Whether a setting with `effect` is on for the run: by its recorded settings where the template
    declares them; by the older `settings.<effect>` field or the request's flag where it does not."""
    settings = state.get("settings") or {}
    known = declared(t)
    if known:
        return any(settings.get(name) for name, spec in known.items() if spec.get("effect") == effect)
    return bool(settings.get(effect) or (args or {}).get(effect))


def setting_for(t: Template, effect: str) -> str | None:
    """The declared setting with `effect` (None: none)."""
    return next((name for name, spec in declared(t).items() if spec.get("effect") == effect), None)


def refuse_change(t: Template, field: str) -> None:
    """`set settings.*` on a run whose template declares its settings: fixed at creation. A key that
    is the older name of a setting's effect (`reset_boundaries`) names that setting; a key the
    template does not know is INVALID_VALUE with the list."""
    known = declared(t)
    if not known or not field.startswith("settings."):
        return
    key = field[len("settings."):]
    name = key if key in known else setting_for(t, key)
    if name is None:
        raise InvalidValue(f"{field}: template {t.name} knows no run setting {key!r}; its run settings "
                           f"({', '.join(known)}) are fixed when a run is created (`{HINT}`) and never change",
                           field=field, allowed=list(known), hint=Hint("new", {"setting": Placeholder("KEY=VALUE")}))
    raise ImmutableField(f"{field} is {'the' if name == key else 'the effect of the'} run setting {name}, fixed "
                         f"when the run was created (`{HINT}`); it never changes", field=field,
                         hint=Hint("new", {"setting": Placeholder(f"{name}=VALUE")}))


def shown(t: Template, state: dict[str, Any]) -> list[str]:
    """The settings that are on, for `status` (empty: none)."""
    return [name for name in declared(t) if (state.get("settings") or {}).get(name)]


def marks(t: Template, state: dict[str, Any]) -> list[str]:
    """The marks the run's settings put on its dashboard and ARS export (each setting's `mark`)."""
    return [str(spec["mark"]) for name, spec in declared(t).items()
            if spec.get("mark") and (state.get("settings") or {}).get(name)]
