"""Give benchmarks numbers "reported in a paper" for a test, and put the registered specs back afterwards.

The specs of the suite carry the papers' numbers once they are recorded; the tests use their own toy
numbers (on the embedded demo dataset and on ExcluIR, whose page is built without data), so that they do
not depend on what is recorded.
"""

from __future__ import annotations

import contextlib
import dataclasses

from ir_datasets_ext.spec import Reported, benchmarks, register_benchmark, unregister_benchmark

PAPER_URL = "https://example.org/papers/demo"

#: The demo's toy paper: one system reproduced by the tests' runs, one not; per-kind numbers; a measure
#: the runs are not scored with (P@5); an escaped name.
DEMO_REPORTED = (
    Reported("Paper BM25", "nDCG@10", 0.5, "negplugins-demo", None, "Table 2, row BM25", "rounded"),
    Reported("Paper BM25", "RR@10", 0.45, "negplugins-demo", None, "Table 2, row BM25"),
    Reported("Paper BM25", "P@5", 0.2, "negplugins-demo", None, "Table 5, row BM25"),
    Reported("<b>Dense</b>", "nDCG@10", 0.62, "negplugins-demo", None, "Table 2, row Dense"),
    Reported("Paper BM25", "nDCG@10", 0.4, "negplugins-demo", "exclusion", "Table 3, row BM25, column exclusion"),
    Reported("Paper BM25", "nDCG@10", 0.7, "negplugins-demo", "not", "Table 3, row BM25, column not"),
)
EXCLUIR_REPORTED = (Reported("BM25", "R@1", 0.125, "excluir/test", None, "Table 2, row BM25"),)


@contextlib.contextmanager
def replaced_specs(changes: dict):
    """Within the block, ``benchmarks()`` holds each spec named in ``changes`` with its changes applied (same order):
    ``{name: {record: {field: value}}}``, e.g. ``{"excluir": {"paper": {"reported": ()}}}``."""
    originals = benchmarks()
    for spec in originals:
        unregister_benchmark(spec.name)
    try:
        for spec in originals:
            register_benchmark(_changed(spec, changes[spec.name]) if spec.name in changes else spec)
        yield
    finally:
        for spec in benchmarks():
            unregister_benchmark(spec.name)
        for spec in originals:
            register_benchmark(spec)


def _changed(spec, records: dict):
    return dataclasses.replace(spec, **{name: dataclasses.replace(getattr(spec, name), **fields)
                                        for name, fields in records.items()})


def demo_paper(**extra):
    """The toy papers' changes for ``replaced_specs(demo_paper())``; ``extra``: more fields of the demo's paper."""
    demo = {"reported": DEMO_REPORTED, "reference": "Doe et al., 2099", "url": PAPER_URL,
            "reproduction_notes": {"Paper BM25": "The paper's BM25 uses k1 1.2; the run uses k1 0.9."}}
    demo.update(extra)
    return {"negplugins-demo": {"paper": demo}, "excluir": {"paper": {"reported": EXCLUIR_REPORTED}}}
