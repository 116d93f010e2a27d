"""A user's condition gets a user's error (issue 21, part 3): one line naming the path or variable, exit 2.

One class of test per kind of condition: an unwritable place, a wrong type of path, a bad environment, a
damaged cache, an output onto an input, inconsistent options; and the classification rule itself
(:func:`negplugins.errors.os_error_message`).

The commands run in this process (``main_cli`` of ``conftest.py``: :func:`negplugins.cli.main`, its status and both
streams) where their message is the subject; in a child process (``cli``) where the process is: a variable read
before ir_datasets is imported, a ``JAVA_HOME`` read when the JVM starts.

Running as root: root ignores permission bits, so "unwritable" is made real in the two ways the kernel
refuses root too: a read-only tmpfs mount (``EROFS``) and an immutable folder (``chattr +i``, ``EPERM``).
Where this process may not mount or set the flag, those cases are skipped (outside CI) and the
classification rule is still tested with the ``EACCES`` / ``EROFS`` / ``EPERM`` errors built by hand.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from safety_helpers import assert_clean_error

from negplugins.errors import os_error_message

DEMO = "negplugins-demo"


def _user_error(result, *fragments):
    """Exit 2, one line ``negplugins: error: ...`` naming ``fragments``, no traceback, no internal error."""
    assert_clean_error(result, *fragments, codes=(2,))
    assert "internal error" not in result.stderr and "please report" not in result.stderr, result.stderr
    assert len([line for line in result.stderr.splitlines() if line.strip()]) == 1, result.stderr


def _hidden(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".*")
                  if p.name.endswith((".tmp", ".partial", ".lock")))


# -- unwritable ------------------------------------------------------------------------------------

@pytest.fixture
def read_only_folder(tmp_path):
    """A folder on a read-only tmpfs (``EROFS`` for root as for anyone)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here: {done.stderr.decode().strip()}")
    yield folder
    subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def immutable_folder(tmp_path):
    """A folder with the immutable attribute (``EPERM`` on creating a file in it, for root too)."""
    folder = tmp_path / "imm"
    folder.mkdir()
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot set the immutable attribute here: {done.stderr.decode().strip()}")
    yield folder
    subprocess.run(["chattr", "-i", str(folder)], check=True)


@pytest.mark.parametrize("command", [
    ("topics", DEMO, "-o", "{out}/t.tsv"),
    ("search", "bm25", DEMO, "-o", "{out}/run.trec"),
    ("index", DEMO, "--index", "{out}/idx"),
    ("evaluate", DEMO, "{run}", "-o", "{out}/report.txt"),
])
@pytest.mark.parametrize("place", ["read_only_folder", "immutable_folder"])
def test_an_unwritable_output_is_refused_before_any_work(request, tmp_path, main_cli, command, place):
    folder = request.getfixturevalue(place)
    run = Path(__file__).resolve().parents[2] / "runs" / DEMO / "bm25.trec"
    args = [part.format(out=folder, run=run) for part in command]
    result = main_cli(*args, cwd=tmp_path)
    _user_error(result, str(folder))
    assert f"the folder {folder}" in result.stderr
    assert ("read-only file system" if place == "read_only_folder" else "not writable") in result.stderr
    assert not (tmp_path / "indexes").exists()  # refused before the index of the search was built
    assert ".tmp" not in result.stderr  # the user's path, never a hidden temporary file


def test_an_unwritable_current_directory_names_the_default_index(read_only_folder, tmp_path, main_cli):
    """``search bm25`` without ``--index`` builds ``indexes/lucene/...`` in the current directory."""
    result = main_cli("search", "bm25", DEMO, "-o", tmp_path / "run.trec", cwd=read_only_folder)
    _user_error(result, "indexes/lucene/negplugins-demo", "read-only file system")


# -- wrong type of path ----------------------------------------------------------------------------

