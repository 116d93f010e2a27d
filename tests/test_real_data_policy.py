"""Real-data tests skip without ../shared/data, but fail in CI (CI=true): the rule of tests/conftest.py, end to end.

The suite's conftest is copied into a project with no ``../shared`` beside it, and pytest runs there on a test
marked ``realdata``, one asking for ``shared_data``, one that finds its data missing during its run, and a plain one.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TESTS = '''import pytest


@pytest.mark.realdata
def test_marked():
    pass


def test_fixture(shared_data):
    pass


def test_found_missing_late(missing_real_data):
    missing_real_data("a dataset's data is not available here")


def test_plain():
    pass
'''


def _pytest_without_real_data(tmp_path, ci):
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "conftest.py", project / "tests" / "conftest.py")
    (project / "tests" / "test_needs_data.py").write_text(TESTS)
    (project / "pytest.ini").write_text("[pytest]\nmarkers =\n    realdata: reads the real data\n")
    assert not (tmp_path / "shared").exists()
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "tests"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("ci", [None, "false", "1"])
def test_missing_real_data_is_skipped_outside_ci(tmp_path, ci):
    result = _pytest_without_real_data(tmp_path, ci)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 3 skipped" in result.stdout
    assert "the real ComLQ release is not at" in result.stdout


@pytest.mark.parametrize("ci", ["true", "TRUE"])
def test_missing_real_data_fails_in_ci(tmp_path, ci):
    result = _pytest_without_real_data(tmp_path, ci)
    assert result.returncode == 1, result.stdout + result.stderr
    # a test whose data is found missing before it runs (marker, fixture) errors in set-up, the other fails
    assert "1 failed, 1 passed, 2 errors" in result.stdout
    failed = [line for line in result.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert len(failed) == 3 and all("CI=true, where the real data must be present" in line for line in failed)
    assert {line.split("::")[1].split(" ")[0] for line in failed} == {
        "test_marked", "test_fixture", "test_found_missing_late"}
