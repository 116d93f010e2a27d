"""Leaderboards built from contributed runs (``runs/<dataset id>/<name>.trec[.gz]`` + ``<name>.meta.json``).

``negplugins leaderboard build`` validates and evaluates every run and writes Markdown, JSON and HTML
leaderboards to ``leaderboards/``; ``negplugins leaderboard check`` (run in CI) fails when the
committed output is stale or a contribution is invalid. See :mod:`negplugins.leaderboard.build`.
"""

from .build import ContributionError, build, check, collect, discover

__all__ = ["ContributionError", "build", "check", "collect", "discover"]
