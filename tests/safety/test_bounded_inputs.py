"""Hostile and careless inputs: runs, user JSON and damaged caches (issue 10, bounded and validated inputs).

Each case checks the one-line message and that nothing the user owns was lost (``guard``). Runs are
read by one bounded reader (``negplugins.io.run_columns``); user JSON by ``negplugins.io.jsonfile.read_json``.
The CLI cases run :func:`negplugins.cli.main` in this process (``main_cli`` of ``conftest.py``: its status and
both streams); FIFO cases have a timeout, so a reader that blocks on the FIFO fails the test instead of hanging it.
The killed copy is a child process, killed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from safety_helpers import PROJECT_ROOT, assert_clean_error

from negplugins.errors import UserError
from negplugins.evaluation.validation import validate_run
from negplugins.io.jsonfile import read_json
from negplugins.io.sidecars import read_sidecar, run_tag_problems, write_metadata
from negplugins.io.trec import RunFormatError, read_run

GOOD = "q01 Q0 d01 1 3.0 t\nq01 Q0 d02 2 2.0 t\n"
SMALL_BOUND = {"NEGPLUGINS_MAX_RUN_BYTES": str(1 << 20)}  # 1 MiB: bombs are rejected quickly


def gzip_bomb(path: Path, expanded: int, line: bytes = b"q01 Q0 d01 1 1.0 t\n") -> Path:
    """A gzip file expanding to about ``expanded`` bytes of ``line`` repeated (a few KB per MB).

    Compressed at level 1: four times faster than level 9 on such input, and still over 200 times smaller than what
    it expands to."""
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    block = line * ((1 << 20) // len(line))
    with open(path, "wb") as out:
        for _ in range(max(1, expanded // len(block))):
            out.write(compressor.compress(block))
        out.write(compressor.flush())
    return path


def assert_invalid_run_report(result: subprocess.CompletedProcess, *fragments: str) -> None:
    """``validate`` on a bad run: exit 1, the report on stdout naming ``fragments``, no traceback."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stdout, f"{fragment!r} not in {result.stdout!r}"


def demo_contribution(root: Path, name: str = "mine", text: str = GOOD, tag: str = "t") -> tuple[Path, Path]:
    """``root/runs/negplugins-demo/<name>.trec`` and its sidecar, as a contributor would commit them."""
    run = root / "runs" / "negplugins-demo" / f"{name}.trec"
    run.parent.mkdir(parents=True, exist_ok=True)
    run.write_text(text, encoding="utf-8")
    sidecar = write_metadata(run, dataset="negplugins-demo", runner="external", system="hand-made", tag=tag,
                             parameters={}, command="")
    return run, sidecar


def edit_sidecar(sidecar: Path, text: str) -> Path:
    sidecar.write_text(text, encoding="utf-8")
    return sidecar


def make_fifo(path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(path)
    return path


# -- gzip bombs, through every reader of a run ------------------------------------------------------

def test_evaluate_gzip_bomb(main_cli, tmp_path, guard):
    bomb = gzip_bomb(tmp_path / "bomb.trec.gz", 8 << 20)
    guard.arm(tmp_path)
    result = main_cli("evaluate", "negplugins-demo", bomb, env=SMALL_BOUND)
    assert_clean_error(result, "bomb.trec.gz", "gzip expansion exceeds the limit of 1048576 bytes")
    guard.unchanged(allow_new=False)


def test_validate_gzip_bomb(main_cli, tmp_path, guard):
    bomb = gzip_bomb(tmp_path / "bomb.trec.gz", 8 << 20)
    guard.arm(tmp_path)
    result = main_cli("validate", "negplugins-demo", bomb, env=SMALL_BOUND)
    assert_invalid_run_report(result, "[size] gzip expansion exceeds the limit")
    guard.unchanged(allow_new=False)


def test_rerank_gzip_bomb_fails_fast_without_output(main_cli, tmp_path, guard):
    # no .gz suffix: the reader recognises gzip by its magic bytes, not by the name
    bomb = gzip_bomb(tmp_path / "first-stage.trec", 9 << 20)
    guard.arm(tmp_path)
    start = time.perf_counter()
    result = main_cli("search", "rerank", "negplugins-demo", "--run", bomb, "--model", "no-model-needed",
                     "--output", tmp_path / "out.trec", env=SMALL_BOUND)
    assert_clean_error(result, "first-stage.trec", "gzip expansion exceeds the limit")
    assert "MemoryError" not in result.stderr and time.perf_counter() - start < 60
    guard.unchanged(allow_new=False)


def test_beir_rerank_gzip_bomb(main_cli, tmp_path, guard):
    bomb = gzip_bomb(tmp_path / "first.trec.gz", 8 << 20)
    guard.arm(tmp_path)
    result = main_cli("search", "beir-rerank", "negplugins-demo", "--run", bomb, "--model", "no-model-needed",
                     "--output", tmp_path / "out.trec", env=SMALL_BOUND)
    assert_clean_error(result, "first.trec.gz", "gzip expansion exceeds the limit")
    guard.unchanged(allow_new=False)


def test_leaderboard_build_gzip_bomb(main_cli, tmp_path, guard):
    run, sidecar = demo_contribution(tmp_path)
    run.unlink()
    bomb = gzip_bomb(run.with_name("mine.trec.gz"), 8 << 20, line=b"q01 Q0 d01 1 1.0 t\n")
    sidecar.write_text(sidecar.read_text().replace('"mine.trec"', '"mine.trec.gz"').replace(
        json.loads(sidecar.read_text())["run_sha256"], hashlib.sha256(bomb.read_bytes()).hexdigest()))
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "build", "--runs", tmp_path / "runs", "--output", tmp_path / "boards",
                     env=SMALL_BOUND)
    assert_clean_error(result, "mine.trec.gz", "gzip expansion exceeds the limit")
    assert not (tmp_path / "boards").exists()
    guard.unchanged(allow_new=False)


