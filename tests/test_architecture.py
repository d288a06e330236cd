"""The folder list is the architecture: layers that import only the layers below them (the
contract in pyproject.toml, checked by import-linter), no import circle between modules, and a
package docstring that says what each layer holds and may import."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import statedir

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "statedir"
LINT = Path(sys.executable).parent / "lint-imports"


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root,
                          capture_output=True, text=True, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


@pytest.mark.usefixtures("isolated")
def test_each_layer_imports_only_the_layers_below_it() -> None:
    proc = _lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "8 kept, 0 broken" in proc.stdout  # the seven layers, the order inside four of them, the entry points over the API only, the rules kept pure


@pytest.mark.parametrize(("module", "imported"), [
    ("files/yaml.py", "statedir.cli"),  # a file format importing an entry point: across layers
    ("api/overview.py", "statedir.cli"),  # the API importing the CLI: inside the entry points' layer
    ("engine/rules/stage.py", "statedir.gitops"),  # a rule touching git: the rules are pure
    ("cli/read.py", "statedir.engine"),  # an entry point reaching below the API
])
@pytest.mark.usefixtures("isolated")
def test_an_upward_import_breaks_the_contract(tmp_path: Path, module: str, imported: str) -> None:
    """The check can fail: an upward import between layers, or inside one, is reported."""
    shutil.copytree(PACKAGE, tmp_path / "statedir", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    path = tmp_path / "statedir" / module
    path.write_text(path.read_text() + f"\n\ndef _upward() -> None:\n    import {imported}  # noqa\n")
    proc = _lint(tmp_path)
    assert proc.returncode != 0
    assert f"statedir.{module[:-3].replace('/', '.')} -> {imported}" in proc.stdout


def _graph() -> dict[str, set[str]]:
    import grimp

    graph = grimp.build_graph("statedir", include_external_packages=False, exclude_type_checking_imports=False)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_circle_between_modules() -> None:
    assert _circles(_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.usefixtures("isolated")
def test_an_import_for_type_hints_only_counts(tmp_path: Path) -> None:
    """An import under TYPE_CHECKING is an edge of the graph too: the store's files on disk naming
    the opened store that builds on them, for a hint, close a circle; naming history from the bus
    (below it) breaks the layers."""
    shutil.copytree(PACKAGE, tmp_path / "statedir", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for module, imported in (("store/disk.py", "statedir.store.store"), ("bus/replay.py", "statedir.history.snapshot")):
        path = tmp_path / "statedir" / module
        path.write_text(path.read_text() + f"\n\nif TYPE_CHECKING:\n    import {imported}  # noqa\n")
    code = ("import json, grimp\n"
            "g = grimp.build_graph('statedir', include_external_packages=False, exclude_type_checking_imports=False)\n"
            "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}).stdout
    import json

    edges = {m: set(imported) for m, imported in json.loads(out).items()}
    assert any({"statedir.store.disk", "statedir.store.store"} <= set(circle) for circle in _circles(edges))
    assert "statedir.bus.replay -> statedir.history.snapshot" in _lint(tmp_path).stdout


@pytest.mark.parametrize("package", sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py")))
def test_each_package_says_what_it_holds(package: str) -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text()))
    assert doc, f"statedir/{package}/__init__.py has no docstring"


@pytest.mark.usefixtures("isolated")
def test_the_command_table_names_each_command_with_the_module_that_registers_it() -> None:
    """`statedir CMD` loads CMD's module alone: the table must name the right one for each."""
    code = ("import importlib, json\nfrom statedir.cli import registry\nfound = {}\n"
            "for module in sorted(set(registry.TABLE.values())):\n"
            "    before = set(registry.COMMANDS) | set(registry.GROUPS)\n"
            "    importlib.import_module('statedir.cli.' + module)\n"
            "    found.update({n: module for n in (set(registry.COMMANDS) | set(registry.GROUPS)) - before})\n"
            "print(json.dumps(found))")
    import json

    found = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      check=True).stdout)
    from statedir.cli.registry import TABLE

    assert found == TABLE


