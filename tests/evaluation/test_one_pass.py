"""One pass: an evaluation loads its dataset once, builds its qrels once, parses its measures once and opens (and
validates) each run file once, whatever it is asked for; the run read into columns scores as the run read into a
dict does, and validates with the same report.

Counts are taken with wrappers around the functions that do the work (``datasets.load``, ``datasets.qrels_dict``,
the evaluation's ``parse_measures``, ``os.open`` of a run file). Before this change, the same command
(``evaluate`` with ``--by-doc-field`` and ``--without-docs``) loaded the dataset 4 times, parsed the measures twice
and opened each run twice.
"""

import collections
import gzip
import json
import os
import random
import warnings
from pathlib import Path

import dataset_fixtures as fx
import ir_measures
import numpy as np
import pytest

import negplugins.datasets as datasets
from negplugins.cli import main
from negplugins.evaluation import scoring, validation
from negplugins.io.run_columns import RunColumns, parse_columns, read_run_bytes
from negplugins.measures import parse_measures

REPO = Path(__file__).resolve().parents[2]
DEMO_RUN = REPO / "runs" / "negplugins-demo" / "bm25.trec"
# boolquestions/nq (fixture): queries nq1 nq2 nq3, passages 101 to 104 titled "Title <id>"
NQ_RUNS = ({"nq1": ["102", "101", "104"], "nq2": ["104", "103", "101"], "nq3": ["102", "104", "103"]},
           {"nq1": ["101", "104"], "nq2": ["103", "101", "104"], "nq3": ["103", "102"]})


def _count(monkeypatch, runs):
    """Counters of dataset loads, qrels built, measure parses and opens of the ``runs`` files."""
    calls = collections.Counter()

    def counting(name, original):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(datasets, "load", counting("load", datasets.load))
    monkeypatch.setattr(datasets, "qrels_dict", counting("qrels", datasets.qrels_dict))
    monkeypatch.setattr(scoring, "parse_measures", counting("parse", scoring.parse_measures))
    watched = {os.path.realpath(r) for r in runs}
    original_open = os.open

    def counting_open(path, *args, **kwargs):
        if isinstance(path, (str, os.PathLike)) and os.path.realpath(path) in watched:
            calls[f"open {Path(path).name}"] += 1
        return original_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    return calls


@pytest.mark.parametrize("extra", [
    [],
    ["--by-doc-field", "title", "--without-docs", "title=Title 102"],
    ["--baseline", "a.trec", "--by-doc-field", "title", "--format", "csv"],
    ["--baseline", "a.trec", "--without-docs", "title=Title 102", "--by-doc-field-k", "2", "--by-doc-field", "title",
     "--json", "--per-query", "--ties", "one-ranking"],
])
def test_evaluate_reads_each_input_once(mirror, tmp_path, trec, monkeypatch, capsys, extra):
    fx.write_boolquestions(mirror)
    runs = [str(trec(tmp_path / name, ranking)) for name, ranking in zip(("a.trec", "b.trec"), NQ_RUNS)]
    if "--baseline" not in extra:
        runs = runs[:1]
    calls = _count(monkeypatch, runs)
    assert main(["evaluate", "boolquestions/nq", *runs, "-m", "PosRR@10", "nDCG@10", "--permutations", "50",
                 *extra]) == 0
    assert "PosRR@10" in capsys.readouterr().out
    assert dict(calls) == {"load": 1, "qrels": 1, "parse": 1, **{f"open {Path(r).name}": 1 for r in runs}}


def test_default_measures_are_parsed_once_and_validate_opens_once(mirror, tmp_path, trec, monkeypatch, capsys):
    fx.write_boolquestions(mirror)
    run = str(trec(tmp_path / "a.trec", NQ_RUNS[0]))
    calls = _count(monkeypatch, [run])
    assert main(["evaluate", "boolquestions/nq", run, "--by-doc-field", "title"]) == 0
    assert dict(calls) == {"load": 1, "qrels": 1, "parse": 1, "open a.trec": 1}
    calls.clear()
    assert main(["validate", "boolquestions/nq", run]) == 0
    assert "valid run" in capsys.readouterr().out
    assert calls["open a.trec"] == 1 and calls["load"] == 1


# -- the columns validate as the lines do --------------------------------------------------------------------