# -- empty-line bombs are rejected fast -------------------------------------------------------------

def test_empty_line_bomb_rejected_fast_at_default_bound(tmp_path, guard):
    bomb = gzip_bomb(tmp_path / "blank.trec.gz", 400 << 20, line=b"\n")  # 400 MiB of newlines, ~400 KB
    guard.arm(tmp_path)
    start = time.process_time()
    with pytest.raises(RunFormatError, match=r"blank\.trec\.gz:\d+: gzip expansion exceeds the limit of 209715200"):
        read_run(bomb)
    assert time.process_time() - start < 10  # was 78 s of CPU for a 5 MB bomb, line by line
    guard.unchanged()


def test_empty_line_bomb_cli_validate(main_cli, tmp_path, guard):
    bomb = gzip_bomb(tmp_path / "blank.trec.gz", 8 << 20, line=b" \n\n\t\n")
    guard.arm(tmp_path)
    result = main_cli("validate", "negplugins-demo", bomb, env=SMALL_BOUND)
    assert_invalid_run_report(result, "[size] gzip expansion exceeds the limit")
    guard.unchanged(allow_new=False)


def test_blank_lines_around_real_lines_keep_their_numbers(tmp_path, guard):
    path = tmp_path / "sparse.trec"
    path.write_bytes(b"\n" * 300000 + b"q01 Q0 d01 1 3.0 t\n" + b"\n" * 5 + b"q01 Q0 d02 x 2.0 t\n")
    guard.arm(path)
    with pytest.raises(RunFormatError, match=r"sparse\.trec:300007: rank 'x' is not an integer"):
        read_run(path)
    guard.unchanged()


# -- huge, truncated, binary, non-UTF-8 runs --------------------------------------------------------

def test_huge_line(main_cli, tmp_path, guard):
    path = tmp_path / "long.trec"
    path.write_bytes(GOOD.encode() + b"q01 Q0 " + b"d" * 200000 + b" 3 1.0 t\n")
    guard.arm(path)
    result = main_cli("evaluate", "negplugins-demo", path)
    assert_clean_error(result, "long.trec", "line longer than 65536 bytes")
    guard.unchanged()


def test_plain_file_over_the_bound(main_cli, tmp_path, guard):
    path = tmp_path / "big.trec"
    path.write_bytes(GOOD.encode() * 100)
    guard.arm(path)
    result = main_cli("evaluate", "negplugins-demo", path, env={"NEGPLUGINS_MAX_RUN_BYTES": "1000"})
    assert_clean_error(result, "big.trec", "over the limit of 1000 bytes", "NEGPLUGINS_MAX_RUN_BYTES")
    guard.unchanged()


