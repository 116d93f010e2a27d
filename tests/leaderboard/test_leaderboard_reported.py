"""The papers' numbers on the leaderboards: "reported in the paper" rows, reproductions, the reproduction page,
pages of benchmarks without runs, and the document-origin and negation diagnostics.

The papers' numbers here are toy ones (paper_specs.py); gaps are checked against the run's own value minus
the toy number, and the ComLQ diagnostic against hand-computed values of a two-query run.
"""

import json
import math
import re

import pytest
from paper_specs import PAPER_URL, demo_paper, replaced_specs

from negplugins.cli import main
from negplugins.io.sidecars import write_metadata
from negplugins.leaderboard import build, discover

RANKINGS = {
    "bm25": {"q01": ["d02", "d01"], "q02": ["d04", "d03"], "q05": ["d10", "d09"], "q06": ["d10", "d09"],
             "q16": ["d23", "d24"]},
    "good": {"q01": ["d01", "d02"], "q02": ["d03", "d04"], "q05": ["d09", "d10"], "q06": ["d10", "d09"],
             "q16": ["d24", "d26", "d23"]},
    "authors": {"q01": ["d01", "d02"], "q02": ["d04", "d03"]},
}


def contribute(runs, trec, name, reproduces=None, authors_pipeline=False, dataset="negplugins-demo", ranking=None):
    path = trec(runs / dataset / f"{name}.trec", ranking or RANKINGS[name])
    write_metadata(path, dataset=dataset, runner="external", system=f"System {name}", tag="t", parameters={},
                   command=f"make {name}", reproduces=reproduces, authors_pipeline=authors_pipeline)
    return path


@pytest.fixture
def papers():
    with replaced_specs(demo_paper()):
        yield


@pytest.fixture
def built(papers, tmp_path, trec):
    runs = tmp_path / "runs"
    contribute(runs, trec, "bm25", reproduces="Paper BM25")
    contribute(runs, trec, "good")
    contribute(runs, trec, "authors", reproduces="Paper BM25", authors_pipeline=True)
    out = tmp_path / "out"
    build(runs, out)
    return runs, out


def load(out, name):
    return json.loads((out / name).read_text())


def test_reported_numbers_in_json(built):
    _, out = built
    record = load(out, "negplugins-demo.json")
    assert record["paper"] == {"reference": "Doe et al., 2099", "url": PAPER_URL, "title": "negplugins demo"}
    assert [(r["system"], r["measure"], r["value"], r["subset"], r["source"]) for r in record["reported"]][:3] == [
        ("Paper BM25", "nDCG@10", 0.5, None, "Table 2, row BM25"),
        ("Paper BM25", "RR@10", 0.45, None, "Table 2, row BM25"),
        ("Paper BM25", "P@5", 0.2, None, "Table 5, row BM25")]
    runs = {r["name"]: r for r in record["runs"]}
    assert [r["name"] for r in record["runs"]] == ["good", "bm25", "authors"]  # the paper's numbers are never ranked
    assert runs["bm25"]["reproduces"] == "Paper BM25" and runs["authors"]["authors_pipeline"] is True
    gaps = {(g["run"], g["measure"], g["subset"]): g for g in record["reproductions"]}
    bm25 = gaps[("bm25", "nDCG@10", None)]
    assert bm25["paper"] == 0.5 and bm25["value"] == runs["bm25"]["overall"]["nDCG@10"]
    assert bm25["gap"] == pytest.approx(runs["bm25"]["overall"]["nDCG@10"] - 0.5, abs=1e-6)  # run minus paper
    assert gaps[("bm25", "nDCG@10", "not")]["gap"] == pytest.approx(runs["bm25"]["subsets"]["not"]["nDCG@10"] - 0.7,
                                                                    abs=1e-6)
    assert gaps[("bm25", "P@5", None)]["value"] is None and gaps[("bm25", "P@5", None)]["gap"] is None  # not scored
    assert gaps[("authors", "RR@10", None)]["authors_pipeline"] is True
    assert not any(g["run"] == "good" for g in record["reproductions"])


