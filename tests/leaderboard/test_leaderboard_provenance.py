"""Leaderboards as Pyserini's 2CR pages: links to the paper, the data, each run and sidecar; provenance without
local paths; the suite's version and the runs' commits; wins, losses and ties per query; readable charts."""

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

import negplugins
from negplugins.io.sidecars import COMMIT_KEY, portable_path, portable_record, source_commit, write_metadata
from negplugins.leaderboard import build
from negplugins.leaderboard.build import portable_text

DEMO = "negplugins-demo"
RANKINGS = {
    "good": {"q01": ["d01", "d02"], "q02": ["d03", "d04"], "q05": ["d09", "d10"], "q06": ["d10", "d09"],
             "q16": ["d24", "d26", "d23"]},
    "bm25": {"q01": ["d02", "d01"], "q02": ["d04", "d03"], "q05": ["d10", "d09"], "q06": ["d10", "d09"],
             "q16": ["d23", "d24"]},
}
LOCAL = "/home/alice/projects/neg"  # a folder of the machine an old sidecar was written on


@pytest.fixture
def built(tmp_path, trec):
    """Two runs; the sidecar of ``good`` written by an older suite: absolute paths, a commit, a first stage."""
    runs = tmp_path / "runs"
    for name, ranking in RANKINGS.items():
        path = trec(runs / DEMO / f"{name}.trec", ranking)
        write_metadata(path, dataset=DEMO, runner="external", system=f"System {name}", tag="t",
                       parameters={"k1": 0.9} if name == "bm25" else {}, command=f"make {name}")
    sidecar = runs / DEMO / "good.meta.json"
    meta = json.loads(sidecar.read_text())
    meta.update({
        "command": f"negplugins search rerank {DEMO} --run {LOCAL}/runs/{DEMO}/bm25.trec --model "
                   f"{LOCAL}/.venv/lib/python3.11/site-packages/some_model/model --output={LOCAL}/runs/{DEMO}/good.trec",
        "index": {"path": f"{LOCAL}/indexes/lucene/{DEMO}", "manifest": {}},
        "first_stage": {"run": f"runs/{DEMO}/bm25.trec", "sha256": "0" * 64},
        "model": {"id": f"{LOCAL}/models/m", "revision": None, "sha256": "a" * 64,
                  "path": f"{LOCAL}/.venv/lib/python3.11/site-packages/some_model/model"},
        "parameters": {"top_k": 100, "cache": "/tmp/cache/x"},
        "versions": {"negplugins": "0.0.9", "pyserini": "1.6.0", COMMIT_KEY: "f" * 40},
    })
    sidecar.write_text(json.dumps(meta, indent=2))
    out = tmp_path / "leaderboards"
    build(runs, out)
    return runs, out


def test_runs_and_sidecars_are_linked_relative_to_the_page(built):
    runs, out = built
    html = (out / f"{DEMO}.html").read_text()
    markdown = (out / f"{DEMO}.md").read_text()
    hrefs = re.findall(r'href="(\.\./runs/[^"]+)"', html)
    assert sorted(set(hrefs)) == [f"../runs/{DEMO}/bm25.meta.json", f"../runs/{DEMO}/bm25.trec",
                                  f"../runs/{DEMO}/good.meta.json", f"../runs/{DEMO}/good.trec"]
    for href in hrefs:  # every link reaches the file from the page's folder
        assert (out / unquote(href)).resolve().is_file(), href
    assert f"[run file](../runs/{DEMO}/good.trec) · [sidecar](../runs/{DEMO}/good.meta.json)" in markdown
    # the first stage named by the sidecar is a contributed run: linked too
    assert f'<a href="../runs/{DEMO}/bm25.trec"><code>runs/{DEMO}/bm25.trec</code></a>' in html
    record = json.loads((out / f"{DEMO}.json").read_text())
    good = next(r for r in record["runs"] if r["name"] == "good")
    assert good["links"] == {"run": f"../runs/{DEMO}/good.trec", "sidecar": f"../runs/{DEMO}/good.meta.json",
                             "first_stage": f"../runs/{DEMO}/bm25.trec"}
    assert record["runs_folder"] == "../runs"


def test_paper_and_data_are_linked():
    from negplugins.leaderboard.board import Leaderboard
    from negplugins.leaderboard.render import html_page, markdown

    record = Leaderboard("comlq", measures=["nDCG@10"], primary="nDCG@10",
                         paper={"reference": "Xu et al., AAAI 2026", "url": "https://arxiv.org/abs/2511.12004",
                                "title": "ComLQ"},
                         data_url="https://github.com/xgl-git/ComLQR-main", built_with={"negplugins": "0.1.0"})
    html = html_page(record)
    assert 'Paper: <a href="https://arxiv.org/abs/2511.12004">Xu et al., AAAI 2026</a> (ComLQ)' in html
    assert 'Data: <a href="https://github.com/xgl-git/ComLQR-main">' in html
    assert "Data: [https://github.com/xgl-git/ComLQR-main](https://github.com/xgl-git/ComLQR-main)" in markdown(record)


