"""One model, every benchmark: ``negplugins benchmark`` and its Python API (docs/report-card.md)."""

from .suite import BenchmarkOutcome, BenchmarkResult, run_benchmark, select_benchmarks, write_report

__all__ = ["BenchmarkOutcome", "BenchmarkResult", "run_benchmark", "select_benchmarks", "write_report"]