@pytest.fixture
def odd_paths(tmp_path):
    (tmp_path / "afile").write_text("a file, not a folder\n")
    os.symlink("loop2", tmp_path / "loop1")
    os.symlink("loop1", tmp_path / "loop2")
    return tmp_path


@pytest.mark.parametrize("output, fragment", [
    ("afile/t.tsv", "afile/t.tsv: cannot be created, afile is not a folder"),
    ("afile/sub/t.tsv", "afile/sub/t.tsv: cannot be created, afile is not a folder"),
    ("loop1/t.tsv", "loop1/t.tsv: symbolic link loop"),
    ("loop1", "loop1: symbolic link loop"),
    ("a" * 240 + ".tsv", "file name too long (244 bytes; at most 233 here"),
    ("/proc/t.tsv", "/proc/t.tsv: is under /proc, a kernel file system"),
    ("/sys/t.tsv", "/sys/t.tsv: is under /sys, a kernel file system"),
])
def test_an_output_on_a_wrong_type_of_path_is_one_line(odd_paths, main_cli, output, fragment):
    result = main_cli("topics", DEMO, "-o", output, cwd=odd_paths)
    _user_error(result, fragment)
    assert _hidden(odd_paths) == []


@pytest.mark.parametrize("command", [("search", "bm25", DEMO, "-o", "afile/run.trec"),
                                     ("index", DEMO, "--index", "afile/idx"),
                                     ("search", "bm25", DEMO, "-o", "loop1/run.trec")])
def test_runs_and_indexes_on_a_wrong_type_of_path_are_one_line(odd_paths, main_cli, command):
    result = main_cli(*command, cwd=odd_paths)
    _user_error(result, command[-1])
    assert not (odd_paths / "indexes").exists()


# -- bad environment -------------------------------------------------------------------------------

@pytest.mark.parametrize("home, fragment", [
    ("afile", "is a file, not a folder"),
    ("afile/cache", "cannot be created, {tmp}/afile is a file, not a folder"),
])
def test_an_unusable_ir_datasets_home_is_named_before_ir_datasets_is_imported(odd_paths, cli, home, fragment):
    result = cli("topics", DEMO, "-o", "t.tsv", cwd=odd_paths, env={"IR_DATASETS_HOME": str(odd_paths / home)})
    _user_error(result, f"IR_DATASETS_HOME={odd_paths / home}", fragment.format(tmp=odd_paths))


def test_an_ir_datasets_home_that_cannot_be_created_is_named(read_only_folder, tmp_path, cli):
    result = cli("topics", DEMO, "-o", "t.tsv", cwd=tmp_path, env={"IR_DATASETS_HOME": str(read_only_folder / "h")})
    _user_error(result, f"IR_DATASETS_HOME={read_only_folder / 'h'}: cannot be created", "is not writable")


def test_an_empty_read_only_ir_datasets_home_is_named_when_ir_datasets_fails_to_import(read_only_folder, tmp_path,
                                                                                         cli):
    """ir_datasets creates a folder per dataset while it is imported: in an empty read-only home that fails."""
    result = cli("topics", DEMO, "-o", "t.tsv", cwd=tmp_path, env={"IR_DATASETS_HOME": str(read_only_folder)})
    _user_error(result, f"IR_DATASETS_HOME={read_only_folder} (", "on a read-only file system",
                "set IR_DATASETS_HOME to another folder")