def test_no_local_path_is_published(built):
    _, out = built
    for page in out.iterdir():
        text = page.read_text()
        assert LOCAL not in text and "/tmp/cache" not in text, page.name
    record = json.loads((out / f"{DEMO}.json").read_text())
    good = next(r for r in record["runs"] if r["name"] == "good")
    assert good["command"] == (f"negplugins search rerank {DEMO} --run runs/{DEMO}/bm25.trec --model "
                               f"<site-packages>/some_model/model --output=runs/{DEMO}/good.trec")
    assert good["index"] == f"indexes/lucene/{DEMO}"
    assert good["model"] == ".../m"  # a model given as a folder outside the project
    assert good["parameters"] == {"top_k": 100, "cache": ".../x"}


def test_versions_commit_parameters_and_first_stage_are_kept(built):
    _, out = built
    record = json.loads((out / f"{DEMO}.json").read_text())
    assert record["built_with"] == {"negplugins": negplugins.__version__}
    runs = {r["name"]: r for r in record["runs"]}
    good, bm25 = runs["good"], runs["bm25"]
    assert good["versions"]["negplugins"] == "0.0.9" and good["commit"] == "f" * 40
    assert good["first_stage"] == {"run": f"runs/{DEMO}/bm25.trec", "sha256": "0" * 64}
    assert good["model_sha256"] == "a" * 64
    assert bm25["parameters"] == {"k1": 0.9} and bm25["first_stage"] is None
    # the commit is the one the run's sidecar records, not the build's checkout
    assert bm25["commit"] == bm25["versions"].get(COMMIT_KEY)
    html = (out / f"{DEMO}.html").read_text()
    assert f"negplugins 0.0.9 (commit {'f' * 40})" in html
    assert f"Built with negplugins {negplugins.__version__}" in html


def test_wins_losses_ties_against_the_baseline(built):
    """By hand, RR@10 over the demo's 21 queries: good finds the positive first on q01, q02, q05, q06 and q16;
    bm25 puts the negative first on q01, q02, q05 and q16 (1/2 each) and ranks q06's positive d10 first (1).
    good wins 4, loses none, and ties on q06 and the 16 queries neither run retrieves for (0 = 0)."""
    _, out = built
    record = json.loads((out / f"{DEMO}.json").read_text())
    assert record["baseline"] == "bm25"
    good = next(r for r in record["runs"] if r["name"] == "good")
    test = good["vs_baseline"]["RR@10"]
    assert (test["wins"], test["losses"], test["ties"], test["n"]) == (4, 0, 17, 21)
    for measure, values in good["vs_baseline"].items():
        assert values["wins"] + values["losses"] + values["ties"] == values["n"], measure
    markdown = (out / f"{DEMO}.md").read_text()
    table = markdown[markdown.index("## Per query against the baseline bm25"):]
    header = next(line for line in table.splitlines() if line.startswith("| Run |"))
    row = next(line for line in table.splitlines() if line.startswith("| good |"))
    cells = dict(zip(header.strip("|").split("|")[1:], row.strip("|").split("|")[1:]))
    assert cells[" RR@10 "].strip() == "4 / 0 / 17"
    assert '<table id="per-query">' in (out / f"{DEMO}.html").read_text()


def test_wins_losses_ties_follow_lower_is_better():
    from negplugins.evaluation.significance import wins_losses_ties

    base = {"q1": 0.5, "q2": 0.5, "q3": 0.0, "q4": 1.0}
    run = {"q1": 0.0, "q2": 0.5, "q3": 1.0, "q5": 1.0}  # q4 and q5 are in one run only: not compared
    assert wins_losses_ties(base, run) == {"wins": 1, "losses": 1, "ties": 1, "n": 3}
    assert wins_losses_ties(base, run, lower_is_better=True) == {"wins": 1, "losses": 1, "ties": 1, "n": 3}
    assert wins_losses_ties({"q1": 0.2}, {"q1": 0.1}, lower_is_better=True)["wins"] == 1


