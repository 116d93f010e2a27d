"""Writers of small fixture files in exactly the real source formats (see docs/formats.md).

Each ``write_*`` function takes the mirror root (``IR_DATASETS_EXT_MIRROR``) and lays the files out as
``<mirror>/<benchmark>/<original file path>``; it returns what the tests need to know about them.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

# -- ExcluIR ----------------------------------------------------------------------------------------

EXCLUIR_CORPUS = [
    "Paris is the capital of France.",
    "Lyon is a city in France known for its cuisine.",
    "Berlin is the capital of Germany.",
    "Munich hosts the Oktoberfest.",
    "Rome is the capital of Italy.",
    "Milan is a fashion capital in Italy.",
]
EXCLUIR_QUERIES = [  # corpus_sub_index = [negative, positive]
    {"question0": "Which French city?", "RQ_rewrite": "A French city, but not the capital", "corpus_sub_index": [0, 1]},
    {"question0": "German capital?", "RQ_rewrite": "A German city other than Munich", "corpus_sub_index": [3, 2]},
    {"question0": "Italian city?", "RQ_rewrite": "An Italian city that is not Rome", "corpus_sub_index": [4, 5]},
]


def write_excluir(mirror: Path, queries=None, corpus=None) -> Path:
    folder = mirror / "excluir"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.json").write_text(json.dumps(corpus or EXCLUIR_CORPUS, indent=2), encoding="utf-8")
    (folder / "test_manual_final.json").write_text(
        json.dumps(queries or EXCLUIR_QUERIES, indent=2), encoding="utf-8")
    return folder


# -- NevIR ------------------------------------------------------------------------------------------

def _nevir_pair(n, with_id=None):
    row = {"q1": f"Which metal was used except in country {n}?", "q2": f"Which metal was used throughout country {n}?",
           "doc1": f"Nickel was used, except in country {n}.", "doc2": f"Nickel was used throughout country {n}."}
    if with_id is not None:
        row = {"id": with_id, **row, "WorkerId": "w1"}
    return row


NEVIR_ROWS = {
    "train.jsonl": [_nevir_pair(0), _nevir_pair(1)],  # no id field: ids are line numbers 0, 1
    "validation.jsonl": [_nevir_pair(2)],
    "test.jsonl": [_nevir_pair(3, "1000-2"), _nevir_pair(4, "1001-1"), _nevir_pair(5, "1002-3")],
}


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_nevir(mirror: Path) -> Path:
    for file, rows in NEVIR_ROWS.items():
        write_jsonl(mirror / "nevir" / file, rows)
    return mirror / "nevir"


def _with_study_fields(row: dict, n: int) -> dict:
    """A NevIR row as the derived copy holds it: the release's fields and an LLM study's after them."""
    return {**row, "WorkerId": n, "token_count": 10 + n, "negation_types_q1": [], "is_negated_q1": True,
            "rewritten_query_q1": f"REWRITTEN {row['q1']}", "exclusion_criteria_q1": ["no love"], "status": "success",
            "rewritten_query_q2": f"REWRITTEN {row['q2']}", "explanation_q2": "kept the negation"}


#: The derived copy of the test split (nevir/derived/NevIR_test_final.json): one JSON array, pairs in another order.
NEVIR_DERIVED_ROWS = [_with_study_fields(row, n) for n, row in enumerate(reversed(NEVIR_ROWS["test.jsonl"]))]


def write_nevir_derived(mirror: Path, rows=None) -> Path:
    """Write the derived copy (a JSON array, indented as the real one) without the release's test.jsonl."""
    path = mirror / "nevir" / "derived" / "NevIR_test_final.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(NEVIR_DERIVED_ROWS if rows is None else rows, indent=2), encoding="utf-8")
    return path


#: The derived copy of ExcluIR's test queries (excluir/derived/ExcluIR_test_manual_final.json): no corpus beside it.
EXCLUIR_DERIVED_QUERIES = [{**q, "token_count": 20 + n, "rewritten_query": f"REWRITTEN {q['question0']}",
                            "exclusion_criteria": ["x"], "is_negated": True, "status": "success"}
                           for n, q in enumerate(EXCLUIR_QUERIES)]


def write_excluir_derived(mirror: Path) -> Path:
    path = mirror / "excluir" / "derived" / "ExcluIR_test_manual_final.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(EXCLUIR_DERIVED_QUERIES, indent=2), encoding="utf-8")
    return path


# -- BoolQuestions ----------------------------------------------------------------------------------

def _ctx(*ids):
    return [{"passage_id": i, "title": "", "text": "..."} for i in ids]


BQ_MSMARCO_EVAL = [  # written as one JSON array
    {"qid": 1, "question": "cats and dogs", "question_type": "and", "positive_ctxs": _ctx("10"), "negative_ctxs": _ctx("11")},
    {"qid": 2, "question": "cats or dogs", "question_type": "or", "positive_ctxs": _ctx("10", "12"), "negative_ctxs": []},
    {"qid": 3, "question": "cats but not dogs", "question_type": "not", "positive_ctxs": _ctx("12"),
     "negative_ctxs": _ctx("10", None)},
    {"qid": 4, "question": "birds not fish", "question_type": "not", "positive_ctxs": _ctx("13"), "negative_ctxs": _ctx("14")},
    # 15 is listed as both positive and negative; 11 is a repeated negative
    {"qid": 5, "question": "fish not cats", "question_type": "not", "positive_ctxs": _ctx("15"),
     "negative_ctxs": _ctx("15", "11", "11")},
    # negatives only: no positive, so the authors leave it out of MRR@10
    {"qid": 6, "question": "cats and birds", "question_type": "and", "positive_ctxs": [], "negative_ctxs": _ctx("13")},
    # only a null negative: the authors count it in NegRecall@10 (as 0), the suite has no negative for it
    {"qid": 7, "question": "dogs or fish", "question_type": "or", "positive_ctxs": _ctx("14"), "negative_ctxs": _ctx(None)},
]
BQ_MSMARCO_CORPUS = [{"docid": str(i), "doc": f"msmarco passage {i}"} for i in range(10, 16)]