def test_a_prepared_read_only_ir_datasets_home_is_accepted(tmp_path, cli):
    """A shared cache may be read-only once prepared: the embedded demo needs nothing more, so the command works."""
    home, view = tmp_path / "home", tmp_path / "view"
    view.mkdir()
    assert cli("topics", DEMO, "-o", "first.tsv", cwd=tmp_path, env={"IR_DATASETS_HOME": str(home)}).returncode == 0
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(home), str(view)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount read-only here: {done.stderr.decode().strip()}")
    try:
        result = cli("topics", DEMO, "-o", "t.tsv", cwd=tmp_path, env={"IR_DATASETS_HOME": str(view)})
    finally:
        subprocess.run(["umount", str(view)], check=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.java
@pytest.mark.parametrize("java_home", ["/usr", "/nonexistent/jdk"])
def test_a_java_home_without_a_jvm_is_named(tmp_path, cli, java_home):
    result = cli("search", "bm25", DEMO, "-o", "run.trec", cwd=tmp_path, env={"JAVA_HOME": java_home})
    _user_error(result, f"JAVA_HOME={java_home}: no Java virtual machine there", "unset JAVA_HOME")
    assert not (tmp_path / "run.trec").exists()


def test_a_java_home_without_a_jvm_does_not_stop_a_command_without_java(tmp_path, cli):
    result = cli("topics", DEMO, "-o", "t.tsv", cwd=tmp_path, env={"JAVA_HOME": "/usr"})
    assert result.returncode == 0, result.stderr


# -- damaged caches --------------------------------------------------------------------------------

def _truncate(path: Path, keep: int) -> None:
    os.truncate(path, keep)


@pytest.fixture
def damaged_index(demo_lucene_index, tmp_path):
    index = tmp_path / "idx"
    shutil.copytree(demo_lucene_index, index)
    manifest = json.loads((index / "negplugins-index.json").read_text())
    victim = max(manifest["files"], key=lambda name: manifest["files"][name]["bytes"])
    _truncate(index / victim, manifest["files"][victim]["bytes"] // 2)
    return index, victim


@pytest.mark.java
def test_a_truncated_lucene_index_given_to_a_search_is_refused_with_how_to_rebuild(damaged_index, tmp_path, main_cli):
    index, victim = damaged_index
    result = main_cli("search", "bm25", DEMO, "--index", index, "-o", "run.trec", cwd=tmp_path)
    _user_error(result, f"{index}: the Lucene index is damaged ({victim} has",
                f"negplugins index {DEMO} --index {index} --rebuild")
    assert not (tmp_path / "run.trec").exists()


@pytest.mark.java
def test_the_index_command_rebuilds_a_damaged_index_instead_of_calling_it_up_to_date(damaged_index, tmp_path, main_cli):
    index, victim = damaged_index
    result = main_cli("index", DEMO, "--index", index, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "built Lucene index" in result.stdout and "up-to-date" not in result.stdout
    assert f"the Lucene index is damaged ({victim} has" in result.stderr
    again = main_cli("search", "bm25", DEMO, "--index", index, "-o", "run.trec", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


@pytest.mark.java
def test_a_damaged_lucene_index_without_records_is_named_from_lucenes_own_exception(damaged_index, tmp_path, main_cli):
    """An index built by Pyserini (or before sizes were recorded): Lucene's CorruptIndexException, in one line."""
    index, _ = damaged_index
    manifest = json.loads((index / "negplugins-index.json").read_text())
    del manifest["files"]
    (index / "negplugins-index.json").write_text(json.dumps(manifest))
    result = main_cli("search", "bm25", DEMO, "--index", index, "-o", "run.trec", cwd=tmp_path)
    _user_error(result, f"{index}: the Lucene index is damaged (", "--rebuild")
    assert "Exception" in result.stderr  # Lucene's reason: CorruptIndexException, EOFException, ...


@pytest.fixture(scope="module")
def demo_dense(tmp_path_factory):
    """The demo's dense index (the packaged all-MiniLM-L6-v2), built by the suite: what ``negplugins search dense``
    calls, in this process (the model loaded once), with a cache of its own."""
    from negplugins.runners.dense import dense_index

    folder = tmp_path_factory.mktemp("dense")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(tmp_path_factory.mktemp("ir_datasets_home")))
        dense_index(DEMO, index=folder / "idx", progress=False)
    return folder / "idx"


def test_a_dense_index_with_flipped_bytes_is_refused(demo_dense, tmp_path, main_cli):
    index = tmp_path / "dense"
    shutil.copytree(demo_dense, index)
    data = bytearray((index / "index").read_bytes())
    data[len(data) // 2] ^= 0x7F  # one float of one vector: faiss reads it without complaint
    (index / "index").write_bytes(bytes(data))
    result = main_cli("search", "dense", DEMO, "--index", index, "-o", "run.trec", "--no-progress", cwd=tmp_path)
    _user_error(result, f"{index}: the dense index is damaged (index does not hold the bytes it was built with",
                "--rebuild")
    assert not (tmp_path / "run.trec").exists()


def test_a_truncated_finished_shard_is_named_on_resume(tmp_path, main_cli):
    first = main_cli("search", "dense", DEMO, "-o", "run.trec", "--no-progress", "--shard-num", "2", "--shard-id", "0",
                cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    shard = next((tmp_path / "indexes" / "faiss" / DEMO).glob("*.shards/shard-00000-of-00002"))
    _truncate(shard / "index", 100)
    result = main_cli("search", "dense", DEMO, "-o", "run.trec", "--no-progress", "--shard-num", "2", "--shard-id", "1",
                 cwd=tmp_path)
    _user_error(result, f"{shard.relative_to(tmp_path)}: this finished shard", "is damaged (index has 100 bytes",
                "remove the shard folder")


@pytest.mark.realdata
def test_a_truncated_docstore_is_named_with_how_to_rebuild_it(comlq_mirror, isolated_ir_datasets_home, tmp_path):
    import ir_datasets

    from ir_datasets_ext.util import DamagedCacheError

    store = ir_datasets.load("comlq").docs_store()
    store.get_many(["10000"])  # builds it
    data = Path(store.path) / "bin"
    _truncate(data, data.stat().st_size // 2)
    with pytest.raises(DamagedCacheError, match=f"{store.path}: the docstore of comlq is damaged .*remove the folder"):
        list(ir_datasets.load("comlq").docs_iter())


# -- output onto input -----------------------------------------------------------------------------

@pytest.mark.java
def test_force_never_writes_a_run_into_the_index_being_searched(demo_lucene_index, tmp_path, main_cli):
    index = tmp_path / "idx"
    shutil.copytree(demo_lucene_index, index)
    before = {p.name: p.read_bytes() for p in index.iterdir()}
    segments = next(index.glob("segments_*")).name
    result = main_cli("search", "bm25", DEMO, "--index", index, "-o", f"idx/../idx/{segments}", "--force", cwd=tmp_path)
    _user_error(result, f"is inside {index}, which this command reads", "never an input of the same command")
    assert {p.name: p.read_bytes() for p in index.iterdir()} == before


def test_force_never_writes_a_run_onto_the_dense_index(demo_dense, tmp_path, main_cli):
    index = tmp_path / "dense"
    shutil.copytree(demo_dense, index)
    before = (index / "index").read_bytes()
    result = main_cli("search", "dense", DEMO, "--index", index, "-o", index / "index", "--force", "--no-progress",
                 cwd=tmp_path)
    _user_error(result, "which this command reads")
    assert (index / "index").read_bytes() == before


def test_benchmark_results_inside_the_leaderboards_are_refused(tmp_path, main_cli):
    shutil.copytree(Path(__file__).resolve().parents[2] / "leaderboards", tmp_path / "leaderboards")
    result = main_cli("benchmark", "--model", "default", "-o", "leaderboards", "--benchmarks", "nevir", cwd=tmp_path)
    _user_error(result, "--output leaderboards: is inside", "a folder negplugins rebuilds as a whole")


# -- inconsistent options --------------------------------------------------------------------------

def test_a_query_dtype_other_than_the_index_s_is_refused(demo_dense, tmp_path, main_cli):
    result = main_cli("search", "dense", DEMO, "--index", demo_dense, "--dtype", "float16", "-o", "run.trec",
                 "--no-progress", cwd=tmp_path)
    _user_error(result, "the index was encoded with --dtype 'float32', not 'float16'")
    assert not (tmp_path / "run.meta.json").exists()  # no sidecar that says both


@pytest.mark.parametrize("params", ["efSearch=0", "efSearch=-5", "nprobe=0", "efSearch=2.5", "efSearch"])
def test_search_params_that_would_cut_the_hits_are_refused(tmp_path, main_cli, params):
    result = main_cli("search", "dense", DEMO, "--index-type", "HNSW32", "--search-params", params, "--hits", "5",
                 "-o", "run.trec", "--no-progress", cwd=tmp_path)
    _user_error(result, f"--search-params {params!r}")
    assert not (tmp_path / "indexes").exists()  # before any encoding


def test_more_shards_than_documents_are_refused(tmp_path, main_cli):
    result = main_cli("search", "dense", DEMO, "--search-shards", "--shard-num", "10000", "-o", "run.trec",
                 "--no-progress", cwd=tmp_path)
    _user_error(result, "--shard-num 10000: more shards than the 36 documents")
    assert not list(tmp_path.rglob("shard-*"))


# -- the rule: an OSError is classified by its cause ------------------------------------------------

@pytest.mark.parametrize("number", [errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.ENOTDIR,
                                    errno.ELOOP, errno.ENAMETOOLONG])
def test_an_os_error_about_a_named_path_names_it_not_the_hidden_temporary_file(tmp_path, number):
    hidden = tmp_path / "out" / ".run.trec.k2j4x9q1.tmp"
    message = os_error_message(OSError(number, os.strerror(number), str(hidden)), named=[str(tmp_path / "out/run.trec")])
    assert message is not None and message.startswith(f"{tmp_path / 'out/run.trec'}: ")
    assert ".tmp" not in message and os.strerror(number) in message


def test_an_os_error_inside_a_partial_folder_names_the_folder_output(tmp_path):
    inside = tmp_path / ".idx.abcd1234.partial" / "_0.fdt"
    message = os_error_message(OSError(errno.EROFS, "Read-only file system", str(inside)), named=["x", str(tmp_path / "idx")])
    assert message.startswith(f"{tmp_path / 'idx'}: on a read-only file system")


def test_an_os_error_under_a_variable_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    message = os_error_message(OSError(errno.EACCES, "Permission denied", str(tmp_path / "home/comlq/x")))
    assert message.startswith(f"IR_DATASETS_HOME={tmp_path / 'home'} (")
    assert "set IR_DATASETS_HOME to another folder" in message


def test_an_os_error_about_a_path_the_user_never_chose_stays_an_internal_error(tmp_path):
    error = OSError(errno.EACCES, "Permission denied", "/usr/lib/python3/some_module.py")
    assert os_error_message(error, named=[str(tmp_path / "run.trec")], variables=(), workdir=tmp_path) is None
    assert os_error_message(OSError(errno.EINVAL, "Invalid argument", str(tmp_path / "run.trec")),
                            named=[str(tmp_path / "run.trec")]) is None  # not a cause a user can fix


def test_a_full_disk_met_while_writing_is_a_user_error():
    assert os_error_message(OSError(errno.ENOSPC, "No space left on device")).startswith("no space left")


def test_a_missing_file_is_a_user_error_only_when_the_user_named_it(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    named = tmp_path / "run.trec"
    assert os_error_message(FileNotFoundError(errno.ENOENT, "No such file or directory", str(named)),
                            named=[str(named)]).startswith(f"{named}: not found")
    missing = tmp_path / "home" / "package-data.json"  # under a variable, but not named: may be a bug
    assert os_error_message(FileNotFoundError(errno.ENOENT, "No such file or directory", str(missing)),
                            workdir=tmp_path) is None