def test_wins_losses_ties_count_a_nevir_pair_once(built):
    """PairedAcc gives both queries of a NevIR pair the pair's value: the demo's 4 pairs (q05-q06, q07-q08, q09-q10,
    q11-q12) are counted once each. good ranks q05's and q06's positives first, bm25 q06's only: one pair won."""
    from negplugins.evaluation.significance import wins_losses_ties

    _, out = built
    record = json.loads((out / f"{DEMO}.json").read_text())
    good = next(r for r in record["runs"] if r["name"] == "good")
    test = good["vs_baseline"]["PairedAcc"]
    assert (test["wins"], test["losses"], test["ties"], test["n"]) == (1, 0, 3, 4)
    markdown = (out / f"{DEMO}.md").read_text()
    assert "PairedAcc counts each NevIR pair once" in markdown
    assert "PairedAcc: per NevIR pair, each pair once" in record["significance"]
    assert '"1 pairs better than bm25, 0 worse, 3 equal, of 4"' in (out / f"{DEMO}.html").read_text()
    units = {"a1": "a1", "a2": "a1"}
    assert wins_losses_ties({"a1": 0.0, "a2": 0.0, "b": 1.0}, {"a1": 1.0, "a2": 1.0, "b": 0.0}, units=units) == \
        {"wins": 1, "losses": 1, "ties": 0, "n": 2}


def _chart(subsets, runs):
    from negplugins.rendering.charts import grouped_bar_chart

    return grouped_bar_chart("m per kind", subsets, [(f"r{i}", [0.5] * len(subsets)) for i in range(runs)])


def _label_boxes(svg):
    """(left, right) of each axis label, as the browser lays it out: 7 px a character, anchored in the middle."""
    boxes = []
    for x, text in re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="11" text-anchor="middle">([^<]+)</text>',
                              svg):
        half = len(text) * 7 / 2
        boxes.append((float(x) - half, float(x) + half))
    return boxes


def test_axis_labels_do_not_overlap():
    # ComLQ: 14 short structure names under 4 runs fit upright, side by side
    comlq = _chart(["1p", "2p", "3p", "2i", "3i", "pi", "ip", "2u", "up", "2in", "3in", "inp", "pin", "pni"], 4)
    boxes = _label_boxes(comlq)
    assert len(boxes) == 14 and "rotate(" not in comlq
    assert all(left_next > right for (_, right), (left_next, _) in zip(boxes, boxes[1:]))
    # the demo's kinds under 2 runs would run into each other: every label is turned 45 degrees, with room below
    demo = _chart(["exclusion", "negation-pair", "and", "or", "not"], 2)
    assert demo.count('transform="rotate(-45 ') == 5 and not _label_boxes(demo)
    height = int(re.search(r'height="(\d+)"', demo).group(1))
    assert height >= 10 + 160 + len("negation-pair") * 7 * 0.7  # the longest label fits under the axis


def test_dates_do_not_wrap(built):
    _, out = built
    html = (out / f"{DEMO}.html").read_text()
    assert re.search(r"td\.date, th\.date \{ white-space: nowrap; \}", html)
    assert len(re.findall(r'<td class="date">\d{4}-\d{2}-\d{2}</td>', html)) == 2


def test_sidecars_are_written_with_portable_paths(tmp_path, trec):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)  # a git work tree: the project's folder
    run = trec(project / "runs" / DEMO / "x.trec", {"q01": ["d01"]})
    write_metadata(run, dataset=DEMO, runner="bm25", system="s", tag="t", parameters={},
                   index={"path": str(project / "indexes" / "lucene" / DEMO), "manifest": {}},
                   command=f"negplugins search bm25 {DEMO} --output {run}")
    meta = json.loads((project / "runs" / DEMO / "x.meta.json").read_text())
    assert meta["index"]["path"] == f"indexes/lucene/{DEMO}"
    assert meta["command"] == f"negplugins search bm25 {DEMO} --output runs/{DEMO}/x.trec"
    assert meta["run"] == "x.trec"
    commit = meta["versions"].get(COMMIT_KEY)
    assert commit is None or re.fullmatch(r"[0-9a-f]{40}(-dirty)?", commit)
    assert commit == source_commit()


def test_portable_paths():
    home = Path.home()
    assert portable_path(str(home / "models" / "x"), root="/nonexistent-project") == "~/models/x"
    assert portable_path("/opt/data/x", root="/nonexistent-project") == "/opt/data/x"  # nothing to shorten it to
    assert portable_path("relative/path") == "relative/path"
    record = portable_record({"command": "cmd --a /srv/p/runs/x https://example.org/a/b", "n": 3}, root="/srv/p")
    assert record == {"command": "cmd --a runs/x https://example.org/a/b", "n": 3}
    # what the leaderboards show of a path the sidecar left absolute, decided on the text alone
    assert portable_text({"p": ["/x/.venv/lib/python3.11/site-packages/m/model", "/a/b/work/run.trec", "/a/b/c"]}) == \
        {"p": ["<site-packages>/m/model", "work/run.trec", ".../c"]}
    assert portable_text("A/B test; k1=0.9") == "A/B test; k1=0.9"