def test_reported_rows_in_html(built):
    _, out = built
    page = (out / "negplugins-demo.html").read_text()
    table = page[page.index("<table id=\"leaderboard\""):]
    table = table[:table.index("</table>")]
    runs_body, reported_body = table.split("<tbody class=\"reported\">")
    assert runs_body.count("<tr data-run=") == 3 and "class=\"reported" not in runs_body
    rows = re.findall(r"<tr class=\"reported\" data-system=\"([^\"]*)\">(.*?)</tr>", reported_body)
    assert [system for system, _ in rows] == ["Paper BM25", "&lt;b&gt;Dense&lt;/b&gt;"]  # escaped
    for _, row in rows:
        assert row.startswith("<td class=\"num rank\"></td>")  # no rank number
        assert "†" not in row and "best" not in row and "data-value" not in row  # never tested, highlighted, sorted
        assert "reported in the paper" in row
    assert f"<a href=\"{PAPER_URL}\">Doe et al., 2099</a>" in reported_body
    assert "title=\"Table 2, row BM25 (rounded)\">0.5</td>" in rows[0][1]
    assert "class=\"num paper-only\">P@5</th>" in table  # a measure only the paper reports: its own column
    assert "id=\"source-1\"><b>Paper BM25</b>: nDCG@10 0.5: Table 2, row BM25 (rounded)" in page  # the footnote
    record = json.loads((out / "negplugins-demo.json").read_text())
    gap = next(g["gap"] for g in record["reproductions"] if g["run"] == "bm25" and g["measure"] == "nDCG@10")
    assert "Runs beside the paper's systems they reproduce" in page
    assert f"<td class=\"num gap\">{gap:+.4f}</td>" in page
    assert "<b>Dense</b>" not in page
    # per-subset tables carry the per-subset numbers as reported rows too
    assert re.search(r"<tbody class=\"reported\">\n<tr class=\"reported\" data-system=\"Paper BM25\">.*?"
                     r"title=\"Table 3, row BM25, column exclusion\">0.4</td>", page)


def test_reported_rows_in_markdown(built):
    _, out = built
    text = (out / "negplugins-demo.md").read_text()
    assert f"### Reported in the paper ([Doe et al., 2099]({PAPER_URL}))" in text
    assert "| System | nDCG@10 | RR@10 | P@5 | Source |" in text  # the measures the paper reports
    assert "| *Paper BM25* | 0.5 | 0.45 | 0.2 | Table 2, row BM25 (rounded); Table 2, row BM25; Table 5, row BM25 |" \
        in text
    assert "| *&lt;b&gt;Dense&lt;/b&gt;* | 0.62 |" in text
    assert "| *Paper BM25* (reported in the paper) | 0.4 | – | – | – | 0.7 |" in text  # nDCG@10 per kind
    assert "| bm25 | Paper BM25 | nDCG@10 | all | 0.5 |" in text


def test_pages_of_benchmarks_without_runs(built):
    _, out = built
    record = load(out, "excluir-test.json")
    assert record["runs"] == [] and [(r["system"], r["measure"], r["value"]) for r in record["reported"]] == [
        ("BM25", "R@1", 0.125)]
    page = (out / "excluir-test.html").read_text()
    assert "No contributed run yet" in page and "data-system=\"BM25\"" in page
    for name in ("comlq", "nevir-test", "boolquestions-msmarco", "dureader-retrieval-dev"):
        assert (out / f"{name}.html").is_file() and load(out, f"{name}.json")["runs"] == []  # no runs, no data read
    index = load(out, "index.json")
    boards = {b["dataset"]: b for f in index["benchmarks"] for b in f["leaderboards"]}
    assert boards["excluir/test"] == {"dataset": "excluir/test", "slug": "excluir-test", "runs": 0, "primary": "R@1",
                                      "reported": 1, "top": None}
    assert index["reproduction"] == "reproduction.html"
    assert "href=\"reproduction.html\"" in (out / "index.html").read_text()
    assert "[reproduction.md](reproduction.md)" in (out / "README.md").read_text()


