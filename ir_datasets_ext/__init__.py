"""ir_datasets entries for negation, exclusion and Boolean-logic retrieval benchmarks: importing this package registers
them (then ``ir_datasets.load("comlq/negation")``); nothing is downloaded until a dataset's files are first read.
Offline use: set ``IR_DATASETS_EXT_MIRROR`` to a folder laid out as ``<benchmark>/<original file>``.
"""

import importlib
import pkgutil

from . import datasets
from .download import MIRROR_ENV  # noqa: F401
from .spec import Benchmark, Reported, benchmark_of, benchmarks, register_benchmark  # noqa: F401
from .util import register_family_roots

for _module in pkgutil.iter_modules(datasets.__path__):  # each registers its datasets and its spec
    importlib.import_module(f"{datasets.__name__}.{_module.name}")
register_family_roots(benchmarks())  # every benchmark's bare id is an entry, as ir_datasets' "beir"

__version__ = "0.1.0"