def test_truncated_gzip(main_cli, tmp_path, guard):
    whole = gzip.compress((GOOD * 2000).encode())
    path = tmp_path / "cut.trec.gz"
    path.write_bytes(whole[: len(whole) // 2])
    guard.arm(path)
    result = main_cli("search", "rerank", "negplugins-demo", "--run", path, "--model", "m",
                     "--output", tmp_path / "out.trec")
    assert_clean_error(result, "cut.trec.gz", "cannot read the gzip stream", "truncated")
    assert not (tmp_path / "out.trec").exists()
    guard.unchanged()


def test_binary_garbage(main_cli, tmp_path, guard):
    path = tmp_path / "garbage.trec"
    path.write_bytes(np.random.default_rng(7).integers(0, 256, 50000, dtype=np.uint8).tobytes())
    guard.arm(path)
    result = main_cli("evaluate", "negplugins-demo", path)
    assert_clean_error(result, "garbage.trec", "not scored")
    guard.unchanged()


def test_non_utf8_run(tmp_path, guard):
    path = tmp_path / "latin1.trec"
    path.write_bytes(GOOD.encode() + "q01 Q0 dé 3 1.0 t\n".encode("latin-1"))
    guard.arm(path)
    with pytest.raises(RunFormatError, match=r"latin1\.trec:3: not UTF-8"):
        read_run(path)
    guard.unchanged()


def test_malformed_lines_stop_validation(tmp_path, guard):
    path = tmp_path / "words.trec"
    path.write_text("not a run\n" * 50000, encoding="utf-8")
    guard.arm(path)
    report = validate_run("negplugins-demo", path, check_documents=False)
    assert report.counts["columns"] == 1001 and "reading stopped at line 1001, after 1000 malformed lines" in report.to_text()
    guard.unchanged()


# -- a run that is a directory, a FIFO, missing ------------------------------------------------------

def test_run_is_a_directory(main_cli, tmp_path, guard):
    folder = tmp_path / "run.trec"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    guard.arm(tmp_path)
    result = main_cli("evaluate", "negplugins-demo", folder)
    assert_clean_error(result, "run.trec", "is a directory")
    guard.unchanged(allow_new=False)


def test_run_is_a_fifo_refused_not_waited_on(main_cli, tmp_path, guard):
    keep = tmp_path / "keep.txt"
    keep.write_text("mine")
    fifo = make_fifo(tmp_path / "run.trec")
    guard.arm(keep)
    for command in (["evaluate", "negplugins-demo", fifo], ["validate", "negplugins-demo", fifo],
                    ["search", "rerank", "negplugins-demo", "--run", fifo, "--model", "m", "--output",
                     tmp_path / "out.trec"]):
        result = main_cli(*command, timeout=60)
        assert_clean_error(result, "run.trec", "is a FIFO, not a regular file")
    assert not (tmp_path / "out.trec").exists()
    guard.unchanged()


def test_run_missing(main_cli, tmp_path, guard):
    keep = tmp_path / "keep.txt"
    keep.write_text("mine")
    guard.arm(keep)
    result = main_cli("search", "beir-rerank", "negplugins-demo", "--run", tmp_path / "nope.trec", "--model", "m",
                     "--output", tmp_path / "out.trec")
    assert_clean_error(result, "nope.trec", "run file not found")
    guard.unchanged()


# -- user JSON: sidecars ----------------------------------------------------------------------------

def test_deeply_nested_sidecar_does_not_crash_leaderboard(main_cli, tmp_path, guard):
    run, sidecar = demo_contribution(tmp_path)
    record = json.loads(sidecar.read_text())
    text = json.dumps(record)[:-1] + ', "extra": ' + "[" * 100000 + "]" * 100000 + "}"
    edit_sidecar(sidecar, text)
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "build", "--runs", tmp_path / "runs", "--output", tmp_path / "boards")
    assert_clean_error(result, "mine.meta.json", "nests deeper than 16 levels")
    assert "RecursionError" not in result.stderr and not (tmp_path / "boards").exists()
    guard.unchanged(allow_new=False)


def test_sidecar_duplicate_keys(main_cli, tmp_path, guard):
    run, sidecar = demo_contribution(tmp_path)
    edit_sidecar(sidecar, sidecar.read_text().replace('"tag": "t",', '"tag": "t",\n  "tag": "other",'))
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "check", "--runs", tmp_path / "runs", "--output", tmp_path / "boards")
    assert_clean_error(result, "mine.meta.json", "duplicate key 'tag'")
    guard.unchanged(allow_new=False)


def test_sidecar_nan(tmp_path, guard):
    run, sidecar = demo_contribution(tmp_path)
    edit_sidecar(sidecar, sidecar.read_text().replace('"parameters": {}', '"parameters": {"k1": NaN}'))
    guard.arm(tmp_path)
    with pytest.raises(UserError, match=r"mine\.meta\.json: metadata sidecar: NaN is not a valid JSON number"):
        read_sidecar(sidecar)
    guard.unchanged()


