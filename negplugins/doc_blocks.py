"""Text about the benchmarks, rendered from their specs: the ``evaluate`` help and the generated blocks of the docs,
each between HTML comment markers (``<!-- benchmarks: ... -->`` ... ``<!-- /benchmarks -->``) in a file of
:data:`BLOCK_FILES`; ``python -m negplugins.doc_blocks --write FILE`` rewrites them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from ir_datasets_ext.spec import GENERIC_MEASURES, Benchmark, benchmarks

__all__ = ["venue", "measures_text", "evaluate_description", "docs_page", "readme_benchmark_table",
           "readme_default_measures", "readme_protocols", "README_BLOCKS", "BLOCK_FILES", "readme_block",
           "update_blocks", "stale_blocks"]

_SOURCE = "generated from the benchmark specs (ir_datasets_ext/datasets/*.py) by python -m negplugins.docs_pages --write"


def venue(spec: Benchmark) -> str:
    """Venue and year of the paper, from its short reference (``"Xu et al., AAAI 2026"`` -> ``"AAAI 2026"``)."""
    _, comma, rest = spec.paper.reference.partition(", ")
    return rest.strip() if comma else ""


def measures_text(spec: Benchmark, code: bool = False) -> str:
    """The default measures in the paper's order (the paper's name in parentheses where it differs), then the hook's."""
    quote = "`" if code else ""
    parts = []
    for measure in spec.measures.names:
        paper = spec.paper_name(measure)
        parts.append(f"{quote}{measure}{quote}" + (f" ({paper})" if paper != measure else ""))
    text = ", ".join(parts)
    if spec.measures.hook is not None:
        note = spec.measures.note or "and others where its data calls for them"
        text += ", " + (note if code else note.replace("`", ""))
    return text


def _generic(code: bool = False) -> str:
    quote = "`" if code else ""
    return ", ".join(f"{quote}{m}{quote}" for m in GENERIC_MEASURES)


def evaluate_description() -> str:
    """The description of ``negplugins evaluate --help``: each benchmark's default measures."""
    defaults = "; ".join(f"{spec.title}: {measures_text(spec)}" for spec in benchmarks())
    return (f"Validate and score runs, overall and per subset. Default measures follow each benchmark's paper "
            f"(the paper's name in parentheses where it differs): {defaults}; any other dataset: {_generic()}. "
            "With several runs: paired t-test and randomization test against the baseline, Holm-corrected across "
            "runs, t-based 95% confidence intervals.")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def docs_page(spec: Benchmark) -> str:
    """The benchmark's documentation page, relative to the project root (rendered by ``negplugins.docs_pages``)."""
    return f"docs/benchmarks/{spec.name}.md"


def readme_benchmark_table() -> str:
    """The README's table of benchmarks."""
    lines = ["| dataset id | benchmark | what it tests | explicit negatives (-1) | details |", "|---|---|---|---|---|"]
    for spec in benchmarks():
        ids = ", ".join(f"`{dataset_id}`" for dataset_id in spec.datasets)
        title = f"[{_cell(spec.title)}]({spec.paper.url})" if spec.paper.url else _cell(spec.title)
        where = venue(spec)
        lines.append(f"| {ids} | {title}{f' ({_cell(where)})' if where else ''} | {_cell(spec.summary)} | "
                     f"{_cell(spec.negatives)} | [{spec.name}]({docs_page(spec)}) |")
    return "\n".join(lines)


def readme_default_measures() -> str:
    """The evaluation page's list of default measures per benchmark, with the query field and order of its subsets."""
    intro = ("Each dataset is scored with its paper's measures by default (the suite's names; the paper's name in "
             "parentheses where it differs), overall and per subset:")
    lines = [intro, ""]
    for spec in benchmarks():
        line = f"- {spec.title}: {measures_text(spec, code=True)}"
        breakdown = spec.breakdown
        if breakdown.subset_field:
            line += f"; subsets by `{breakdown.subset_field}`" + (
                f": {', '.join(breakdown.subsets)}" if breakdown.subsets else "")
        lines.append(line)
    lines.append(f"- any other ir_datasets dataset: {_generic(code=True)}")
    return "\n".join(lines)


