"""A signal whose exception third-party code swallows still ends the command, and nothing is written after it.

pyarrow imports pandas lazily, the first time it converts an array, and an exception raised inside that import is
lost (or turns into an error of a half-imported pandas). The commands here meet such a signal at an observable
point: the handler the command installed for SIGINT or SIGTERM runs there (called as Python calls it on the signal:
an OS signal to this test process could land in the JVM that other tests of the worker started), and the code it
lands in swallows its exception, as that import does; the command must still exit 130 / 143 with its one line,
and leave the earlier output as it was. tests/safety/test_interrupts.py sends the real signals to a command's
own process.
"""

from __future__ import annotations

import signal

import pytest

from negplugins.io import interrupts

EXIT = {signal.SIGINT: (130, "negplugins: interrupted"), signal.SIGTERM: (143, "negplugins: terminated")}


def _swallowing(real, signum, then_fail: bool = False):
    """``real``, preceded by ``signum`` delivered to this process and its exception swallowed (optionally followed
    by the error a half-imported library gives)."""
    def call(*args, **kwargs):
        try:
            signal.getsignal(signum)(signum, None)  # the command's handler: records the signal, then raises
        except BaseException:  # noqa: BLE001 - what the lazy import does with it
            pass
        if then_fail:
            raise AttributeError("partially initialized module 'pandas' has no attribute '_pandas_datetime_CAPI'")
        return real(*args, **kwargs)
    return call


@pytest.fixture
def demo_run(tmp_path):
    from negplugins import datasets

    dataset = datasets.load("negplugins-demo")
    docs = [doc.doc_id for doc in dataset.docs_iter()][:5]
    lines = [f"{q.query_id} Q0 {d} {r + 1} {10 - r} t\n" for q in dataset.queries_iter() for r, d in enumerate(docs)]
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize("then_fail", [False, True], ids=["goes-on", "then-fails"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_swallowed_signal_ends_evaluate_and_keeps_the_earlier_report(tmp_path, monkeypatch, main_cli, demo_run,
                                                                       signum, then_fail):
    from negplugins.evaluation import scoring

    out = tmp_path / "out.json"
    out.write_text("the earlier report\n")
    monkeypatch.setattr(scoring.Evaluator, "read_runs", _swallowing(scoring.Evaluator.read_runs, signum, then_fail))
    result = main_cli("evaluate", "negplugins-demo", demo_run, "-o", out, "--force", cwd=tmp_path)
    status, line = EXIT[signum]
    assert (result.returncode, result.stderr.strip().splitlines()[-1:]) == (status, [line]), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert out.read_text() == "the earlier report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "run.trec"]
    assert interrupts.stop_signal() == 0  # forgotten once the command has ended: this process goes on


def _contents(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_swallowed_signal_ends_leaderboard_build_and_keeps_the_leaderboards(tmp_path, monkeypatch, main_cli, trec):
    import importlib

    from negplugins.io.sidecars import write_metadata

    leaderboard_build = importlib.import_module("negplugins.leaderboard.build")

    runs, out = tmp_path / "runs", tmp_path / "leaderboards"
    for name, ranking in (("bm25", {"q01": ["d02", "d01"]}), ("good", {"q01": ["d01", "d02"]})):
        path = trec(runs / "negplugins-demo" / f"{name}.trec", ranking)
        write_metadata(path, dataset="negplugins-demo", runner="external", system=name, tag="t", parameters={},
                       command=f"make {name}")
        if name == "bm25":  # the earlier leaderboards: bm25 only
            assert main_cli("leaderboard", "build", "--runs", runs, "--output", out, cwd=tmp_path).returncode == 0
            before = _contents(out)
    monkeypatch.setattr(leaderboard_build, "write_outputs", _swallowing(leaderboard_build.write_outputs,
                                                                          signal.SIGINT))
    result = main_cli("leaderboard", "build", "--runs", runs, "--output", out, cwd=tmp_path)
    assert (result.returncode, result.stderr.strip().splitlines()[-1:]) == (130, ["negplugins: interrupted"]), \
        result.stderr
    assert _contents(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["leaderboards", "runs"]


def test_an_output_is_not_put_in_place_once_a_signal_was_recorded(tmp_path, monkeypatch):
    from negplugins.io.files import atomic_directory, atomic_writer, written_together

    target = tmp_path / "report.json"
    target.write_text("earlier\n")
    monkeypatch.setattr(interrupts, "_stop_signal", signal.SIGTERM)
    with pytest.raises(interrupts.Terminated):
        with atomic_writer(target) as f:
            f.write("new\n")
    with pytest.raises(interrupts.Terminated):
        with written_together():
            with atomic_writer(target) as f:
                f.write("new\n")
    monkeypatch.setattr(interrupts, "_stop_signal", signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with atomic_directory(tmp_path / "folder") as tmp:
            (tmp / "a.txt").write_text("new\n")
    assert target.read_text() == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