@pytest.mark.parametrize("field, value, message", [
    ("run", 7, "field run is 7, expected the run's file name"),
    ("run_sha256", "abc", "field run_sha256 is \"abc\", expected 64 lowercase hexadecimal digits"),
    ("dataset", "no-such", "field dataset 'no-such' is not a registered dataset id"),
    ("dataset", ["negplugins-demo"], "field dataset is list, expected a registered dataset id"),
    ("runner", "", "field runner is \"\", expected a non-empty one-line string"),
    ("system", "two\nlines", "field system is \"two\\nlines\", expected a non-empty one-line string"),
    ("tag", "two words", "field tag is \"two words\", expected the run tag, one word"),
    ("model", "minilm", "field model is \"minilm\", expected null or an object"),
    ("model", {"id": "m"}, "field model lacks revision, sha256"),
    ("parameters", [1, 2], "field parameters is list, expected an object"),
    ("index", "indexes/x", "field index is \"indexes/x\", expected null or an object"),
    ("first_stage", 3, "field first_stage is 3, expected null or an object"),
    ("language", None, "field language is null, expected a language code"),
    ("versions", {"torch": 2}, "field versions is dict, expected an object of version strings"),
    ("created", "yesterday", "field created is \"yesterday\", expected an ISO 8601 date and time"),
    ("created", 1700000000, "field created is 1700000000, expected an ISO 8601 date and time"),
    ("command", None, "field command is null, expected a string"),
])
def test_sidecar_field_types(tmp_path, guard, field, value, message):
    run, sidecar = demo_contribution(tmp_path)
    record = json.loads(sidecar.read_text())
    record[field] = value
    edit_sidecar(sidecar, json.dumps(record))
    guard.arm(tmp_path)
    with pytest.raises(UserError) as error:
        read_sidecar(sidecar)
    assert message in str(error.value) and str(error.value).startswith(str(sidecar))
    assert "\n" not in str(error.value)
    guard.unchanged()


def test_sidecar_missing_field(tmp_path, guard):
    run, sidecar = demo_contribution(tmp_path)
    record = json.loads(sidecar.read_text())
    del record["created"], record["system"]
    edit_sidecar(sidecar, json.dumps(record))
    guard.arm(tmp_path)
    with pytest.raises(UserError, match=r"missing field\(s\) system, created"):
        read_sidecar(sidecar)
    guard.unchanged()


def test_sidecar_tag_differs_from_run(main_cli, tmp_path, guard):
    demo_contribution(tmp_path, tag="Anserini")  # the run's lines end with 't'
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "build", "--runs", tmp_path / "runs", "--output", tmp_path / "boards")
    assert_clean_error(result, "mine.trec", "sidecar field tag 'Anserini' differs from the run's last column 't'")
    guard.unchanged(allow_new=False)


def test_run_with_several_tags(tmp_path, guard):
    run, _ = demo_contribution(tmp_path, text=GOOD + "q02 Q0 d03 1 1.0 other\n")
    guard.arm(tmp_path)
    assert run_tag_problems("t", run) == ["tag: the run's lines carry several tags ('other', 't'); a run has one tag"]
    guard.unchanged()


def test_fifo_sidecar_refused(main_cli, tmp_path, guard):
    run, sidecar = demo_contribution(tmp_path)
    sidecar.unlink()
    make_fifo(sidecar)
    guard.arm(run)
    result = main_cli("leaderboard", "check", "--runs", tmp_path / "runs", "--output", tmp_path / "boards",
                      timeout=60)
    assert_clean_error(result, "mine.meta.json", "is a FIFO, not a regular file")
    guard.unchanged()


def test_huge_sidecar(main_cli, tmp_path, guard):
    run, sidecar = demo_contribution(tmp_path)
    record = json.loads(sidecar.read_text())
    record["parameters"] = {"padding": "x" * (2 << 20)}
    edit_sidecar(sidecar, json.dumps(record))
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "build", "--runs", tmp_path / "runs", "--output", tmp_path / "boards")
    assert_clean_error(result, "mine.meta.json", "over the limit of 1048576 bytes")
    guard.unchanged(allow_new=False)


def test_committed_sidecars_stay_valid():
    runs = PROJECT_ROOT / "runs"
    sidecars = sorted(runs.rglob("*.meta.json"))
    assert len(sidecars) >= 6
    for sidecar in sidecars:
        record = read_sidecar(sidecar)
        assert run_tag_problems(record["tag"], sidecar.with_name(record["run"])) == [], sidecar