def test_reproduction_page(built):
    _, out = built
    data = load(out, "reproduction.json")
    demo = next(f for f in data["benchmarks"] if f["family"] == "negplugins-demo")
    row = next(r for r in demo["rows"] if r["system"] == "Paper BM25" and r["measure"] == "nDCG@10" and not r["subset"])
    record = load(out, "negplugins-demo.json")
    value = {r["name"]: r["overall"]["nDCG@10"] for r in record["runs"]}
    assert row["paper"] == 0.5 and [e["run"] for e in row["suite"]] == ["bm25"]
    assert [e["run"] for e in row["authors"]] == ["authors"]
    assert row["authors"][0]["gap"] == pytest.approx(value["authors"] - 0.5, abs=1e-6)
    assert demo["notes"] == {"Paper BM25": "The paper's BM25 uses k1 1.2; the run uses k1 0.9."}
    assert [r["run"] for r in demo["other_runs"]] == ["good"]
    dense = next(r for r in demo["rows"] if r["system"] == "<b>Dense</b>")
    assert dense["suite"] == [] and dense["authors"] == []
    # subsets only for the reproduced system, after the whole-dataset rows
    assert [r["subset"] for r in demo["rows"]] == [None, None, None, None, "exclusion", "not"]
    excluir = next(f for f in data["benchmarks"] if f["family"] == "excluir")
    assert [(r["system"], r["paper"], r["suite"]) for r in excluir["rows"]] == [("BM25", 0.125, [])]
    html = (out / "reproduction.html").read_text()
    assert "The paper&#x27;s BM25 uses k1 1.2" in html and "&lt;b&gt;Dense&lt;/b&gt;" in html
    assert f"<a href=\"{PAPER_URL}\">Doe et al., 2099</a>" in html
    md = (out / "reproduction.md").read_text()
    assert f"## negplugins demo ([Doe et al., 2099]({PAPER_URL}))" in md
    assert f"| [negplugins-demo](negplugins-demo.md) | Paper BM25 | nDCG@10 | all | 0.5 | bm25 {value['bm25']:.4f} " \
           f"({value['bm25'] - 0.5:+.4f}) | authors {value['authors']:.4f} ({value['authors'] - 0.5:+.4f}) |" in md
    assert "- **Paper BM25**: The paper's BM25 uses k1 1.2; the run uses k1 0.9." in md


def test_rebuild_with_papers_is_byte_identical(built, tmp_path):
    runs, out = built
    again = tmp_path / "again"
    build(runs, again)
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(p.name for p in again.iterdir())
    for name in names:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


def test_reproduces_is_checked(papers, tmp_path, trec):
    runs = tmp_path / "runs"
    contribute(runs, trec, "bm25", reproduces="BM25")  # the paper calls it "Paper BM25"
    path = contribute(runs, trec, "good")
    meta_path = path.with_name("good.meta.json")
    meta = json.loads(meta_path.read_text())
    meta.update(reproduces=5, authors_pipeline="yes")
    meta_path.write_text(json.dumps(meta))
    _, problems = discover(runs)
    text = "\n".join(problems)
    assert "bm25.trec: sidecar field reproduces 'BM25' is not a system the paper reports on negplugins-demo " \
           "(reported: Paper BM25, <b>Dense</b>)" in text
    assert "field reproduces is 5, expected the paper's name of a system" in text
    assert "field authors_pipeline is \"yes\", expected true or false" in text


def test_reproduces_without_recorded_numbers(tmp_path, trec):
    with replaced_specs({"negplugins-demo": {"paper": {"reported": ()}}}):
        runs = tmp_path / "runs"
        contribute(runs, trec, "bm25", reproduces="BM25")
        _, problems = discover(runs)
    assert problems == ["negplugins-demo/bm25.trec: sidecar field reproduces 'BM25': the spec of negplugins-demo "
                        "records no number of its paper on this dataset, so there is nothing to reproduce"]


