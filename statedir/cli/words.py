"""The command line's words for a refusal's next step (statedir.hints): `statedir doctor --fix`,
an option as its flag (`--file`). Set for the whole of a call (`statedir.cli.main`)."""
# Lazy imports: shlex, cli.registry, commands.table: imported by the command that uses them: `statedir COMMAND` loads
#   this module for any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

from statedir.hints import FLAG_OF_OPTION, Hint, Placeholder, Words

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any


def _parameters(command: str) -> dict[str, Any]:
    """The named command's parameters by name, from the command table (none if unknown)."""
    from statedir.cli import registry
    from statedir.commands import table

    words = command.split()
    registry.load(words[:1])
    if len(words) == 1 and words[0] in registry.COMMANDS:
        function = registry.COMMANDS[words[0]][0]
    else:
        function = registry.SUBCOMMANDS.get(words[0], {}).get(" ".join(words[1:]))
    return {p.name: p for p in table.parameters(function)} if function is not None else {}


def _by_flag(params: dict[str, Any], flag: str) -> Any:
    """The parameter whose flag is `flag` (the API's `role` is the command line's `--role`)."""
    return next((p for p in params.values() if flag in p.flags), None)


def _word(value: Any) -> str:
    """A value as a shell takes it: as it is where nothing in it needs quoting, in double quotes
    where only a single quote does (stage 3' reads "3'", not '3'"'"''), else shlex's quoting."""
    import shlex  # only where a refusal says a step: a command's start-up pays for nothing

    if isinstance(value, Placeholder):
        return str(value)
    text = str(value)
    quoted = shlex.quote(text)
    if quoted != text and "'" in text and shlex.quote(text.replace("'", "")) == text.replace("'", ""):
        return f'"{text}"'
    return quoted


class CliWords(Words):
    """`statedir COMMAND POSITIONALS --flag VALUE`: positionals in the command's order, then the
    options as the hint gives them (a switch alone, a list's values each after its flag)."""

    def hint(self, hint: Hint) -> str:
        params = _parameters(hint.command)
        positional: list[tuple[int, list[str]]] = []
        options: list[str] = []
        order = list(params)
        for name, value in hint.args.items():
            if value is None or value is False:
                continue
            values = [_word(v) for v in value] if isinstance(value, list | tuple) else [_word(value)]
            param = params.get(name) or _by_flag(params, "--" + name.replace("_", "-"))
            if param is not None and param.kind == "argument":
                positional.append((order.index(name), values))
                continue
            flag = param.flags[0] if param is not None and param.flags else "--" + name.replace("_", "-")
            options += [flag] if value is True else [w for v in values for w in (flag, v)]
        return " ".join(["statedir", hint.command, *(w for _, ws in sorted(positional) for w in ws), *options])

    def option(self, name: str) -> str:
        return "--" + FLAG_OF_OPTION.get(name, name).replace("_", "-")


CLI = CliWords()
