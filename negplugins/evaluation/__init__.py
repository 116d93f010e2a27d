"""Scoring runs on a dataset: validation, measures overall and per subset, significance tests, reports.

* :mod:`~negplugins.evaluation.scoring`: :func:`evaluate`, :func:`evaluate_runs`, default measures;
* :mod:`~negplugins.evaluation.results`: the :class:`Evaluation` and :class:`Comparison` records;
* :mod:`~negplugins.evaluation.validation`: run validation (``negplugins validate``);
* :mod:`~negplugins.evaluation.significance`: paired tests, Holm correction, confidence intervals;
* :mod:`~negplugins.evaluation.reports`: tables, JSON, CSV and LaTeX.
"""

from .results import Comparison, Evaluation
from .scoring import DEFAULT_MEASURES, default_measures, evaluate, evaluate_runs, lower_is_better, parse_measures

__all__ = ["Evaluation", "Comparison", "evaluate", "evaluate_runs", "default_measures", "parse_measures",
           "lower_is_better", "DEFAULT_MEASURES"]