def _variants():
    lines = DEMO_RUN.read_text().splitlines()
    body = "\n".join(lines) + "\n"
    first = lines[0].split()
    swapped = lines[:]
    swapped[1], swapped[2] = swapped[2], swapped[1]  # interleaved but valid: ranks decide
    return {
        "plain": body,
        "crlf": body.replace("\n", "\r\n"),
        "blank lines": "\n\n" + body.replace("\n", "\n\n", 5),
        "tabs": body.replace(" ", "\t", 7),
        "two spaces": body.replace(" ", "  ", 3),
        "trailing space": body.replace("\n", " \n", 2),
        "lone carriage return": body.replace("\n", "\r", 1),
        "no final newline": body.rstrip("\n"),
        "order of lines": "\n".join(swapped) + "\n",
        "duplicate": body + lines[0] + "\n",
        "rank repeated": body.replace(lines[1], " ".join([*lines[1].split()[:3], first[3], *lines[1].split()[4:]])),
        "score rises": body.replace(lines[1], " ".join([*lines[1].split()[:4], "99.5", lines[1].split()[5]])),
        "hex rank": body.replace(lines[0], " ".join([*first[:3], "0x1", *first[4:]])),
        "plus rank": body.replace(lines[0], " ".join([*first[:3], "+1", *first[4:]])),
        "rank overflow": body.replace(lines[0], " ".join([*first[:3], "9" * 20, *first[4:]])),
        "nan score": body.replace(lines[0], " ".join([*first[:4], "nan", first[5]])),
        "inf score": body.replace(lines[0], " ".join([*first[:4], "1e400", first[5]])),
        "underscore score": body.replace(lines[0], " ".join([*first[:4], "1_0.5", first[5]])),
        "five columns": body.replace(lines[0], " ".join(first[:5])),
        "unknown query": body + "zz Q0 d01 1 1.0 t\n",
        "unknown document": body + "q01 Q0 nope 999 -5.0 t\n",
        "non-breaking space": body.replace(lines[0], lines[0].replace(" Q0 ", " Q0\u00a0", 1)),
        "non-ascii tag": body.replace(lines[0], " ".join([*first[:5], "étiquette"])),
        "quote": body.replace(lines[0], " ".join([*first[:5], '"tag'])),
        "null": body.replace(lines[0], " ".join([*first[:4], "NULL", first[5]])),
        "only blank": "\n \n\n",
        "empty": "",
    }


@pytest.mark.parametrize("name", list(_variants()))
@pytest.mark.parametrize("compress", [False, True])
def test_columns_validate_as_lines_do(tmp_path, monkeypatch, name, compress):
    text = _variants()[name]
    path = tmp_path / ("run.trec.gz" if compress else "run.trec")
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    fast, fast_run = validation.validate_run("negplugins-demo", path, return_run=True)
    monkeypatch.setattr(validation, "parse_columns", lambda data: None)  # Python's split only
    slow, slow_run = validation.validate_run("negplugins-demo", path, return_run=True)
    assert fast.to_dict() == slow.to_dict()
    assert fast.to_text() == slow.to_text()
    assert dict(fast_run) == slow_run
    expected_valid = name in {"plain", "crlf", "blank lines", "tabs", "two spaces", "trailing space",
                              "no final newline", "order of lines", "plus rank", "non-ascii tag", "quote",
                      "underscore score", "non-breaking space"}  # Python reads 1_0.5, and splits on U+00A0
    assert fast.valid == expected_valid, fast.to_text()


@pytest.mark.parametrize("bad", [b"\xff", b"\xc3", b"t\xe2\x80"])
@pytest.mark.parametrize("column", [0, 1, 5])
def test_bytes_not_utf8_in_any_column_are_reported_as_before(tmp_path, monkeypatch, bad, column):
    lines = DEMO_RUN.read_bytes().splitlines()
    fields = lines[3].split(b" ")
    fields[column] = bad
    lines[3] = b" ".join(fields)
    path = tmp_path / "run.trec"
    path.write_bytes(b"\n".join(lines) + b"\n")
    fast = validation.validate_run("negplugins-demo", path)
    monkeypatch.setattr(validation, "parse_columns", lambda data: None)
    slow = validation.validate_run("negplugins-demo", path)
    assert fast.to_dict() == slow.to_dict()
    assert fast.problems["encoding"] == [(4, "not UTF-8")]


