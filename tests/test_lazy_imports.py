"""Imports sit at the top of the module, so that what a module touches reads off its head and the
import graph (tests/test_architecture.py) is the whole picture. An import inside a function (a lazy
import, run on first use) is kept where start-up needs it: in the entry points and the layer right
under them (the package's own `statedir/__init__.py`, which is `import statedir`; cli, mcp, web,
api), and below the API only in the modules ALLOWED names, each for the imports it lists. Every
module with one says at its head what it defers and why (`# Lazy imports:`); docs/cli-startup.md
has the figures."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "statedir"
ENTRY = ("api", "cli", "mcp", "web")  # the entry points and the API: lazy imports are theirs to keep
PACKAGE_ENTRY = "__init__.py"  # `import statedir` (and so `statedir --version`) loads no API until asked
MARK = "# Lazy imports:"

# Below the API: module -> what its functions may import. What is left is each decided at run time,
# by the call's own values, on a path that would otherwise load it every time (a transition,
# `status --line`, `next`, `--version`, each within 5% of its start-up: docs/cli-startup.md); a
# module whose paths fork by command is split instead, each side importing at its top what it uses.
ALLOWED: dict[str, set[str]] = {
    # a library only some inputs need: a file the fast reader cannot read or keep (ruamel), a schema
    # the fast validator lacks or a failure's messages (jsonschema), the optional in-process git (pygit2)
    "files/yaml.py": {"ruamel.yaml", "ruamel.yaml.error", "datetime"},
    "files/schema.py": {"jsonschema"},
    "gitops/libgit.py": {"pygit2"},
    # the standard library only some values need: inspect to word a call that does not fit; subprocess
    # where posix_spawn cannot start git as asked; shutil and subprocess where a signing key is
    # checked; hashlib for an input over 64 KiB or a refused key's fingerprint; copy for a value
    # that is not plain data
    "function_parameters.py": {"inspect"},
    "gitops/process.py": {"subprocess"},
    "store/commit_keys.py": {"shutil", "subprocess"},
    "gitops/object_ids.py": {"_sha1", "hashlib"},
    "files/signers_file.py": {"hashlib"},
    "engine/transition_data.py": {"copy"},
    # the rules: each action's own (the HANDLERS table of function references, issue 36 point 3),
    # and the completion rules only a stage's completion with those features needs
    "engine/rules/decision.py": {f"statedir.engine.rules.{name}" for name in (
        "stage", "run", "redo", "stage_graph", "submissions", "adjudication", "reset_boundaries", "gates", "checklist",
        "review_contract", "entry_advisories", "compliance", "inquiry")},
    "engine/rules/stage.py": {"statedir.engine.rules.reset_boundaries", "statedir.engine.rules.review_contract",
                              "statedir.engine.failure_modes", "statedir.engine.rules.compliance",
                              "statedir.engine.rules.inquiry", "statedir.engine.checkpoint_dashboard",
                              "statedir.engine.rules.stage_graph"},
    # a template that is not in the parse cache (its meaning checked) or not a shipped one (its
    # flow explored: `new --template`, a replayed `new`, `validate` of a template file)
    "engine/template/__init__.py": {"statedir.engine.template.meaning"},
    "engine/run_creation.py": {"statedir.engine.template.flow"},
    "engine/validate.py": {"statedir.engine.template.flow"},
}


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def function_imports(source: str) -> dict[str, int]:
    """What the functions of a module's source import (a module, or a statedir module's submodule
    named in a `from` import) -> the first line that does."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                names = [alias.name for alias in inner.names]
            elif isinstance(inner, ast.ImportFrom) and inner.module:
                names = [f"{inner.module}.{alias.name}" if inner.module.startswith("statedir")
                         and _is_module(f"{inner.module}.{alias.name}") else inner.module for alias in inner.names]
            else:
                continue
            for name in names:
                found.setdefault(name, inner.lineno)
    return found


def _modules() -> dict[str, str]:
    return {path.relative_to(PACKAGE).as_posix(): path.read_text() for path in sorted(PACKAGE.rglob("*.py"))}


def _below_the_api(rel: str) -> bool:
    return rel != PACKAGE_ENTRY and rel.split("/")[0] not in ENTRY


def test_below_the_api_a_function_imports_only_what_the_allowlist_names() -> None:
    extra = {f"statedir/{rel}:{line} imports {name}"
             for rel, source in _modules().items() if _below_the_api(rel)
             for name, line in function_imports(source).items() if name not in ALLOWED.get(rel, set())}
    assert not extra, "import it at the top of the module (or split the module): " + "; ".join(sorted(extra))


def test_each_allowed_import_is_still_made_inside_a_function() -> None:
    modules = _modules()
    stale = {f"{rel}: {name}" for rel, names in ALLOWED.items() for name in names
             if name not in function_imports(modules[rel])}
    assert not stale, stale


def test_each_module_with_lazy_imports_says_what_it_defers_and_why() -> None:
    silent = [rel for rel, source in _modules().items() if function_imports(source)
              and not any(line.startswith(MARK) for line in source.splitlines())]
    assert not silent, f"a module-level `{MARK} WHAT: WHY` comment is missing in {silent}"


def test_the_allowlist_is_short() -> None:
    assert len(ALLOWED) <= 14  # 46 modules at issue 36; it shrinks as modules split; it does not grow


def test_an_import_inside_a_function_is_found_and_a_top_level_one_is_not() -> None:
    source = ("import json\nfrom statedir.files import yaml\n\n"
              "def f():\n    import shutil\n    from statedir.store import layout\n    from git import Repo\n\n"
              "class C:\n    def m(self):\n        if True:\n            import base64\n")
    assert function_imports(source) == {"shutil": 5, "statedir.store.layout": 6, "git": 7, "base64": 12}
