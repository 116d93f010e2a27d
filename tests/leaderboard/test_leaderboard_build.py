"""Leaderboard build: determinism, check (stale output, invalid runs), escaping and untrusted contributions."""

import gzip
import json
import re

import pytest

from negplugins.cli import main
from negplugins.errors import UserError
from negplugins.io.sidecars import write_metadata
from negplugins.leaderboard import ContributionError, build, check, discover
from negplugins.leaderboard.contributions import safe_relative

RANKINGS = {
    "good": {"q01": ["d01", "d02"], "q02": ["d03", "d04"], "q05": ["d09", "d10"], "q06": ["d10", "d09"],
             "q16": ["d24", "d26", "d23"]},
    "bm25": {"q01": ["d02", "d01"], "q02": ["d04", "d03"], "q05": ["d10", "d09"], "q06": ["d10", "d09"],
             "q16": ["d23", "d24"]},
}


def contribute(runs, trec, name, ranking, system=None, dataset="negplugins-demo", gz=False):
    folder = runs / dataset
    path = trec(folder / f"{name}.trec", ranking)
    if gz:
        data = path.read_bytes()
        path.unlink()
        path = folder / f"{name}.trec.gz"
        with gzip.GzipFile(path, "wb", mtime=0) as f:
            f.write(data)
    write_metadata(path, dataset=dataset, runner="external", system=system or f"System {name}", tag="t",
                   parameters={}, command=f"make {name}")
    return path


@pytest.fixture
def runs(tmp_path, trec):
    root = tmp_path / "runs"
    contribute(root, trec, "bm25", RANKINGS["bm25"])
    contribute(root, trec, "good", RANKINGS["good"], gz=True)
    return root


def test_build_is_deterministic(runs, tmp_path):
    first = build(runs, tmp_path / "out1")
    build(runs, tmp_path / "out2")
    names = sorted(p.name for p in first)
    # a page per benchmark even without runs (the papers' numbers), the reproduction page, the folder marker
    # boolquestions/nq and comlq/negation too: the papers report numbers on them (the specs' reported tuples)
    pages = ["boolquestions-msmarco", "boolquestions-nq", "comlq", "comlq-negation", "dureader-retrieval-dev",
             "excluir-test", "negconstraint", "negplugins-demo", "nevir-test", "reproduction"]
    assert names == sorted(["README.md", "index.html", "index.json", "negplugins-output.json",
                            *(f"{p}.{x}" for p in pages for x in ("html", "json", "md"))])
    for name in names:
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name
    record = json.loads((tmp_path / "out1" / "negplugins-demo.json").read_text())
    assert [r["name"] for r in record["runs"]] == ["good", "bm25"]  # sorted by nDCG@10
    assert record["baseline"] == "bm25" and record["runs"][0]["vs_baseline"]["nDCG@10"]["n"] == 21
    index = json.loads((tmp_path / "out1" / "index.json").read_text())
    assert [b["family"] for b in index["benchmarks"]] == ["comlq", "excluir", "nevir", "boolquestions",
                                                          "dureader-retrieval", "negconstraint", "negplugins-demo"]
    html = (tmp_path / "out1" / "negplugins-demo.html").read_text()
    assert "<svg" in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "<script src" not in html and "<link" not in html


