"""Scoring runs on a dataset: measures overall and per subset, significance tests, reports (docs/evaluation.md)."""

from .results import Comparison, Evaluation
from .scoring import DEFAULT_MEASURES, Evaluator, default_measures, evaluate, evaluate_runs

__all__ = ["Evaluator", "Evaluation", "Comparison", "evaluate", "evaluate_runs", "default_measures",
           "DEFAULT_MEASURES"]
