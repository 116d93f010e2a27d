"""Fixtures for the hostile- and careless-input tests (nothing a user owns is ever lost); the helpers they share are
in safety_helpers.py."""

from __future__ import annotations

import pytest
from safety_helpers import Guard, run_cli


@pytest.fixture
def guard() -> Guard:
    return Guard()


@pytest.fixture
def cli():
    return run_cli