@pytest.mark.usefixtures("isolated")
def test_a_command_loads_only_its_own_module() -> None:
    code = ("import sys\nfrom statedir.cli import main\nmain(['status', '--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('statedir.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = eval(out.strip().splitlines()[-1])
    assert "statedir.cli.read" in loaded
    assert not {"statedir.cli.write", "statedir.cli.bus", "statedir.cli.research", "statedir.cli.history"} & set(loaded)


def _loaded_by(repo: Path, *calls: list[str]) -> set[str]:
    """The modules a fresh process has loaded after `statedir.cli.main` ran each call (all exit 0)."""
    code = ("import sys\nfrom statedir.cli import main\n"
            f"codes = [main(call) for call in {list(calls)!r}]\n"
            "print(codes, sorted(sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    codes, _, modules = proc.stdout.strip().splitlines()[-1].partition("] ")
    assert codes == "[" + ", ".join("0" for _ in calls), proc.stdout + proc.stderr
    return set(eval(modules))


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_a_transition_and_a_status_line_load_no_typer_nor_any_library_they_do_not_use(repo: Path) -> None:
    """The CLI's cost is the command's own: no typer, click, ruamel, jsonschema, gitpython, pygit2."""
    statedir.init(repo / "state")
    statedir.open(repo / "state").new("r1", topic="t")
    loaded = _tops(_loaded_by(repo, ["stage", "r1", "1", "in_progress"], ["status", "r1", "--line"]))
    assert not {"typer", "click", "rich", "ruamel", "jsonschema", "git", "pygit2", "deepdiff"} & loaded, loaded
    assert "statedir" in loaded


def test_a_transition_loads_only_its_own_action_rules_and_no_rarely_needed_module(repo: Path) -> None:
    """`set` loads neither the other actions' rules nor store creation, nor shutil (copies on rare
    paths only) and its compression modules, nor inspect and dataclasses, hashlib (OpenSSL),
    subprocess (with threading), datetime, copy or base64: what a CLI transition pays for is its own."""
    statedir.init(repo / "state")
    statedir.open(repo / "state").new("r1", topic="t")
    loaded = _loaded_by(repo, ["set", "r1", "topic", "u", "--reason", "r"])
    assert "statedir.engine.rules" in loaded
    unneeded = {"shutil", "bz2", "lzma", "statedir.store.create", "statedir.store.skeleton",
                # the standard library a transition does without (see docs/cli-startup.md)
                "inspect", "dataclasses", "hashlib", "subprocess", "threading", "datetime", "copy", "base64",
                "statedir.api.caller_inputs", "statedir.engine.rules.submissions", "statedir.engine.rules.stage_graph",
                "statedir.engine.rules.reset_boundaries",
                "statedir.engine.rules.adjudication", "statedir.engine.adjudication_contract", "statedir.engine.runs",
                "statedir.engine.materials"}
    assert not unneeded & loaded, unneeded & loaded


def test_a_plain_bus_call_loads_no_typer(repo: Path) -> None:
    statedir.init(repo / "state")
    loaded = _tops(_loaded_by(repo, ["bus", "set", "2026-06-30-s", "vars.topic", "x"], ["bus", "get", "2026-06-30-s"]))
    assert not {"typer", "click", "rich"} & loaded


def test_a_research_call_loads_no_typer_and_a_query_no_hashing(repo: Path) -> None:
    """research's calls are read without typer (its command class only words typer's refusals);
    a query mints no id, so it loads no secrets (hashlib, hmac)."""
    statedir.init(repo / "state")
    loaded = _loaded_by(repo, ["research", "--query", "--project-id", "proj_default"])
    assert not {"typer", "click", "rich", "secrets", "hmac"} & _tops(loaded), loaded
    started = _loaded_by(repo, ["research", "--start-run", "--skill", "bench", "--question", "Q?"])
    assert not {"typer", "click", "rich"} & _tops(started)


def test_next_loads_no_dataclasses_nor_datetime(repo: Path) -> None:
    """`next` costs about what `status` does: none of inspect and dataclasses (its candidates, and
    the adjudication contract's families its rules import, are plain classes) nor datetime."""
    statedir.init(repo / "state")
    statedir.open(repo / "state").new("r1", topic="t")
    loaded = _loaded_by(repo, ["next", "r1"])
    assert "statedir.engine.next_moves" in loaded
    assert not {"inspect", "dataclasses", "datetime"} & loaded, {"inspect", "dataclasses", "datetime"} & loaded


def _unmirrored(tests: Path, package: Path) -> list[str]:
    """Test files under `tests` (below its top) not named for a module of the same folder in
    `package`: `test_<module>.py` or `test_<module>_<aspect>.py`, `test_init*.py` for the
    package's `__init__.py` (docs/architecture.md)."""
    out = []
    for path in sorted(tests.rglob("test_*.py")):
        folder = path.parent.relative_to(tests)
        if folder == Path(".") or folder.parts[0] in ("support", "fixtures"):
            continue
        source = package / folder
        modules = {"init"}  # the package's __init__.py
        if source.is_dir():
            modules |= {p.stem for p in source.glob("*.py")} | {p.name for p in source.iterdir() if p.is_dir()}
        stem = path.stem[len("test_"):]
        if not any(stem == m or stem.startswith(m + "_") for m in modules):
            out.append(str(path.relative_to(tests)))
    return out


def test_every_test_file_sits_beside_the_module_it_tests() -> None:
    assert _unmirrored(ROOT / "tests", PACKAGE) == []


def test_a_test_named_for_a_feature_is_found(tmp_path: Path) -> None:
    (tmp_path / "statedir" / "store").mkdir(parents=True)
    (tmp_path / "statedir" / "store" / "write.py").write_text("")
    (tmp_path / "tests" / "store").mkdir(parents=True)
    for name in ("test_write.py", "test_write_crashes.py", "test_init.py", "test_crashes.py", "test_writer.py"):
        (tmp_path / "tests" / "store" / name).write_text("")
    (tmp_path / "tests" / "test_whole.py").write_text("")
    assert _unmirrored(tmp_path / "tests", tmp_path / "statedir") == ["store/test_crashes.py", "store/test_writer.py"]
