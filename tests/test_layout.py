"""The package layout is the architecture: each folder imports only the folders below it.

foundations ← methods ← certificates ← accounting ← curves ← mechanisms ← privacy_curve (with events, the run
model, and pld, the proven PLD arithmetic that knows no mechanism, on foundations) ← {audit, reference, tightness, cdp,
accountants, calibration, tradeoff} ← cli.
A new folder must be added here (and to the README's layout) before it can land.
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rdp_verify"

ALLOWED = {
    "foundations": set(),
    "events": {"foundations"},
    "pld": {"foundations"},  # grids, connect-the-dots and lowered-chord pairs, exact composition
    "methods": {"foundations"},
    "certificates": {"methods", "foundations"},
    "accounting": {"methods", "foundations"},
    "curves": {"pld", "accounting", "certificates", "methods", "foundations"},
    "mechanisms": {"curves", "pld", "foundations"},  # one module per mechanism: proven PLDs fed to pld.compose
    "privacy_curve": {"events", "mechanisms", "curves", "pld", "accounting", "certificates", "methods", "foundations"},
    "audit": {"privacy_curve", "events", "curves", "pld", "accounting", "certificates", "methods",
              "foundations"},  # rdp_table: the RDP of event trees (privacy_curve.rdp)
    "reference": {"privacy_curve", "events", "mechanisms", "curves", "pld", "accounting", "certificates", "methods",
                  "foundations"},
    "tightness": {"certificates", "methods", "foundations"},
    "cdp": {"certificates", "methods", "foundations"},
    "accountants": {"privacy_curve", "events", "mechanisms", "curves", "pld", "accounting", "certificates", "methods",
                    "foundations"},
    "calibration": {"privacy_curve", "events", "mechanisms", "curves", "pld", "accounting", "certificates", "methods",
                    "foundations"},
    "tradeoff": {"privacy_curve", "events", "mechanisms", "curves", "pld", "certificates", "foundations"},
    "cli": {"audit", "reference", "tightness", "cdp", "calibration", "tradeoff", "privacy_curve", "events",
            "mechanisms", "curves", "pld", "accounting", "certificates", "methods", "foundations"},
}


def folders():
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())


def imported_folders(path: Path, root: Path = PACKAGE) -> set[str]:
    """The rdp_verify folders a module under ``root`` imports from (relative or absolute imports)."""
    own = path.relative_to(root).parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(own[:len(own) - node.level + 1])
                target = base + (node.module.split(".") if node.module else [])
                if not target:  # ``from .. import __version__`` or ``from .. import x``
                    target = [alias.name for alias in node.names if alias.name != "__version__"][:1]
            elif node.module and node.module.split(".")[0] == "rdp_verify":
                target = node.module.split(".")[1:]
            else:
                continue
            if target:
                found.add(target[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "rdp_verify" and len(parts) > 1:
                    found.add(parts[1])
    return found


def test_every_folder_has_a_declared_layer():
    assert folders() == sorted(ALLOWED)


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_folder_imports_only_lower_layers(folder):
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        bad = imported_folders(path) - ALLOWED[folder] - {folder}
        assert not bad, f"{path.relative_to(PACKAGE)} imports {sorted(bad)}: not below {folder}"


def test_the_analysis_sees_upward_imports(tmp_path):
    # the check itself can fail: a foundations module importing the methods and the CLI is caught
    probe = tmp_path / "foundations" / "probe.py"
    probe.parent.mkdir()
    probe.write_text("from ..methods.rigorous import enclose\nfrom . import inputs\nimport rdp_verify.cli.common\n")
    assert imported_folders(probe, tmp_path) == {"methods", "foundations", "cli"}


def test_every_module_has_an_api_entry():
    """docs/api.md documents every module (autodoc): a new module cannot land without its reference entry."""
    api = (PACKAGE.parent / "docs" / "api.md").read_text()
    missing = [m for m in (".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
                           for p in sorted(PACKAGE.rglob("*.py")) if p.name not in ("__init__.py", "__main__.py"))
               if f"### `{m}`" not in api]
    assert missing == []


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the modules of the package it imports, at the top or inside a function (a deferred import is
    still a dependency). A package's ``__init__`` is left out as a target: it only re-exports its own modules."""
    mods = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] != "__init__":
            mods[".".join(parts)] = path
    graph = {}
    for name, path in mods.items():
        package = name.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                candidates = [target, *(f"{target}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            else:
                continue
            deps |= {c for c in candidates if c in mods and c != name}
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back():
    # issue 40: curves.accountant <-> curves.per_epoch imported private helpers back inside functions
    assert cycles(module_graph()) == []


def test_the_cycle_check_sees_a_deferred_import(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import x\n")
    (pkg / "b.py").write_text("def f():\n    from .a import y  # deferred\n")
    (pkg / "c.py").write_text("from . import a\n")
    assert cycles(module_graph(pkg)) == [["pkg.a", "pkg.b"]]


def test_one_module_evaluates_the_gaussian_tail_in_arb():
    # issue 40: Phi was evaluated through Arb's erfc in 9 modules outside methods/ (most loose deep in the tail);
    # the RDP methods keep their own evaluations, as independent cross-checks must
    arb_erfc = re.compile(r"(?<!math)(?<!np)(?<!numpy)\.erfc\(")  # a ball's erfc, not a float's
    found = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if arb_erfc.search(p.read_text(encoding="utf-8")) and p.parent.name != "methods")
    assert found == ["foundations/normal.py"]