def test_check_detects_stale_and_invalid(runs, tmp_path, trec, capsys):
    out = tmp_path / "leaderboards"
    assert main(["leaderboard", "build", "--runs", str(runs), "--output", str(out)]) == 0
    assert check(runs, out) == []
    assert main(["leaderboard", "check", "--runs", str(runs), "--output", str(out)]) == 0
    (out / "negplugins-demo.md").write_text("edited\n")
    assert main(["leaderboard", "check", "--runs", str(runs), "--output", str(out)]) == 1
    assert "negplugins-demo.md: stale" in capsys.readouterr().err
    build(runs, out)
    (out / "extra.html").write_text("x")
    assert any("extra.html: not produced" in d for d in check(runs, out))
    (out / "extra.html").unlink()
    contribute(runs, trec, "new", RANKINGS["good"])
    assert any("negplugins-demo.json: stale" in d for d in check(runs, out))
    bad = runs / "negplugins-demo" / "broken.trec"
    bad.write_text("q01 Q0 d01 1 1.0 t\nq01 Q0 d01 2 0.5 t\n")
    write_metadata(bad, dataset="negplugins-demo", runner="external", system="x", tag="t", parameters={})
    assert main(["leaderboard", "check", "--runs", str(runs), "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert "broken.trec" in err and "duplicate" in err
    assert main(["leaderboard", "build", "--runs", str(runs), "--output", str(out)]) == 1


def test_metadata_is_escaped(tmp_path, trec):
    runs = tmp_path / "runs"
    contribute(runs, trec, "bm25", RANKINGS["bm25"])
    contribute(runs, trec, "evil", RANKINGS["good"], system="<script>alert('x')</script> | **bold** [l](http://x)")
    build(runs, tmp_path / "out")
    for name in ("negplugins-demo.html", "index.html", "negplugins-demo.md", "README.md"):
        text = (tmp_path / "out" / name).read_text()
        assert "<script>alert" not in text, name
        assert "&lt;script&gt;alert(" in text, name
    assert "\\| \\*\\*bold\\*\\*" in (tmp_path / "out" / "negplugins-demo.md").read_text()  # markup escaped


def test_unsafe_contributions_rejected(tmp_path, trec):
    runs = tmp_path / "runs"
    contribute(runs, trec, "bm25", RANKINGS["bm25"])
    outside = trec(tmp_path / "secret.trec", RANKINGS["good"])
    (runs / "negplugins-demo" / "link.trec").symlink_to(outside)
    write_metadata(runs / "negplugins-demo" / "link.trec", dataset="negplugins-demo", runner="external",
                   system="x", tag="t", parameters={})
    (runs / "negplugins-demo" / "linkdir").symlink_to(tmp_path)
    _, problems = discover(runs)
    assert any("link.trec: symlink pointing outside" in p for p in problems)
    assert any("symlinked folders are not accepted" in p for p in problems)
    with pytest.raises(ContributionError):
        build(runs, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_traversal_in_sidecar_and_names(tmp_path, trec):
    runs = tmp_path / "runs"
    path = contribute(runs, trec, "bm25", RANKINGS["bm25"])
    meta_path = path.with_name("bm25.meta.json")
    meta = json.loads(meta_path.read_text())
    meta["run"] = "../../etc/passwd"
    meta_path.write_text(json.dumps(meta))
    trec(runs / "negplugins-demo" / "-bad name.trec", RANKINGS["good"])
    trec(runs / "stray.trec", RANKINGS["good"])
    trec(runs / "no-such-dataset" / "x.trec", RANKINGS["good"])
    _, problems = discover(runs)
    text = "\n".join(problems)
    assert "must be the run's bare file name" in text
    assert "'-bad name' must match" in text
    assert "stray.trec: runs belong in a dataset folder" in text
    assert "no-such-dataset/x.trec: folder 'no-such-dataset' is not a registered dataset id" in text
    for bad in ("../x", "/etc/passwd", "a/../../b", "a\\b"):
        with pytest.raises(ContributionError):
            safe_relative(runs, bad)
    assert safe_relative(runs, "negplugins-demo/bm25.trec") == runs / "negplugins-demo" / "bm25.trec"


def test_sidecar_must_match(tmp_path, trec):
    runs = tmp_path / "runs"
    path = contribute(runs, trec, "bm25", RANKINGS["bm25"])
    path.write_text(path.read_text() + "q03 Q0 d06 1 1.0 t\n")  # changed after the sidecar was written
    (runs / "negplugins-demo" / "orphan.meta.json").write_text("{}")
    _, problems = discover(runs)
    assert any("run_sha256 does not match" in p for p in problems)
    assert any("orphan.meta.json: sidecar without a run" in p for p in problems)


def test_gzip_bomb_is_bounded(tmp_path, trec, monkeypatch):
    monkeypatch.setenv("NEGPLUGINS_MAX_RUN_BYTES", "200000")
    runs = tmp_path / "runs"
    folder = runs / "negplugins-demo"
    folder.mkdir(parents=True)
    bomb = folder / "bomb.trec.gz"
    with gzip.GzipFile(bomb, "wb", mtime=0) as f:
        for _ in range(100):
            f.write(b"q01 Q0 d01 1 1.0 t\n" * 1000)
    write_metadata(bomb, dataset="negplugins-demo", runner="external", system="bomb", tag="t", parameters={})
    with pytest.raises(ContributionError, match="gzip expansion exceeds the limit"):
        build(runs, tmp_path / "out")


def test_unavailable_dataset_named(tmp_path, trec, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(tmp_path / "empty-mirror"))
    (tmp_path / "empty-mirror").mkdir()
    runs = tmp_path / "runs"
    contribute(runs, trec, "x", {"0": ["10000"]}, dataset="comlq")
    with pytest.raises(UserError, match="comlq"):
        build(runs, tmp_path / "out")


def test_committed_leaderboards_are_current(monkeypatch, missing_real_data):
    """The committed leaderboards/ match a rebuild of runs/ (what CI runs as 'negplugins leaderboard check')."""
    from leaderboard_paths import PROJECT_ROOT, SHARED_DATA

    runs, out = PROJECT_ROOT / "runs", PROJECT_ROOT / "leaderboards"
    if not out.is_dir():
        pytest.skip("no committed leaderboards/")
    if SHARED_DATA.is_dir():
        monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(SHARED_DATA))
    try:
        differences = check(runs, out)
    except ContributionError:
        raise
    except UserError as error:
        missing_real_data(f"a dataset's data is not available here: {error}")
    assert differences == []


def _markdown_cells(text, measure):
    """{run name: the cell of ``measure``} from a leaderboard's Markdown table."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| # | System"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    column = header.index(measure)
    cells = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        row = [cell.strip() for cell in line.strip("|").split("|")]
        cells[row[2].removesuffix(" (baseline)")] = row[column]
    return cells


def _html_best(text, measure_index):
    """{run name: whether its cell of the measure_index-th measure is marked best} from the HTML table."""
    table = text[text.index('<table id="leaderboard"'):]
    table = table[:table.index("</table>")]
    marked = {}
    for name, row in re.findall(r'<tr data-run="([^"]+)">(.*?)</tr>', table):
        classes = re.findall(r'<td class="([^"]*)"', row)  # the position (#), then one per measure
        marked[name] = classes[1 + measure_index] == "num best"
    return marked


def test_best_is_the_smallest_for_lower_is_better_and_every_tied_run_but_not_an_all_tie(tmp_path, trec):
    """q01 only (d01 its positive, d02 its negative): a ranks [d01, d02], b [d01], c [d02, d01].

    By hand: NegRecall@10 (lower is better) a 1/20, b 0, c 1/20, so only b is best; RR@10 a 1/21 = b 1/21 > c,
    a tie for best: both a and b are marked; PairedAcc is 0 for all three (no pair ranked): a column where every
    run ties has no best, so none is marked (Markdown, HTML and the LaTeX of negplugins evaluate agree,
    tests/evaluation/test_evaluate_outputs.py).
    """
    root = tmp_path / "runs"
    for name, ranking in (("a", {"q01": ["d01", "d02"]}), ("b", {"q01": ["d01"]}), ("c", {"q01": ["d02", "d01"]})):
        contribute(root, trec, name, ranking)
    build(root, tmp_path / "out")
    record = json.loads((tmp_path / "out" / "negplugins-demo.json").read_text())
    assert record["lower_is_better"] == ["NegRecall@10"]
    markdown = (tmp_path / "out" / "negplugins-demo.md").read_text()
    assert _markdown_cells(markdown, "NegRecall@10 ↓") == {"a": "0.0500", "b": "**0.0000**", "c": "0.0500"}
    assert _markdown_cells(markdown, "RR@10") == {"a": "**0.0476**", "b": "**0.0476**", "c": "0.0238"}
    assert _markdown_cells(markdown, "PairedAcc") == {"a": "0.0000", "b": "0.0000", "c": "0.0000"}
    html = (tmp_path / "out" / "negplugins-demo.html").read_text()
    measures = record["measures"]
    assert _html_best(html, measures.index("NegRecall@10")) == {"a": False, "b": True, "c": False}
    assert _html_best(html, measures.index("RR@10")) == {"a": True, "b": True, "c": False}
    assert _html_best(html, measures.index("PairedAcc")) == {"a": False, "b": False, "c": False}


def test_values_that_show_the_same_are_both_marked_best():
    """A tie is judged on the value as shown (4 decimals): 0.58552 and 0.58548 both read 0.5855."""
    from negplugins.leaderboard.board import Leaderboard, RunEntry, best_runs

    record = Leaderboard("d", runs=[RunEntry(name, overall={"m": value}) for name, value in
                                    [("a", 0.58552), ("b", 0.58548), ("c", 0.5854), ("d", None)]])
    assert best_runs(record, "m") == {"a", "b"}
    record.lower_is_better = ["m"]
    assert best_runs(record, "m") == {"c"}
    # every run with a value shows the same (0.5855): no best; a single run: no best
    record.runs = record.runs[:2] + record.runs[3:]
    assert best_runs(record, "m") == set()
    record.runs = record.runs[:1]
    assert best_runs(record, "m") == set()


def test_missing_data_names_the_mirror_variable_once(tmp_path, trec, isolated_ir_datasets_home, monkeypatch):
    """A dataset that cannot be had: one error whose fix (IR_DATASETS_EXT_MIRROR) is said once, not twice."""
    from ir_datasets_ext.datasets import comlq
    from ir_datasets_ext.download import DownloadError

    def offline(*args, **kwargs):
        raise DownloadError(f"{comlq._RELEASE.url}: download of comlq/dataset.zip failed (no network); on a machine "
                            "without network set IR_DATASETS_EXT_MIRROR to a local mirror")

    monkeypatch.setattr(type(comlq._RELEASE), "path", offline)
    runs = tmp_path / "runs"
    contribute(runs, trec, "one", {"0": ["10000"]}, dataset="comlq")
    with pytest.raises(UserError) as error:
        build(runs, tmp_path / "out")
    assert str(error.value).count("IR_DATASETS_EXT_MIRROR") == 1 and "dataset comlq: its data is not available" in \
        str(error.value)
