"""The import contracts of pyproject.toml hold (doors, layers, no cycles), and the cycle
finder behind `acyclic_modules` reports what it should."""

from __future__ import annotations

from pathlib import Path

import grimp

from tests.import_contracts import cycles

ROOT = Path(__file__).resolve().parents[2]


def test_a_cycle_is_reported_with_its_path_and_a_chain_is_not():
    graph = grimp.ImportGraph()
    for importer, imported in [("pkg.a", "pkg.b"), ("pkg.b", "pkg.c"), ("pkg.c", "pkg.a"),
                               ("pkg.d", "pkg.a"), ("pkg.e", "pkg.d"), ("other.x", "pkg.e"),
                               ("pkg.e", "other.x")]:
        graph.add_import(importer=importer, imported=imported)
    assert cycles(graph, "pkg") == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]


def test_stackling_keeps_its_import_contracts(monkeypatch):
    from importlinter.cli import lint_imports

    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True,
                        no_logo=True) == 0