def test_truncated_gzip_is_reported_with_its_line(tmp_path):
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(DEMO_RUN.read_bytes(), mtime=0)[:-30])
    assert read_run_bytes(path)[1].kind == "encoding"
    report = validation.validate_run("negplugins-demo", path)
    assert report.counts.get("encoding") == 1 and "truncated or not a run" in report.to_text()


def test_plain_runs_are_read_into_columns():
    columns = parse_columns(read_run_bytes(DEMO_RUN)[0])
    assert isinstance(columns, RunColumns)
    assert columns.lines == len(DEMO_RUN.read_text().splitlines())
    # as a mapping it is the run as read_run reads it
    from negplugins.io.trec import read_run

    assert dict(columns) == read_run(DEMO_RUN)


# -- the columns score as the dict does ----------------------------------------------------------------------

def _random_run(rng: random.Random, queries=40, docs=300):
    """A run with exact ties, ties only in single precision and distinct scores, and its qrels."""
    run, qrels = {}, {}
    for q in range(queries):
        query_id = f"q{q}"
        scored = {}
        for d in rng.sample(range(docs), rng.randint(1, 150)):
            kind = rng.random()
            base = float(rng.randint(0, 20))
            scored[f"d{d:03d}"] = base if kind < 0.4 else base + 1e-7 if kind < 0.6 else base + rng.random()
        run[query_id] = scored
        if q % 7:  # some queries unjudged
            qrels[query_id] = {f"d{d:03d}": rng.choice([-1, 0, 1, 2]) for d in rng.sample(range(docs), 30)}
    return run, qrels


def _columns_of(run, tmp_path) -> RunColumns:
    path = tmp_path / "run.trec"
    with open(path, "w") as f:
        for query_id, scored in run.items():
            ordered = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
            for rank, (doc_id, score) in enumerate(ordered, start=1):
                f.write(f"{query_id} Q0 {doc_id} {rank} {score!r} t\n")
    columns = parse_columns(read_run_bytes(path)[0])
    assert columns is not None
    return columns


@pytest.mark.parametrize("ties", ["stock", "one-ranking"])
def test_columns_score_as_the_dict_does(tmp_path, ties):
    measures = parse_measures("nDCG@10 RR@10 RR@3 R@100 R@5 P@5 AP@20 Success@1 Judged@10 nDCG RR AP "
                              "RightRank@10 DeltaMRR@10 LSNC@20")
    for seed in range(3):
        run, qrels = _random_run(random.Random(seed))
        columns = _columns_of(run, tmp_path)
        assert set(scoring._run_parts(measures, columns)[0][0]) == set(parse_measures(
            "nDCG@10 RR@10 RR@3 R@100 R@5 P@5 AP@20 Success@1 Judged@10"))
        assert columns.as_dict() == run
        with warnings.catch_warnings():  # no negatives for some queries: warned, not scored
            warnings.simplefilter("ignore")
            by_columns = sorted((str(m.measure), m.query_id, m.value)
                                for m in scoring._metrics(measures, qrels, columns, ties))
            by_dict = sorted((str(m.measure), m.query_id, m.value)
                             for m in scoring._metrics(measures, qrels, run, ties))
        assert by_columns == by_dict  # exactly: the same floats


def test_top_keeps_every_document_a_cutoff_can_see(tmp_path):
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0 + 1e-9, "e": 1.0}}
    top = _columns_of(run, tmp_path).top(2)
    # the 2nd highest score is 2.0 (b, c, d tie with it in single precision): all kept, e left out
    assert top == {"q": {"a": 3.0, "d": 2.0 + 1e-9, "c": 2.0, "b": 2.0}}
    assert set(_columns_of(run, tmp_path).top(1)["q"]) == {"a"}
    values = ir_measures.calc_aggregate([ir_measures.RR@2], {"q": {"c": 1}}, top)
    assert values == ir_measures.calc_aggregate([ir_measures.RR@2], {"q": {"c": 1}}, run)


def test_evaluate_json_is_the_same_read_either_way(mirror, tmp_path, trec, monkeypatch, capsys):
    fx.write_boolquestions(mirror)
    run = str(trec(tmp_path / "a.trec", NQ_RUNS[0]))
    args = ["evaluate", "boolquestions/nq", run, "--json", "--per-query", "--by-doc-field", "title",
            "--without-docs", "title=Title 102"]
    assert main(args) == 0
    fast = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(validation, "parse_columns", lambda data: None)
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == fast
    assert np.isfinite(fast["overall"]["PosRR@10"])
