"""statedir uses its dependencies' public API only: no click (typer's vendored copy or its
own), no private module of typer. A new typer (0.28 vendored click; a later one may move or
rename it) then breaks nothing of ours but what its changelog announces."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "statedir"
# typer's public API as its documentation (typer.tiangolo.com) shows it: names of `typer` itself,
# `typer.core`'s TyperGroup and TyperCommand (the `cls=` of a command or group) and
# `typer.main.get_command` (a Typer app as a command, "Using Click").
PUBLIC_MODULES = frozenset({"typer", "typer.core", "typer.main"})
PUBLIC_NAMES = {
    "typer": frozenset({"Typer", "Option", "Argument", "Exit", "Abort", "BadParameter", "TyperException", "Context",
                        "CallbackParam", "echo", "secho", "style", "colors", "confirm", "prompt", "run", "launch",
                        "get_app_dir", "get_text_stream", "get_binary_stream", "getchar", "progressbar",
                        "format_filename", "FileText", "FileTextWrite", "FileBinaryRead", "FileBinaryWrite",
                        "core", "main"}),
    "typer.core": frozenset({"TyperGroup", "TyperCommand"}),
    "typer.main": frozenset({"get_command", "get_group"}),
}


def private_uses(source: str) -> list[str]:
    """Each import or attribute of click or of typer beyond its public API in `source`, as `line: what`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _private_module(alias.name):
                    found.append(f"{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if _private_module(node.module):
                found.append(f"{node.lineno}: from {node.module} import ...")
            elif node.module in PUBLIC_NAMES:
                found += [f"{node.lineno}: from {node.module} import {alias.name}" for alias in node.names
                          if alias.name not in PUBLIC_NAMES[node.module]]
        elif isinstance(node, ast.Attribute):
            owner = _dotted(node.value)
            if owner in PUBLIC_NAMES and node.attr not in PUBLIC_NAMES[owner]:
                found.append(f"{node.lineno}: {owner}.{node.attr}")
    return found


def _private_module(name: str) -> bool:
    top = name.split(".")[0]
    return top == "click" or (top == "typer" and name not in PUBLIC_MODULES)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner else None
    return None


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_uses_click_or_typers_private_api(path: Path) -> None:
    assert private_uses(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("source, found", [
    ("from typer import _click as click", ["1: from typer import _click"]),
    ("from typer._click.core import Command", ["1: from typer._click.core import ..."]),
    ("import click.testing", ["1: import click.testing"]),
    ("from click import UsageError", ["1: from click import ..."]),
    ("import typer.models", ["1: import typer.models"]),
    ("import typer\nx = typer.models.ArgumentInfo", ["2: typer.models"]),
    ("import typer.core\nclass C(typer.core._OptionParser): ...", ["2: typer.core._OptionParser"]),
    ("import typer\ntyper._click.exceptions.UsageError", ["2: typer._click"]),
    ("import typer\nimport typer.core\nimport typer.main\ntyper.Exit(typer.main.get_command(typer.Typer()))\n"
     "typer.core.TyperGroup", []),
])
def test_the_check_finds_each_private_use(source: str, found: list[str]) -> None:
    assert private_uses(source) == found