BQ_NQ_EVAL = [  # written as JSON lines
    {"qid": "nq1", "question": "films by A and B", "question_type": "and", "positive_ctxs": _ctx(101), "negative_ctxs": _ctx(102)},
    {"qid": "nq2", "question": "films by A or B", "question_type": "or", "positive_ctxs": _ctx(101, 103), "negative_ctxs": []},
    {"qid": "nq3", "question": "films by A not B", "question_type": "not", "positive_ctxs": _ctx(103),
     "negative_ctxs": _ctx(None, None, 102)},
]
BQ_NQ_CORPUS = [{"docid": i, "title": f"Title {i}", "doc": f"nq passage {i}"} for i in (101, 102, 103, 104)]


def write_boolquestions(mirror: Path) -> Path:
    root = mirror / "boolquestions"
    (root / "MSMARCO").mkdir(parents=True, exist_ok=True)
    (root / "MSMARCO" / "eval.json").write_text("\n  " + json.dumps(BQ_MSMARCO_EVAL, indent=1), encoding="utf-8")
    write_jsonl(root / "MSMARCO" / "corpus.jsonl", BQ_MSMARCO_CORPUS)
    write_jsonl(root / "NaturalQuestions" / "eval.json", BQ_NQ_EVAL)
    write_jsonl(root / "NaturalQuestions" / "corpus.jsonl", BQ_NQ_CORPUS)
    return root


# -- DuReader-retrieval -----------------------------------------------------------------------------

DU_PARTS = [  # passages per part file, in order
    ["北京是中国的首都。", "上海是中国最大的城市。"],
    ["广州位于中国南部。"],
    ["长城是中国古代的军事防御工程。", "故宫位于北京。"],
    ["黄河是中国第二长河。"],
]
DU_IDS = [f"pid{n:03d}" for n in range(6)]  # passage id of global line n
DU_DEV = [
    {"question_id": "dev_q1", "question": "中国的首都是哪里", "answer_paragraphs": [
        {"paragraph_id": "pid000", "paragraph_text": "北京是中国的首都。"},
        {"paragraph_id": "pid004", "paragraph_text": "故宫位于北京。"}]},
    {"question_id": "dev_q2", "question": "黄河有多长", "answer_paragraphs": [
        {"paragraph_id": "pid005", "paragraph_text": "黄河是中国第二长河。"}]},
]


def du_part_lines(parts=DU_PARTS):
    return ["".join(f"-\t\t{text}\t0\n" for text in passages) for passages in parts]


def du_members(parts_text=None, id_map=None, dev_rows=None, map_in_collection=True):
    """The tarball members as {path inside the release: bytes}."""
    parts_text = parts_text or du_part_lines()
    id_map = id_map if id_map is not None else {str(n): pid for n, pid in enumerate(DU_IDS)}
    members = {f"passage-collection/part-0{i}": text.encode("utf-8") for i, text in enumerate(parts_text)}
    map_path = "passage-collection/passage2id.map.json" if map_in_collection else "passage2id.map.json"
    members[map_path] = json.dumps(id_map, ensure_ascii=False).encode("utf-8")
    members["dev/dev.json"] = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in (dev_rows or DU_DEV)).encode()
    members["dev/q2qid.dev.json"] = b"{}"
    members["readme.md"] = b"fixture"
    return members


def write_du_tarball(mirror: Path, members=None, top_folder="dureader-retrieval-baseline-dataset") -> Path:
    members = members if members is not None else du_members()
    path = mirror / "dureader_retrieval" / "dureader-retrieval-baseline-dataset.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        if top_folder:
            info = tarfile.TarInfo(top_folder)
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for name, data in members.items():
            info = tarfile.TarInfo(f"{top_folder}/{name}" if top_folder else name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


CMTEB_CORPUS = {"id": ["c1", "c2", "c3", "c4"], "text": ["北京是首都。", "上海是城市。", "黄河很长。", "长江更长。"]}
CMTEB_QUERIES = {"id": ["q1", "q2"], "text": ["首都是哪里", "黄河有多长"]}
CMTEB_QRELS = {"qid": ["q1", "q2", "q2"], "pid": ["c1", "c3", "c4"], "score": [1, 1, 1]}


def write_cmteb(mirror: Path, corpus=None, queries=None, qrels=None) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ir_datasets_ext.datasets.dureader_retrieval import CMTEB_FILES

    paths = {}
    for key, table in (("corpus", corpus or CMTEB_CORPUS), ("queries", queries or CMTEB_QUERIES),
                       ("qrels", qrels or CMTEB_QRELS)):
        path = mirror / "dureader_retrieval" / CMTEB_FILES[key].file
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table(table), path)
        paths[key] = path
    return paths