# -- leaderboard sidecar (writing a sidecar for a hand-made run) ------------------------------------

def test_sidecar_command_refuses_unregistered_dataset(main_cli, tmp_path, guard):
    run = tmp_path / "mine.trec"
    run.write_text(GOOD)
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "sidecar", run, "--dataset", "no-such", "--system", "s", "--run-tag", "t")
    assert_clean_error(result, "unknown dataset 'no-such'")
    guard.unchanged(allow_new=False)


def test_sidecar_command_refuses_tag_mismatch(main_cli, tmp_path, guard):
    run = tmp_path / "mine.trec"
    run.write_text(GOOD)
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "sidecar", run, "--dataset", "negplugins-demo", "--system", "s", "--run-tag", "x")
    assert_clean_error(result, "mine.trec: not writing its sidecar", "tag 'x' differs from the run's last column 't'")
    guard.unchanged(allow_new=False)


def test_sidecar_command_names_the_run_tag_option(main_cli, tmp_path, guard):
    """``--run-tag``, as in every command; a bad tag is reported under the option's name, and the option is
    required."""
    run = tmp_path / "mine.trec"
    run.write_text(GOOD)
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "sidecar", run, "--dataset", "negplugins-demo", "--system", "s",
                     "--run-tag", "two words")
    assert_clean_error(result, 'not writing its sidecar: --run-tag is "two words", expected the run tag, one word')
    result = main_cli("leaderboard", "sidecar", run, "--dataset", "negplugins-demo", "--system", "s")
    assert_clean_error(result, "the following arguments are required: --run-tag")
    guard.unchanged(allow_new=False)
    assert main_cli("leaderboard", "sidecar", run, "--dataset", "negplugins-demo", "--system", "s",
                   "--run-tag", "t").returncode == 0
    assert json.loads((tmp_path / "mine.meta.json").read_text())["tag"] == "t"


@pytest.mark.parametrize("parameters, message", [
    ('{"k1": 1, "k1": 2}', "duplicate key 'k1'"),
    ('{"k1": Infinity}', "Infinity is not a valid JSON number"),
    ("[1, 2]", "--parameters is list, expected an object"),
    ('{"k1": ', "--parameters:1:8: not valid JSON"),
])
def test_sidecar_command_parameters(main_cli, tmp_path, guard, parameters, message):
    run = tmp_path / "mine.trec"
    run.write_text(GOOD)
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "sidecar", run, "--dataset", "negplugins-demo", "--system", "s", "--run-tag", "t",
                     "--parameters", parameters)
    assert_clean_error(result, message)
    guard.unchanged(allow_new=False)


@pytest.mark.parametrize("text, message", [
    ("q01 Q0 d01 1 3.0\n", "mine.trec:1: expected 6 columns 'qid Q0 docid rank score tag', got 5"),
    ("q01 Q0 d01 1 high t\n", "mine.trec:1: score 'high' is not a number"),
    (GOOD + "q01 Q0 d03 third 1.0 t\n", "mine.trec:3: rank 'third' is not an integer"),
    ("q01 Q0 d01 1 nan t\n", "mine.trec:1: score 'nan' is not finite"),
    ("\n\n", "mine.trec: the run is empty"),
])
def test_sidecar_command_refuses_a_malformed_run(main_cli, tmp_path, guard, text, message):
    run = tmp_path / "mine.trec"
    run.write_text(text)
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "sidecar", run, "--dataset", "negplugins-demo", "--system", "s", "--run-tag", "t")
    assert_clean_error(result, message, "(not writing its sidecar)")
    guard.unchanged(allow_new=False)
    assert not (tmp_path / "mine.meta.json").exists()


def test_sidecar_command_reruns_over_its_own_sidecar_but_not_over_a_foreign_file(main_cli, tmp_path, guard):
    run = tmp_path / "mine.trec"
    run.write_text(GOOD)
    args = ("leaderboard", "sidecar", run, "--dataset", "negplugins-demo", "--run-tag", "t", "--system")
    assert main_cli(*args, "first try").returncode == 0
    again = main_cli(*args, "hand-made BM25")  # correcting a field: the sidecar of this very run, untracked
    assert again.returncode == 0, again.stderr
    assert read_sidecar(tmp_path / "mine.meta.json")["system"] == "hand-made BM25"
    (tmp_path / "mine.meta.json").write_text('{"note": "my own file"}\n')
    guard.arm(tmp_path)
    result = main_cli(*args, "s")
    assert_clean_error(result, "mine.meta.json: exists and is not a sidecar of mine.trec", "--force")
    guard.unchanged(allow_new=False)


