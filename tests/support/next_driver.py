"""A driver that knows nothing but what `next` lists: which listed move it takes and with which
values. Shared by the run driven through the API (test_next_moves) and through MCP (test_resources)."""
from __future__ import annotations

from typing import Any

# The driver's taste, deterministic: the command it prefers (status for `stage`), and values it
# prefers where a move allows several; otherwise the first allowed value.
PREFERRED = [("confirm", None), ("stage", "completed"), ("checklist", None), ("integrity", None), ("revision", None),
             ("stage", "in_progress")]
FREE = {"refs_total": 10, "refs_verified": 10, "items_total": 3, "reason": "the user's decision",
        "item": [f"{mode}=CLEAR" for mode in range(1, 8)]}


def pick(moves: list[dict[str, Any]], taste: dict[str, list[str]]) -> dict[str, Any] | None:
    """The first preferred command listed; among its moves, one that leads somewhere, then the
    one allowing most of the values the driver likes."""
    for command, status in PREFERRED:
        options = [m for m in moves if m["command"] == command
                   and (status is None or m["allowed"].get("status") == [status])]
        if options:
            def score(move: dict[str, Any]) -> tuple[bool, int]:
                liked = sum(any(v in move["allowed"].get(name, []) for v in values) for name, values in taste.items())
                return "leads_to" not in move, -liked
            return sorted(options, key=score)[0]
    return None


def choose(move: dict[str, Any], taste: dict[str, list[str]]) -> dict[str, Any]:
    """A value for each required argument (liked, else the first allowed) and for an optional
    one the driver likes."""
    chosen = {}
    for name in [*move["args"], *(n for n in move["allowed"] if n not in move["args"])]:
        options = move["allowed"].get(name)
        if options is None:
            chosen[name] = FREE[name]
            continue
        liked = [v for v in taste.get(name, []) if v in options]
        if liked or name in move["args"]:
            chosen[name] = liked[0] if liked else options[0]
    return chosen


def command_line(run_id: str, move: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """The CLI's words for a listed move taken with `values`: positional arguments in the command
    line's order, the rest as options (a list repeated), the move's actor last."""
    from statedir.views.moves_text import POSITIONAL

    command = move["command"]
    words = [CLI_NAMES.get(command, command), run_id]
    positional = POSITIONAL.get(command, ())
    for name in positional:
        if name in values:
            words += [str(v) for v in values[name]] if isinstance(values[name], list) else [str(values[name])]
    for name, value in values.items():
        if name not in positional and value is not None:
            for one in value if isinstance(value, list) else [value]:
                words += [f"--{name.replace('_', '-')}", str(one)]
    return [*words, "--actor", move["actor"]]


CLI_NAMES = {"acknowledge_mode": "acknowledge"}  # a move's command, where the CLI names it otherwise


def fill_in(out: dict[str, Any]) -> list[dict[str, Any]]:
    """What a driver takes where nothing it prefers is listed: the re-review contract's next part
    (its check passing where a passing exit code is allowed), else each material a blocked move
    needs. Each step: its command, actor and values; none where neither is there."""
    contract = next((m for m in out["moves"] if m["command"] == "contract"), None)
    if contract is not None:
        codes = contract["allowed"].get("exit_code") or [None]
        return [{"command": "contract", "actor": contract["actor"], "stage": contract["allowed"]["stage"][0],
                 "part": contract["allowed"]["part"][0], "exit_code": 0 if 0 in codes else codes[0]}]
    wanted = [e for e in out["blocked"] if e.get("materials")]
    material = next((m for m in out["moves"] if m["command"] == "material"), None)
    if not wanted or material is None:
        return []
    return [{"command": "material", "actor": material["actor"], "names": names[0]} for names in wanted[0]["materials"]
            if names[0] in material["allowed"]["names"]]
