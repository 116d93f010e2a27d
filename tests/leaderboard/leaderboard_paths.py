"""Paths of the project and of the shared real data (as in tests/conftest.py)."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