# -- user JSON where outputs go: sidecars, output markers and index manifests ------------------------
# A RecursionError here used to be an "internal error ... please report it"; every reader now goes
# through read_json (size, depth, duplicate keys) and names the file.

DEEP = "[" * 100_000 + "]" * 100_000


def test_import_beir_over_a_deeply_nested_sidecar(main_cli, tmp_path, guard):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"q01": {"d01": 1.0}}))
    (tmp_path / "a.meta.json").write_text(DEEP)
    guard.arm(tmp_path)
    result = main_cli("import", "beir", results, "--dataset", "negplugins-demo", "-o", tmp_path / "a.trec")
    assert_clean_error(result, "a.meta.json: metadata sidecar nests deeper than 16 levels", "--force")
    assert "RecursionError" not in result.stderr
    guard.unchanged(allow_new=False)


def test_sidecar_command_over_a_deeply_nested_sidecar(main_cli, tmp_path, guard):
    run = tmp_path / "mine.trec"
    run.write_text(GOOD)
    (tmp_path / "mine.meta.json").write_text(DEEP)
    args = ("leaderboard", "sidecar", run, "--dataset", "negplugins-demo", "--system", "s", "--run-tag", "t")
    guard.arm(tmp_path)
    result = main_cli(*args)
    assert_clean_error(result, "mine.meta.json: metadata sidecar nests deeper than 16 levels", "--force")
    assert "RecursionError" not in result.stderr
    guard.unchanged(allow_new=False)
    forced = main_cli(*args, "--force")  # the user asked for it: the file is replaced by a valid sidecar
    assert forced.returncode == 0, forced.stderr
    assert read_sidecar(tmp_path / "mine.meta.json")["run"] == "mine.trec"


@pytest.mark.parametrize("marker, message", [
    (DEEP, "negplugins-output.json: output marker nests deeper than 64 levels"),
    ('{"written_by": "negplugins", "files": [["a"]]}', "negplugins-output.json: output marker has no list of file "
                                                      "names"),
    ('{"files": [], "files": ["x"]}', "negplugins-output.json: output marker: duplicate key 'files'"),
])
def test_leaderboard_build_over_a_folder_with_a_hostile_marker(main_cli, tmp_path, guard, marker, message):
    demo_contribution(tmp_path)
    boards = tmp_path / "boards"
    boards.mkdir()
    (boards / "negplugins-output.json").write_text(marker)
    (boards / "notes.txt").write_text("mine\n")
    guard.arm(tmp_path)
    result = main_cli("leaderboard", "build", "--runs", tmp_path / "runs", "--output", boards)
    assert_clean_error(result, message, "boards is not recognisably negplugins' output")
    assert "RecursionError" not in result.stderr
    guard.unchanged(allow_new=False)


@pytest.mark.parametrize("manifest", [DEEP, "not json"])
def test_a_folder_with_an_unreadable_index_manifest_is_not_an_index(main_cli, tmp_path, guard, manifest):
    index = tmp_path / "idx"
    index.mkdir()
    (index / "negplugins-index.json").write_text(manifest)
    (index / "notes.txt").write_text("mine\n")
    guard.arm(tmp_path)
    built = main_cli("index", "negplugins-demo", "--index", index)
    assert_clean_error(built, "idx: exists and is not an index built by negplugins (no readable "
                              "negplugins-index.json)")
    boards = main_cli("leaderboard", "build", "--runs", PROJECT_ROOT / "runs", "--output", index)
    assert_clean_error(boards, "idx: holds files negplugins did not write (negplugins-index.json, notes.txt)")
    guard.unchanged(allow_new=False)


# -- index folders given to search ------------------------------------------------------------------

@pytest.mark.parametrize("make, message", [
    ("folder", "idx: is not a Lucene index (no segments_N file); expected a folder built by 'negplugins index' "
               "or Pyserini"),
    ("file", "idx: is not a folder; expected a Lucene index folder"),
    ("faiss", "idx: is a faiss index built by negplugins, not a Lucene index"),
    ("deep-manifest", "idx: is not a Lucene index (no segments_N file)"),
    ("missing", "idx: index folder not found; expected a Lucene index"),
])
def test_search_bm25_refuses_an_index_that_is_not_lucene_before_java(main_cli, tmp_path, guard, make, message):
    index = tmp_path / "idx"
    keep = tmp_path / "keep.txt"
    keep.write_text("mine\n")
    if make == "file":
        index.write_text("mine\n")
    elif make != "missing":
        index.mkdir()
        (index / "notes.txt").write_text("mine\n")
        manifest = {"faiss": json.dumps({"format": 1, "kind": "faiss"}), "deep-manifest": DEEP}.get(make)
        if manifest:
            (index / "negplugins-index.json").write_text(manifest)
    guard.arm(tmp_path)
    result = main_cli("search", "bm25", "negplugins-demo", "--index", index, "-o", tmp_path / "run.trec")
    assert_clean_error(result, message)
    assert "IndexNotFoundException" not in result.stderr and not (tmp_path / "run.trec").exists()
    guard.unchanged(allow_new=False)


