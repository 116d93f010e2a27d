"""One model, every benchmark: ``negplugins benchmark`` and its Python API.

* :mod:`~negplugins.reportcard.suite`: :func:`run_benchmark` runs each benchmark's protocol with a model,
  evaluates it and writes the runs, the results, a summary and a report;
* :mod:`~negplugins.reportcard.report`: the report (Markdown, HTML, SVG figure), rendered from the summary;
  :mod:`~negplugins.reportcard.card` decides what it says (context systems, where the model stands);
* :mod:`~negplugins.reportcard.commands`: the ``negplugins benchmark`` command.

It sits above the runners and the evaluation (datasets -> runs -> evaluation -> report card) and imports
nothing of the leaderboards; ``--contribute`` hands them runs through ``runs/``.
"""

from .suite import BenchmarkOutcome, BenchmarkResult, run_benchmark, select_benchmarks, write_report

__all__ = ["BenchmarkOutcome", "BenchmarkResult", "run_benchmark", "select_benchmarks", "write_report"]
