"""An import-linter contract type: no import cycle between any two modules of a package.

`acyclic_siblings` compares sibling packages as wholes; this one looks at modules, counting
every import grimp finds (function-local ones too, as a module imported late still closes
a cycle). Registered in pyproject.toml as `acyclic_modules`.
"""

from __future__ import annotations

from typing import Any

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


def cycles(graph: ImportGraph, package: str) -> list[list[str]]:
    """The strongly connected groups of more than one module under `package` (Tarjan's
    algorithm, iterative), each as one cycle through the group."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & inside) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(_one_cycle(sorted(group), edges))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return groups


def _one_cycle(group: list[str], edges: dict[str, list[str]]) -> list[str]:
    """A shortest cycle through the group's first module (breadth-first), for the report."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in edges[node]:
            if nxt == start:
                return paths[node] + [start]
            if nxt in members and nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    return group


class AcyclicModulesContract(Contract):
    type_name = "acyclic_modules"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        found: list[list[str]] = []
        for package in self.packages:  # type: ignore[attr-defined]
            found += cycles(graph, package)
        return ContractCheck(kept=not found, metadata={"cycles": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        found: list[Any] = check.metadata["cycles"]
        output.print_error(f"{len(found)} import cycle(s):")
        output.new_line()
        for cycle in found:
            output.print_error("- " + " -> ".join(cycle), bold=False)
        output.new_line()