# -- user JSON: BEIR results ------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ('{"q01": {"d01": 1.0,}}', "results.json:1:21: not valid JSON"),
    ('{"q01": {"d01": 1.0, "d01": 0.5}}', "duplicate key 'd01'"),
    ('{"q01": {"d01": NaN}}', "NaN is not a valid JSON number"),
    ('{"q01": {"d01": ' + "[" * 5000 + "]" * 5000 + "}}", "nests deeper than 3 levels"),
    ('{"q01": ["d01"]}', "query 'q01': expected an object {doc_id: score}"),
    (b'{"q01": {"d\xff": 1.0}}', "not UTF-8"),
])
def test_beir_results_malformed(main_cli, tmp_path, guard, text, message):
    results = tmp_path / "results.json"
    results.write_bytes(text if isinstance(text, bytes) else text.encode())
    guard.arm(tmp_path)
    result = main_cli("import", "beir", results, "--dataset", "negplugins-demo", "--output", tmp_path / "run.trec")
    assert_clean_error(result, "results.json", message)
    guard.unchanged(allow_new=False)


def test_beir_results_fifo(main_cli, tmp_path, guard):
    keep = tmp_path / "keep.txt"
    keep.write_text("mine")
    fifo = make_fifo(tmp_path / "results.json")
    guard.arm(keep)
    result = main_cli("import", "beir", fifo, "--dataset", "negplugins-demo", "--output", tmp_path / "run.trec",
                      timeout=60)
    assert_clean_error(result, "results.json", "is a FIFO")
    assert not (tmp_path / "run.trec").exists()
    guard.unchanged()


def test_read_json_size_bound(tmp_path, guard):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"x": "y" * 5000}))
    guard.arm(path)
    with pytest.raises(UserError, match=r"big\.json: thing is \d+ bytes, over the limit of 1000 bytes"):
        read_json(path, what="thing", max_bytes=1000)
    guard.unchanged()


# -- damaged caches ---------------------------------------------------------------------------------

def _verified(mirror: Path, content: bytes):
    from ir_datasets_ext.download import VerifiedDownload

    source = mirror / "bench" / "data.txt"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(content)
    return VerifiedDownload("bench", "data.txt", "https://example.invalid/data.txt",
                            sha256=hashlib.sha256(content).hexdigest(), size=len(content)), source


def _remote(path: Path):
    """A ``source`` factory serving ``path`` as the pinned URL's bytes (a copy into the cache, as without a mirror)."""
    class Remote:
        def __init__(self, url):
            pass

        def stream(self):
            return open(path, "rb")

    return Remote


def _cached_copy(mirror: Path, content: bytes, monkeypatch):
    """A verified copy in the cache, fetched from the URL (a mirror file is used in place, never copied)."""
    from ir_datasets_ext.download import VerifiedDownload

    download, source = _verified(mirror, content)
    download = VerifiedDownload(download.benchmark, download.file, download.url, sha256=download.sha256,
                                size=download.size, source=_remote(source))
    monkeypatch.delenv("IR_DATASETS_EXT_MIRROR")
    cached = download.path()
    assert cached == download.cache_path and cached.read_bytes() == content
    return download, source, cached


def test_damaged_download_cache_refetched(mirror, guard, monkeypatch):
    download, source, cached = _cached_copy(mirror, b"the real bytes\n", monkeypatch)
    guard.arm(mirror)
    cached.write_bytes(b"THE REAL BYTES\n")  # same size: only the checksum tells (mtime changed)
    assert download.path().read_bytes() == b"the real bytes\n"
    cached.write_bytes(b"cut")  # different size: caught by the cheap check
    assert download.path().read_bytes() == b"the real bytes\n"
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(mirror))
    cached.write_bytes(b"cut")  # with a mirror: the damaged copy gives way to the mirror file, used in place
    assert download.path() == source and not cached.exists()
    guard.unchanged()