def test_a_number_on_an_unregistered_dataset_is_refused(tmp_path, trec):
    from ir_datasets_ext.spec import Reported
    from negplugins.errors import UserError

    with replaced_specs({"negplugins-demo": {"paper": {"reported": (Reported("X", "nDCG@10", 0.1,
                                                                          "negplugins-demo/nope"),)}}}):
        runs = tmp_path / "runs"
        contribute(runs, trec, "bm25")
        with pytest.raises(UserError, match="the spec of negplugins-demo records a number of its paper on "
                                            "'negplugins-demo/nope', which is not a registered dataset id"):
            build(runs, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_sidecar_command_writes_reproduces(papers, tmp_path, trec, capsys):
    run = trec(tmp_path / "runs" / "negplugins-demo" / "mine.trec", RANKINGS["good"])
    base = ["leaderboard", "sidecar", str(run), "--dataset", "negplugins-demo", "--system", "mine", "--run-tag", "t"]
    assert main([*base, "--reproduces", "Nope"]) == 2
    assert "--reproduces 'Nope' is not a system the paper reports on negplugins-demo" in capsys.readouterr().err
    assert main([*base, "--authors-pipeline"]) == 2
    assert "authors_pipeline is true without reproduces" in capsys.readouterr().err
    assert main([*base, "--reproduces", "Paper BM25", "--authors-pipeline"]) == 0
    meta = json.loads(run.with_name("mine.meta.json").read_text())
    assert meta["reproduces"] == "Paper BM25" and meta["authors_pipeline"] is True


def test_only_http_papers_are_linked(tmp_path, trec):
    with replaced_specs(demo_paper(url="javascript:alert(1)")):
        runs = tmp_path / "runs"
        contribute(runs, trec, "bm25")
        build(runs, tmp_path / "out")
    for name in ("negplugins-demo.html", "reproduction.html", "negplugins-demo.md", "reproduction.md"):
        assert "javascript:" not in (tmp_path / "out" / name).read_text(), name


def test_comlq_origin_and_negation_on_the_leaderboard(comlq_mirror, tmp_path, trec):
    """A two-query ComLQ run, by hand: query 0 (1p) judges 10000 only, query 148 (2in) 10148 only (relevance 2)."""
    runs = tmp_path / "runs"
    ranking = {"0": ["17975", "10000", "13975"],  # generated, the evidence, a distractor
               "148": ["10148", "17976"]}  # the evidence, generated
    path = trec(runs / "comlq" / "hand.trec", ranking)
    write_metadata(path, dataset="comlq", runner="external", system="hand", tag="t", parameters={})
    build(runs, tmp_path / "out")
    record = load(tmp_path / "out", "comlq.json")
    assert record["doc_field"] == {"field": "origin", "k": 10, "values": ["distractor", "evidence", "generated"],
                                   "without": ["generated"],
                                   "documents": {"distractor": 4000, "evidence": 3975, "generated": 3276}}
    (run,) = record["runs"]
    d = run["doc_field"]
    # query 0: 1/3 each; query 148: evidence 1/2, generated 1/2
    assert d["queries"] == 2
    assert d["shares"] == pytest.approx({"distractor": 1 / 6, "evidence": 5 / 12, "generated": 5 / 12}, abs=1e-6)
    assert d["subsets"]["2in"] == pytest.approx({"distractor": 0.0, "evidence": 0.5, "generated": 0.5})
    assert d["subsets"]["2p"] == {"distractor": None, "evidence": None, "generated": None}  # no query with results
    # nDCG@10 over the 2909 judged queries: query 0 has its one relevant passage at rank 2 (1/log2(3)), query 148
    # at rank 1; without the generated passages both are at rank 1
    assert run["overall"]["nDCG@10"] == pytest.approx((1 / math.log2(3) + 1) / 2909, abs=1e-6)
    assert d["without"]["generated"]["overall"]["nDCG@10"] == pytest.approx(2 / 2909, abs=1e-6)
    assert d["without"]["generated"]["subsets"]["1p"]["nDCG@10"] == pytest.approx(1 / 176, abs=1e-6)
    assert record["negation_split"] == {"field": "has_negation", "negation_values": ["True"],
                                        "queries": {"negation": 984, "no negation": 1925}}
    assert run["negation"]["negation"]["nDCG@10"] == pytest.approx(1 / 984, abs=1e-6)
    page = (tmp_path / "out" / "comlq.html").read_text()
    assert "Top 10 by document origin" in page and "nDCG@10 without generated" in page
    assert "<svg class=\"stack\"" in page
    assert "Negation vs no negation" in page
    text = (tmp_path / "out" / "comlq.md").read_text()
    assert "| hand | 0.1667 | 0.4167 | 0.4167 |" in text