_PROTOCOLS = {
    "retrieval": "the whole corpus ranked: dense retrieval with the model, or BM25 reranked by it (`--reranker`)",
    "pairs": "each query's own candidates (the scoreddocs) scored by the model, as a bi-encoder or the reranker",
}


def readme_protocols() -> str:
    """The report card page's table of what ``negplugins benchmark`` runs per benchmark: datasets, protocol, depth."""
    lines = ["| benchmark | datasets run | protocol | documents per query |", "|---|---|---|---:|"]
    for spec in benchmarks():
        ids = ", ".join(f"`{dataset_id}`" for dataset_id in spec.benchmark_datasets())
        lines.append(f"| {_cell(spec.title)} | {ids} | {_cell(_PROTOCOLS[spec.protocol.kind])} | {spec.protocol.depth} |")
    return "\n".join(lines)


#: The generated blocks: marker name -> renderer.
README_BLOCKS: dict[str, Callable[[], str]] = {
    "benchmarks": readme_benchmark_table,
    "default-measures": readme_default_measures,
    "protocols": readme_protocols,
}


#: Which file of the project holds which generated blocks (paths relative to the project root).
BLOCK_FILES: dict[str, tuple[str, ...]] = {
    "README.md": ("benchmarks",),
    "docs/evaluation.md": ("default-measures",),
    "docs/report-card.md": ("protocols",),
}


def readme_block(name: str, renderers: dict[str, Callable[[], str]] = README_BLOCKS) -> str:
    """Block ``name`` as a file holds it: start marker, rendering (by ``renderers[name]``), end marker."""
    return f"<!-- {name}: {_SOURCE} -->\n{renderers[name]()}\n<!-- /{name} -->"


def _find(text: str, name: str) -> re.Match:
    pattern = re.compile(rf"^<!-- {re.escape(name)}:.*?-->\n.*?^<!-- /{re.escape(name)} -->$", re.DOTALL | re.MULTILINE)
    matches = list(pattern.finditer(text))
    if len(matches) != 1:
        raise ValueError(f"expected one block '<!-- {name}: ... -->' ... '<!-- /{name} -->', found {len(matches)}")
    return matches[0]


def stale_blocks(text: str, names=tuple(README_BLOCKS), renderers=README_BLOCKS) -> dict[str, str]:
    """``{name: expected block}`` for each generated block ``names`` of ``text`` that differs from its rendering."""
    stale = {}
    for name in names:
        expected = readme_block(name, renderers)
        if _find(text, name).group(0) != expected:
            stale[name] = expected
    return stale


def update_blocks(text: str, names=tuple(README_BLOCKS), renderers=README_BLOCKS) -> str:
    """``text`` with its generated blocks ``names`` rendered afresh; the rest unchanged."""
    for name in names:
        match = _find(text, name)
        text = text[:match.start()] + readme_block(name, renderers) + text[match.end():]
    return text


def main(argv=None) -> int:
    """Print the generated blocks, or with ``--write FILE`` rewrite those that FILE holds."""
    import argparse

    from .errors import UserError, os_error_message

    parser = argparse.ArgumentParser(prog="python -m negplugins.doc_blocks", description=main.__doc__)
    parser.add_argument("--write", metavar="FILE", help="rewrite the generated blocks of this file (README.md, "
                                                        "docs/evaluation.md, docs/report-card.md)")
    args = parser.parse_args(argv)
    if args.write is None:
        print("\n\n".join(readme_block(name) for name in README_BLOCKS))
        return 0
    from .io.files import atomic_writer

    try:
        with open(args.write, encoding="utf-8", newline="") as f:
            text = f.read()
        names = tuple(name for name in README_BLOCKS if f"<!-- {name}:" in text)
        if not names:
            raise ValueError("holds no generated block ('<!-- benchmarks: ... -->' ...)")
        fresh = update_blocks(text, names)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"{parser.prog}: error: {args.write}: {error}", file=sys.stderr)
        return 2
    if fresh == text:
        print(f"{args.write} is up to date")
        return 0
    try:
        with atomic_writer(args.write) as f:
            f.write(fresh)
    except (OSError, UserError) as error:  # UserError: the file refused as an output (its folder read-only, ...)
        line = os_error_message(error, named=[args.write]) if isinstance(error, OSError) else None
        print(f"{parser.prog}: error: {line or error}", file=sys.stderr)
        return 2
    print(f"rewrote the generated blocks of {args.write}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
