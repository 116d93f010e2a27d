"""Leaderboards built from the contributed runs in ``runs/`` (docs/leaderboards.md)."""

from .build import build, check, collect
from .contributions import ContributionError, discover

__all__ = ["ContributionError", "build", "check", "collect", "discover"]