def test_damaged_download_cache_reported_with_the_path_to_delete(mirror, guard, monkeypatch):
    from ir_datasets_ext.download import ChecksumError

    download, source, cached = _cached_copy(mirror, b"the real bytes\n", monkeypatch)
    cached.write_bytes(b"the fake bytes\n")
    source.unlink()  # the URL answers no more, nor has the mirror the file
    (mirror / "bench" / "keep.txt").write_text("mine")
    guard.arm(mirror)
    with pytest.raises(ChecksumError, match=rf"the cached copy of bench/data\.txt is damaged .*delete {cached}"):
        download.path()
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(mirror))
    with pytest.raises(ChecksumError, match=rf"the cached copy of bench/data\.txt is damaged .*not found.*delete "
                                            rf"{cached}"):
        download.path()
    guard.unchanged()


def test_corrupt_doc_id_cache_rebuilt(tmp_path, guard, isolated_ir_datasets_home):
    run = tmp_path / "run.trec"
    run.write_text(GOOD)
    assert validate_run("negplugins-demo", run).valid
    cache = isolated_ir_datasets_home / "negplugins" / "docids" / "negplugins-demo.npz"
    good_cache = cache.read_bytes()
    guard.arm(run)
    for damage in (good_cache[: len(good_cache) // 2], b"not a zip at all", b""):
        cache.write_bytes(damage)
        assert validate_run("negplugins-demo", run).valid
        assert cache.read_bytes() == good_cache  # rebuilt, same ids
    np.savez(cache, keys=np.array([b"d02", b"d01"]), hashed=np.array(False))  # unsorted: not ours
    assert validate_run("negplugins-demo", run).valid and cache.read_bytes() == good_cache
    guard.unchanged()


def test_stale_temporary_of_killed_copy_removed(mirror, guard, isolated_ir_datasets_home):
    download, source = _verified(mirror, b"x" * 100000)
    target = download.cache_path
    target.parent.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = target.with_name(f"{target.name}.{dead.pid}.abc123.tmp")
    stale.write_bytes(b"x" * 500)  # what a copy killed half-way leaves (an earlier version copied mirror files too)
    live = target.with_name(f"{target.name}.{os.getppid()}.def456.tmp")  # a live process's copy
    live.write_bytes(b"x" * 10)
    guard.arm(mirror)
    assert download.path().read_bytes() == b"x" * 100000
    assert not stale.exists() and live.exists()
    live.unlink()
    assert sorted(p.name for p in target.parent.iterdir()) == [".data.txt.verified"]  # the mirror file used in place
    guard.unchanged()


def _copied_some(folder: Path) -> bool:
    """Whether a temporary file in ``folder`` has bytes in it yet (it may vanish as it is renamed)."""
    for temporary in folder.glob("*.tmp") if folder.exists() else ():
        try:
            if temporary.stat().st_size > 0:
                return True
        except FileNotFoundError:
            pass
    return False


def test_killed_copy_leaves_nothing_the_next_run_keeps(mirror, guard, isolated_ir_datasets_home, monkeypatch):
    from ir_datasets_ext.download import VerifiedDownload

    download, source = _verified(mirror, os.urandom(1 << 20) * 64)  # 64 MiB: the copy is under way when killed
    monkeypatch.delenv("IR_DATASETS_EXT_MIRROR")  # fetched from the URL (served from the file), so copied
    guard.arm(mirror)
    code = ("import ir_datasets_ext.download as d\n"
            "class Remote:\n"
            "    def __init__(self, url): pass\n"
            f"    def stream(self): return open({str(source)!r}, 'rb')\n"
            f"v = d.VerifiedDownload('bench', 'data.txt', 'u', size={source.stat().st_size}, source=Remote)\n"
            "d.VerifiedDownload._verify = lambda *a: __import__('time').sleep(60)\n"
            "v.path()\n")
    env = {k: v for k, v in os.environ.items() if k != "IR_DATASETS_EXT_MIRROR"}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    child = subprocess.Popen([sys.executable, "-c", code], env=env)
    folder = download.cache_path.parent
    deadline = time.time() + 60
    while time.time() < deadline and not _copied_some(folder):  # the copy is under way
        time.sleep(0.05)
    child.kill()
    child.wait()
    assert list(folder.glob("data.txt.*.tmp")), "the killed copy should have left its temporary"
    again = VerifiedDownload("bench", "data.txt", "u", size=source.stat().st_size, source=_remote(source))
    assert again.path().read_bytes() == source.read_bytes()
    assert not list(folder.glob("*.tmp"))
    guard.unchanged()
