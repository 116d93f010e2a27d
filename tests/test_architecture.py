"""The package layout keeps data flowing one way: no import cycle, no import of another module's private name.

The graph is read from the source with :mod:`ast`, so imports inside functions (the suite imports heavy
modules lazily) count as much as those at the top of a module. Running this file as a script prints the
graph (``python tests/test_architecture.py``).
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("negplugins", "ir_datasets_ext")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def import_graph():
    """``(edges, private)``: ``{module: {imported module, ...}}`` inside the suite, and private-name imports."""
    modules = _modules()
    edges: dict[str, set[str]] = {name: set() for name in modules}
    private: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = alias.name
                    while target and target not in modules:
                        target = target.rpartition(".")[0]
                    if target and target != name:
                        edges[name].add(target)
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(name, is_package, node.level, node.module)
                if source.split(".")[0] not in PACKAGES:
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in modules:
                        target = submodule
                    else:
                        target = source
                        if alias.name.startswith("_") and not alias.name.startswith("__") and target != name:
                            private.append(f"{name} imports {alias.name} from {target}")
                    if target in modules and target != name:
                        edges[name].add(target)
    return edges, private


def _is_ancestor(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def find_cycles(edges) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), ignoring a package's own submodules.

    A package ``__init__`` importing its submodules, and a submodule importing names its package re-exports
    from elsewhere, are the normal shape of a package, not a cycle of the data flow.
    """
    graph = {m: {t for t in targets if not _is_ancestor(m, t) and not _is_ancestor(t, m)} for m, targets in edges.items()}
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def test_the_graph_is_read_from_real_imports():
    edges, _ = import_graph()
    # guards against a checker that sees nothing: known edges of the layout must be found
    assert "negplugins.io.trec" in edges["negplugins.io.run_writer"]  # the one run writer of the runners
    assert "negplugins.evaluation.scoring" in edges["negplugins.leaderboard.build"]
    assert sum(len(targets) for targets in edges.values()) > 100


def test_cycle_finder_finds_a_planted_cycle():
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "p": {"p.x"}, "p.x": {"p"}}
    assert find_cycles(planted) == [["a", "b", "c"]]


def test_no_import_cycle():
    cycles = find_cycles(import_graph()[0])
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_no_import_of_another_modules_private_name():
    _, private = import_graph()
    assert not private, "\n".join(private)


#: The layers, lowest first: a module may import its own layer and those below, never one above. A layer lists
#: packages or modules (a package covers its submodules); every module of the suite is in exactly one.
LAYERS = [
    ("rendering", ["negplugins.rendering"]),
    ("datasets registered with ir_datasets", ["ir_datasets_ext"]),
    ("foundation", ["negplugins.errors", "negplugins.environment", "negplugins.options", "negplugins._compat.upstream",
                    "negplugins._compat.jvm", "negplugins._compat.crash_handlers", "negplugins._compat.fast_tokenizer",
                    "negplugins._compat.anserini"]),
    ("measures", ["negplugins.measures"]),
    ("dataset ids", ["negplugins.datasets"]),
    ("files, and text generated from the specs", ["negplugins.io", "negplugins.doc_blocks"]),
    ("BEIR folders", ["negplugins.beir"]),
    ("runners", ["negplugins.runners"]),
    ("evaluation", ["negplugins.evaluation"]),
    ("leaderboard", ["negplugins.leaderboard"]),
    ("MTEB", ["negplugins.mteb"]),
    ("report card", ["negplugins.reportcard"]),
    ("shell and registration", ["negplugins", "negplugins.__main__", "negplugins.cli", "negplugins.demo",
                                "negplugins.docs_pages", "negplugins._compat",
                                "negplugins._compat.ir_measures", "negplugins._compat.plugins",
                                "negplugins._compat.pyterrier", "negplugins._compat.pyserini_topics",
                                "negplugins._compat.ir_datasets_export"]),
]


def layer_of(module: str) -> int | None:
    """The index in :data:`LAYERS` of ``module``: the layer naming it or its closest package."""
    best, depth = None, -1
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and member.count(".") > depth:
                best, depth = index, member.count(".")
    return best


def test_every_module_is_in_a_layer():
    edges, _ = import_graph()
    assert not [m for m in edges if layer_of(m) is None], "modules in no layer"


def test_no_import_runs_up_the_layers():
    """A module imports its own layer and those below (module level or inside a function), never one above."""
    edges, _ = import_graph()
    upward = [f"{source} ({LAYERS[layer_of(source)][0]}) -> {target} ({LAYERS[layer_of(target)][0]})"
              for source, targets in edges.items() for target in targets
              if layer_of(target) > layer_of(source)]
    assert not upward, "imports up the layers: " + ", ".join(sorted(upward))


def test_the_layer_check_sees_an_upward_import():
    assert layer_of("negplugins.io.trec") < layer_of("negplugins.evaluation.scoring") < layer_of("negplugins.cli")
    assert layer_of("negplugins._compat.jvm") < layer_of("negplugins.measures") < layer_of("negplugins._compat.plugins")


def test_the_renderer_imports_nothing_of_the_suite():
    """Numbers, escaping, JSON text, the HTML shell and the charts decide nothing: they need no other module."""
    edges, _ = import_graph()
    outside = [f"{source} -> {target}" for source, targets in edges.items() if source.startswith("negplugins.rendering")
               for target in targets if not target.startswith("negplugins.rendering")]
    assert any(source.startswith("negplugins.rendering.") for source in edges)  # the package is there to check
    assert not outside, ", ".join(sorted(outside))


if __name__ == "__main__":
    graph, private_names = import_graph()
    for module in sorted(graph):
        print(module, "->", ", ".join(sorted(graph[module])) or "-")
    print("cycles:", find_cycles(graph))
    print("private:", private_names)
