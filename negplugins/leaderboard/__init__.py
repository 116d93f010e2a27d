"""Leaderboards built from the contributed runs in ``runs/`` (docs/leaderboards.md)."""

from .build import ContributionError, build, check, collect, discover

__all__ = ["ContributionError", "build", "check", "collect", "discover"]
