"""One spec per benchmark: what is derived from it, and a toy benchmark that appears everywhere with no other edit.

The toy benchmark is an ir_datasets dataset written here (four documents, three queries in two subsets)
plus a :class:`~ir_datasets_ext.spec.Benchmark` registered in the test. Without touching any module of the
suite it must show up in the default measures, the subsets of ``evaluate`` (in the spec's order, which is not
alphabetical), the leaderboard pages and index, ``negplugins evaluate --help`` and the README table.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import ir_datasets
import pytest
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import GenericDoc, TrecQrels, TsvDocs, TsvQueries
from ir_datasets.util import LocalDownload

from ir_datasets_ext import Reported
from ir_datasets_ext.spec import (
    Benchmark,
    Breakdown,
    Measures,
    Paper,
    Protocol,
    benchmark_of,
    benchmarks,
    register_benchmark,
    unregister_benchmark,
)
from ir_datasets_ext.util import register
from negplugins import doc_blocks
from negplugins.cli import build_parser, main
from negplugins.evaluation.scoring import default_measures, evaluate
from negplugins.io.sidecars import write_metadata
from negplugins.leaderboard import build

TOY = "toybench"
TOY_SPEC = Benchmark(
    name=TOY,
    title="ToyBench",
    summary="a toy benchmark registered by a test",
    datasets=(TOY,),
    paper=Paper(reference="Doe et al., Toy Venue 2031", url="https://example.org/toybench"),
    # P@1: in no other spec's defaults, nor in the generic ones
    measures=Measures(names=("P@1", "RR@10"), main="P@1", paper_names={"RR@10": "MRR@10"}),
    breakdown=Breakdown(subset_field="facet", subsets=("zeta", "alpha")),  # the paper's order, not alphabetical
    negatives="a toy negative",
)

DOCS = {"d1": "the capital of france", "d2": "a city in france", "d3": "a city in italy", "d4": "a city in spain"}
QUERIES = [("q1", "capital of france", "zeta"), ("q2", "cities outside spain", "alpha"), ("q3", "spain", "zeta")]
QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}, "q3": {"d4": 1}}
RUN = {"q1": ["d1", "d2"], "q2": ["d1", "d3", "d2"], "q3": ["d2", "d3", "d4"]}
# By hand: first relevant document at rank 1, 2 and 3, so P@1 = 1, 0, 0 and RR@10 = 1, 1/2, 1/3.
# Overall (3 queries): P@1 = 1/3, RR@10 = 11/18. zeta (q1, q3): P@1 = 1/2, RR@10 = 2/3. alpha (q2): 0 and 1/2.
EXPECTED = {"overall": {"P@1": 1 / 3, "RR@10": 11 / 18},
            "zeta": {"P@1": 0.5, "RR@10": 2 / 3}, "alpha": {"P@1": 0.0, "RR@10": 0.5}}


class ToyQuery(NamedTuple):
    query_id: str
    text: str
    facet: str

    def default_text(self):
        return self.text


@contextmanager
def registered_toy(tmp_path):
    """The toy dataset and spec, registered as a dataset module would; removed again on exit."""
    folder = tmp_path / "toy-data"
    folder.mkdir()
    (folder / "docs.tsv").write_text("".join(f"{d}\t{t}\n" for d, t in DOCS.items()), encoding="utf-8")
    (folder / "queries.tsv").write_text("".join("\t".join(q) + "\n" for q in QUERIES), encoding="utf-8")
    (folder / "qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items() for d, r in docs.items()),
                                  encoding="utf-8")
    dataset = Dataset(TsvDocs(LocalDownload(folder / "docs.tsv"), doc_cls=GenericDoc, namespace=TOY, lang="en"),
                      TsvQueries(LocalDownload(folder / "queries.tsv"), query_cls=ToyQuery, namespace=TOY, lang="en"),
                      TrecQrels(LocalDownload(folder / "qrels"), {1: "relevant"}))
    assert TOY not in ir_datasets.registry._registered and benchmark_of(TOY) is None
    register(TOY, dataset)
    register_benchmark(TOY_SPEC)
    try:
        yield TOY_SPEC
    finally:
        unregister_benchmark(TOY)
        ir_datasets.registry._registered.pop(TOY, None)


@pytest.fixture
def toy(tmp_path):
    with registered_toy(tmp_path) as spec:
        yield spec


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- the toy benchmark, everywhere ------------------------------------------------------------------

def test_toy_benchmark_gives_the_default_measures(toy):
    assert benchmark_of(TOY) is toy and benchmarks()[-1] is toy
    assert default_measures(TOY) == (["P@1", "RR@10"], [])
    assert default_measures("not-a-suite-dataset") == (["nDCG@10", "RR@10", "R@100"], [])


def test_toy_benchmark_is_evaluated_per_subset_in_the_specs_order(toy, tmp_path, trec):
    result = evaluate(TOY, trec(tmp_path / "run.trec", RUN))
    assert result.measures == ["P@1", "RR@10"]
    assert result.breakdown_field == "facet"
    assert list(result.subsets) == ["zeta", "alpha"]  # the spec's order; sorted would put alpha first
    assert result.subsets["zeta"]["queries"] == 2 and result.subsets["alpha"]["queries"] == 1
    for measure, value in EXPECTED["overall"].items():
        assert result.overall[measure] == pytest.approx(value)
    for subset in ("zeta", "alpha"):
        for measure, value in EXPECTED[subset].items():
            assert result.subsets[subset][measure] == pytest.approx(value), (subset, measure)


def test_toy_benchmark_has_a_leaderboard_and_a_row_in_the_index(toy, tmp_path, trec):
    runs = tmp_path / "runs"
    run = trec(runs / TOY / "bm25.trec", RUN, tag="toy")
    write_metadata(run, dataset=TOY, runner="external", system="Toy system", tag="toy", parameters={},
                   command="make toy")
    out = tmp_path / "leaderboards"
    build(runs, out)

    record = json.loads((out / f"{TOY}.json").read_text(encoding="utf-8"))
    assert record["family"] == TOY and record["measures"] == ["P@1", "RR@10"] and record["primary"] == "P@1"
    assert record["breakdown_field"] == "facet" and record["subsets"] == {"zeta": 2, "alpha": 1}
    assert record["runs"][0]["overall"]["RR@10"] == pytest.approx(11 / 18, abs=1e-6)
    page = (out / f"{TOY}.md").read_text(encoding="utf-8")
    assert "| Run | zeta (2) | alpha (1) |" in page  # subsets in the spec's order on the page

    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    families = [b["family"] for b in index["benchmarks"]]
    assert families[-1] == TOY and families[:-1] == [spec.name for spec in benchmarks()[:-1]]
    entry = index["benchmarks"][-1]
    assert entry["title"] == "ToyBench"
    assert entry["description"] == "a toy benchmark registered by a test (P@1, MRR@10)"
    assert [board["dataset"] for board in entry["leaderboards"]] == [TOY]
    assert entry["leaderboards"][0]["top"] == {"name": "bm25", "system": "Toy system", "value": pytest.approx(1 / 3)}
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "title=\"a toy benchmark registered by a test (P@1, MRR@10)\">ToyBench</td>" in html
    assert f"<a href=\"{TOY}.html\">{TOY}</a>" in html
    assert f"| ToyBench | [{TOY}]({TOY}.md) | 1 | 0 | Toy system | P@1 0.3333 |" in (out / "README.md").read_text()


def test_toy_benchmark_is_in_the_evaluate_help(toy, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--help"])
    assert exit_info.value.code == 0
    text = _one_line(capsys.readouterr().out)
    assert "ToyBench: P@1, RR@10 (MRR@10);" in text
    parser_text = _one_line(build_parser()._subparsers._group_actions[0].choices["evaluate"].format_help())
    assert parser_text == text


def test_toy_benchmark_has_a_row_in_the_readme_table(toy):
    rows = doc_blocks.readme_benchmark_table().splitlines()
    assert rows[-1] == ("| `toybench` | [ToyBench](https://example.org/toybench) (Toy Venue 2031) | "
                        "a toy benchmark registered by a test | a toy negative | "
                        "[toybench](docs/benchmarks/toybench.md) |")
    listed = doc_blocks.readme_default_measures().splitlines()
    assert "- ToyBench: `P@1`, `RR@10` (MRR@10); subsets by `facet`: zeta, alpha" in listed


def test_the_toy_leaves_nothing_behind(tmp_path):
    with registered_toy(tmp_path):
        assert "ToyBench" in doc_blocks.evaluate_description()
    assert benchmark_of(TOY) is None and TOY not in ir_datasets.registry._registered
    assert "ToyBench" not in doc_blocks.evaluate_description()


# -- the spec ---------------------------------------------------------------------------------------

def test_benchmark_of_takes_the_longest_matching_name(toy):
    deeper = register_benchmark(Benchmark(name=f"{TOY}/deep", title="Deeper", summary="", datasets=(),
                                          paper=Paper(reference=""), measures=Measures(names=("P@5",), main="P@5")))
    try:
        assert benchmark_of(f"{TOY}/deep/x") is deeper and benchmark_of(f"{TOY}/deep") is deeper
        assert benchmark_of(f"{TOY}/shallow") is toy and benchmark_of(TOY) is toy
        assert benchmark_of(f"{TOY}x") is None  # a name is a whole path component, not a prefix
    finally:
        unregister_benchmark(f"{TOY}/deep")
    assert benchmark_of("comlq/2in").name == "comlq" and benchmark_of("boolquestions/nq/not").name == "boolquestions"
    assert benchmark_of("msmarco-passage/dev") is None


def test_register_benchmark_refuses_a_second_spec_of_the_same_name(toy):
    assert register_benchmark(toy) is toy  # the same spec again (a module imported twice) is fine
    with pytest.raises(ValueError, match="toybench"):
        register_benchmark(Benchmark(name=TOY, title="Other", summary="", datasets=(), paper=Paper(reference=""),
                                     measures=Measures(names=("P@1",), main="P@1")))


def test_ordered_subsets_follow_the_paper_then_sort_the_rest():
    comlq = benchmark_of("comlq")
    assert comlq.ordered_subsets(["pni", "zzz", "1p", "2in", "aaa", "1p"]) == ["1p", "2in", "pni", "aaa", "zzz"]
    assert TOY_SPEC.ordered_subsets(["alpha", "beta", "zeta"]) == ["zeta", "alpha", "beta"]


def test_paper_name():
    excluir = benchmark_of("excluir/test")
    assert excluir.paper_name("DeltaR@1") == "ΔR@1" and excluir.paper_name("R@1") == "R@1"
    assert benchmark_of("dureader-retrieval/dev").paper_name("Success@50") == "Recall@50"


def test_citation_comes_from_the_docs_yaml():
    citation = benchmark_of("comlq").citation()
    assert citation.startswith("@inproceedings{Xu2026ComLQ")
    assert benchmark_of("negplugins-demo").citation() is None  # its docs YAML has no BibTeX


# -- what is rendered from the specs -----------------------------------------------------------------

def test_venue_comes_from_the_paper_reference():
    assert doc_blocks.venue(benchmark_of("comlq")) == "AAAI 2026"
    assert doc_blocks.venue(benchmark_of("boolquestions")) == "Findings of EMNLP 2024"
    assert doc_blocks.venue(benchmark_of("negplugins-demo")) == ""  # "negplugins": no venue


def test_measures_text_names_the_papers_measures_and_what_a_hook_adds():
    assert doc_blocks.measures_text(benchmark_of("nevir/test")) == "PairedAcc (paired accuracy)"
    comlq = doc_blocks.measures_text(benchmark_of("comlq"))
    assert comlq.startswith("nDCG@10, RR@10 (MRR@10), R@100, plus LSNC@100 where the qrels hold explicit negatives")
    assert "`" not in comlq and "`LSNC@100`" in doc_blocks.measures_text(benchmark_of("comlq"), code=True)
    hooked = Benchmark(name="h", title="H", summary="", datasets=(), paper=Paper(reference=""),
                       measures=Measures(names=("P@1",), main="P@1",
                                         hook=lambda dataset_id, qrels: (["P@1", "P@2"], [])))
    assert doc_blocks.measures_text(hooked) == "P@1, and others where its data calls for them"


def test_evaluate_help_lists_every_benchmarks_measures():
    text = _one_line(doc_blocks.evaluate_description())
    for spec in benchmarks():
        assert f"{spec.title}: {doc_blocks.measures_text(spec)}" in text
    # the drift this replaced: BoolQuestions was listed as "RR@10 NegRecall@10"
    assert "BoolQuestions: PosRR@10 (MRR@10), NegRecall(conflict=2)@10 (NegRecall@10);" in text
    assert text.count("; ") >= len(benchmarks())


def test_readme_and_docs_blocks_are_rendered_from_the_specs():
    root = Path(__file__).resolve().parents[1]
    assert sorted(name for names in doc_blocks.BLOCK_FILES.values() for name in names) == sorted(
        doc_blocks.README_BLOCKS)  # every block has one home
    for path, names in doc_blocks.BLOCK_FILES.items():
        stale = doc_blocks.stale_blocks((root / path).read_text(encoding="utf-8"), names)
        assert not stale, (f"{path} differs from the benchmark specs; run 'python -m negplugins.doc_blocks "
                           f"--write {path}' or paste:\n\n" + "\n\n".join(stale.values()))


def test_readme_table_rows_say_what_the_specs_say():
    table = doc_blocks.readme_benchmark_table().splitlines()
    assert table[0] == "| dataset id | benchmark | what it tests | explicit negatives (-1) | details |"
    assert len(table) == 2 + len(benchmarks())
    assert table[2] == ("| `comlq`, `comlq/<structure>`, `comlq/negation` | [ComLQ](https://arxiv.org/abs/2511.12004) "
                        "(AAAI 2026) | complex logical queries over Wikipedia, 14 structures | a passage that violates "
                        "the query's negation (none in the release) | [comlq](docs/benchmarks/comlq.md) |")
    assert table[-1].startswith("| `negplugins-demo` | negplugins demo | ")  # no paper link, no venue


def test_readme_protocols_say_what_the_specs_say():
    table = doc_blocks.readme_protocols().splitlines()
    assert table[0] == "| benchmark | datasets run | protocol | documents per query |"
    assert len(table) == 2 + len(benchmarks())
    assert table[2].startswith("| ComLQ | `comlq` | the whole corpus ranked: ") and table[2].endswith(" | 100 |")
    nevir = next(line for line in table if line.startswith("| NevIR "))
    assert nevir.startswith("| NevIR | `nevir/test` | each query's own candidates") and nevir.endswith(" | 2 |")
    assert "| BoolQuestions | `boolquestions/msmarco`, `boolquestions/nq` | " in "\n".join(table)


def test_update_readme_rewrites_only_the_blocks(tmp_path, capsys):
    text = ("# Title\n\nbefore\n\n<!-- benchmarks: old note -->\n| OLD-TABLE |\n<!-- /benchmarks -->\n\nbetween\n\n"
            "<!-- default-measures: x -->\nOLD-LIST\n<!-- /default-measures -->\nafter\n\n"
            "<!-- protocols: y -->\nOLD-PROTOCOLS\n<!-- /protocols -->\nend\n")
    fresh = doc_blocks.update_blocks(text)
    assert fresh.startswith("# Title\n\nbefore\n\n<!-- benchmarks: generated from the benchmark specs")
    assert "\n<!-- /benchmarks -->\n\nbetween\n\n<!-- default-measures: generated" in fresh
    assert "\n<!-- /default-measures -->\nafter\n\n<!-- protocols: generated" in fresh
    assert fresh.endswith("\n<!-- /protocols -->\nend\n") and "OLD-" not in fresh
    assert doc_blocks.stale_blocks(fresh) == {}
    assert set(doc_blocks.stale_blocks(text)) == {"benchmarks", "default-measures", "protocols"}
    assert doc_blocks.update_blocks(fresh) == fresh
    with pytest.raises(ValueError, match="default-measures"):
        doc_blocks.update_blocks(text.replace("<!-- /default-measures -->", ""))

    path = tmp_path / "README.md"
    path.write_text(text, encoding="utf-8")
    assert doc_blocks.main(["--write", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == fresh
    assert doc_blocks.main(["--write", str(path)]) == 0 and "up to date" in capsys.readouterr().out
    assert doc_blocks.main(["--write", str(tmp_path / "missing.md")]) == 2
    assert "missing.md" in capsys.readouterr().err
    # a page holding one block gets only that block rewritten; a file holding none is an error
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n<!-- protocols: y -->\nOLD-PROTOCOLS\n<!-- /protocols -->\n", encoding="utf-8")
    assert doc_blocks.main(["--write", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == "# Page\n\n" + doc_blocks.readme_block("protocols") + "\n"
    page.write_text("# Page\n", encoding="utf-8")
    assert doc_blocks.main(["--write", str(page)]) == 2 and "no generated block" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == "# Page\n"


# -- a spec is validated when constructed, and names its main measure ------------------------------------------

def _spec(**changes):
    """A valid spec; ``changes`` replace its fields, or with ``group__field`` a field of one of its records."""
    groups = {"paper": {"reference": ""}, "measures": {"names": ("P@1",), "main": "P@1"}, "breakdown": {},
              "protocol": {}}
    fields = dict(name="v", title="V", summary="", datasets=("v", "v/a"))
    for key, value in changes.items():
        group, _, name = key.partition("__")
        if name:
            groups[group][name] = value
        else:
            fields[key] = value
    records = {"paper": Paper, "measures": Measures, "breakdown": Breakdown, "protocol": Protocol}
    return Benchmark(**fields, **{group: records[group](**values) for group, values in groups.items()})


@pytest.mark.parametrize("changes, message", [
    ({"measures__main": "P@5"}, "benchmark 'v': measures.main 'P@5' is not one of its measures (P@1)"),
    ({"measures__names": ()}, "benchmark 'v': measures.names is empty"),
    ({"measures__names": ["P@1"]}, "benchmark 'v': measures.names is ['P@1'], expected tuple[str, ...]"),
    ({"measures__names": ("P@1", "P@1")}, "benchmark 'v': measures.names names one twice"),
    ({"name": "V b"}, "benchmark 'V b': name is not a dataset id family"),
    ({"title": " "}, "benchmark 'v': title is empty"),
    ({"paper__url": None}, "benchmark 'v': paper.url is None, expected str"),
    ({"datasets": ("w/a",)}, "benchmark 'v': datasets or protocol.datasets name 'w/a', which is not v nor below it"),
    ({"measures__paper_names": {"RR@10": "MRR@10"}},
     "benchmark 'v': measures.paper_names names 'RR@10', not one of its measures"),
    ({"breakdown__subsets": ("a",)}, "benchmark 'v': breakdown.subsets without a breakdown.subset_field"),
    ({"breakdown__doc_field_without": ("generated",)},
     "benchmark 'v': breakdown.doc_field_without without a breakdown.doc_field"),
    ({"breakdown__negation_split": ("kind", "not")}, "benchmark 'v': breakdown.negation_split is ('kind', 'not'), "
                                                     "expected"),
    ({"measures__note": "plus `X`"}, "benchmark 'v': measures.note without a measures.hook"),
    ({"protocol__kind": "ranking"}, "benchmark 'v': protocol.kind is 'ranking', expected"),
    ({"protocol__depth": 0}, "benchmark 'v': protocol.depth 0 is not a positive integer"),
    ({"paper__reported": ({"system": "BM25"},)}, "benchmark 'v': paper.reported is ({'system': 'BM25'},), expected"),
    ({"paper__reported": (Reported("BM25", "P@1", 0.5, "w/a", source="Table 1, row BM25"),)},
     "benchmark 'v': reported number BM25 P@1 (Table 1, row BM25) is on w/a , not on a dataset or subset"),
    ({"breakdown__subset_field": "kind", "breakdown__subsets": ("a",),
      "paper__reported": (Reported("BM25", "P@1", 0.5, "v", "b"),)},
     "benchmark 'v': reported number BM25 P@1 () is on v b, not on a dataset or subset"),
])
def test_a_spec_with_a_bad_field_is_refused_naming_the_spec_and_the_field(changes, message):
    assert _spec().measures.main == "P@1"  # the valid spec the cases change one field of
    with pytest.raises(ValueError) as error:
        _spec(**changes)
    assert str(error.value).startswith(message)


def test_every_spec_names_its_main_measure_as_the_evaluation_names_it():
    from negplugins.evaluation.scoring import parse_measures
    from negplugins.mteb import naming

    for spec in benchmarks():
        assert spec.measures.main in spec.measures.names
        assert str(parse_measures([spec.measures.main])[0]) == spec.measures.main, spec.name
        assert naming.main_score(spec) == naming.score_key(spec.measures.main)
    # the main measures as the papers' headline tables have them (before the field, the first of the measures)
    assert {spec.name: spec.measures.main for spec in benchmarks()} == {
        "comlq": "nDCG@10", "excluir": "R@1", "nevir": "PairedAcc", "boolquestions": "PosRR@10",
        "dureader-retrieval": "RR@10", "negconstraint": "nDCG@10", "negplugins-demo": "nDCG@10"}


def test_main_measure_of_a_dataset():
    from ir_datasets_ext.spec import GENERIC_MAIN_MEASURE, GENERIC_MEASURES, main_measure

    assert main_measure("excluir/test") == "R@1" and main_measure("comlq/2in", ["RR@10", "nDCG@10"]) == "nDCG@10"
    assert main_measure("msmarco-passage/dev") == GENERIC_MAIN_MEASURE and GENERIC_MAIN_MEASURE in GENERIC_MEASURES
    assert main_measure("excluir/test", ["RR@10", "P@5"]) == "RR@10"  # a user's measures without it: their first


def test_a_leaderboard_ranks_by_the_main_measure_not_the_first(toy, tmp_path, trec):
    """The toy's main measure is its second: the leaderboard's primary column follows the field."""
    import dataclasses

    unregister_benchmark(TOY)
    register_benchmark(dataclasses.replace(toy, measures=dataclasses.replace(toy.measures, main="RR@10")))
    try:
        run = trec(tmp_path / "runs" / TOY / "bm25.trec", RUN, tag="toy")
        write_metadata(run, dataset=TOY, runner="external", system="Toy system", tag="toy", parameters={},
                       command="make toy")
        build(tmp_path / "runs", tmp_path / "out")
        record = json.loads((tmp_path / "out" / f"{TOY}.json").read_text(encoding="utf-8"))
        assert record["measures"] == ["P@1", "RR@10"] and record["primary"] == "RR@10"
        index = json.loads((tmp_path / "out" / "index.json").read_text(encoding="utf-8"))
        top = index["benchmarks"][-1]["leaderboards"][0]["top"]
        assert top["value"] == pytest.approx(11 / 18, abs=1e-6)  # its RR@10 (P@1 would be 1/3)
    finally:
        unregister_benchmark(TOY)
        register_benchmark(toy)
