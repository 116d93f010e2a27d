"""Fixtures shared by the whole suite.

Every test runs with its own ``IR_DATASETS_HOME`` (nothing touches the user's cache) and without a mirror
unless it asks for one. ``shared_data`` is ``../shared/data`` beside the project root, the real ComLQ
release; tests that need it are marked ``realdata`` and skipped when it is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def isolated_ir_datasets_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("ir_datasets_home")
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    monkeypatch.delenv("IR_DATASETS_EXT_MIRROR", raising=False)
    return home


@pytest.fixture
def shared_data():
    if not (SHARED_DATA / "comlq" / "dataset.zip").is_file():
        pytest.skip(f"the real ComLQ release is not at {SHARED_DATA}/comlq/dataset.zip")
    return SHARED_DATA


@pytest.fixture
def comlq_mirror(shared_data, monkeypatch):
    """The real ComLQ release, served through the offline mirror variable."""
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(shared_data))
    return shared_data


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """An empty mirror folder set as ``IR_DATASETS_EXT_MIRROR``; tests write fixture files into it."""
    root = tmp_path / "mirror"
    root.mkdir()
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(root))
    return root
