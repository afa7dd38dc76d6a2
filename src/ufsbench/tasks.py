"""What a sweep is made of: the evaluation protocol, tasks (one data set x method x parameter
setting) and their record keys, the expansion of a method config's grid, the feature counts a
selection kind is evaluated at, and the software environment stored with every record.
"""

from __future__ import annotations

import itertools
import os
import platform
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from ufsbench.datasets import Dataset
from ufsbench.errors import UFSBenchError
from ufsbench.evaluation import NMI_NORMALISATIONS
from ufsbench.methods import method_parameters, selector_class
from ufsbench.presets import apply_preset, preset_label

SCORINGS = ("kmeans", "own_labels")


@dataclass
class EvaluationProtocol:
    """How a feature subset is scored (see ufsbench.evaluation)."""

    n_runs: int = 20
    kmeans_init: str = "random"
    kmeans_max_iter: int = 100
    nmi: str = "max"
    scoring: tuple[str, ...] = ("kmeans",)

    def __post_init__(self):
        self.scoring = tuple(self.scoring)
        bad = [s for s in self.scoring if s not in SCORINGS]
        if bad:
            raise UFSBenchError(f"unknown scoring {bad}; use any of {', '.join(SCORINGS)}")
        if self.nmi not in NMI_NORMALISATIONS:
            raise UFSBenchError(f"unknown NMI normalisation {self.nmi!r}; use one of "
                                f"{', '.join(NMI_NORMALISATIONS)}")
        if int(self.n_runs) < 1:
            raise UFSBenchError(f"evaluation.n_runs={self.n_runs} must be at least 1")

    def with_scoring(self, extra) -> EvaluationProtocol:
        """This protocol plus the scorings a method's config asks for (e.g. DGUFS: own_labels)."""
        scoring = tuple(dict.fromkeys([*self.scoring, *(extra or [])]))
        return EvaluationProtocol(n_runs=self.n_runs, kmeans_init=self.kmeans_init,
                                  kmeans_max_iter=self.kmeans_max_iter, nmi=self.nmi,
                                  scoring=scoring)

    def as_key(self) -> dict:
        return {"n_runs": int(self.n_runs), "kmeans_init": self.kmeans_init,
                "kmeans_max_iter": int(self.kmeans_max_iter), "nmi": self.nmi}


@dataclass
class Task:
    dataset: str
    method: str
    params: dict
    feature_counts: list[int]
    n_clusters: int
    data_checksum: str
    seed: int
    protocol: EvaluationProtocol
    results_dir: str
    threads: int = 1
    keys: list = field(default_factory=list)
    #: Pid of the process running the sweep, for workers on this machine (see _exit_with_sweep).
    main_pid: int | None = None
    #: A user's data file: its column names and where it came from (path, format, label
    #: column), written into each record (not part of the keys).
    feature_names: list | None = None
    data_source: dict | None = None
    #: The method preset the parameters came from (e.g. "released"), written into each record
    #: (not part of the keys: the parameter values are).
    preset: str | None = None

    def data_fields(self, selected) -> dict:
        """What a record says beyond the key: the preset its parameters came from, the file its
        data came from and the names of the selected features, when the data has them."""
        fields: dict[str, Any] = {"preset": self.preset} if self.preset else {}
        if self.data_source:
            fields["data_source"] = self.data_source
        if self.feature_names is not None:
            fields["selected_names"] = [self.feature_names[int(i)] for i in selected]
        return fields

    def record_key(self, n_features: int, scoring: str) -> dict:
        return {**self._method_key(), "params": self.params, "n_features": int(n_features),
                "n_clusters": self.n_clusters, "seed": self.seed, "scoring": scoring,
                "evaluation": self.protocol.as_key()}

    def fit_key(self) -> dict:
        return {**self._method_key(), "params": self.params, "n_clusters": self.n_clusters,
                "seed": self.seed}

    def _method_key(self) -> dict:
        """Data set, checksum and method; plus the method's ``revision`` once it is non-zero."""
        key = {"dataset": self.dataset, "data_checksum": self.data_checksum,
               "method": self.method}
        revision = selector_class(self.method).revision
        return {**key, "revision": revision} if revision else key

    def lock_key(self) -> dict:
        """What a claim covers: the fit and the protocol (not the counts, so that sweeps with
        different feature counts still never fit one setting at the same time)."""
        return {**self.fit_key(), "evaluation": self.protocol.as_key()}


# -- grids -----------------------------------------------------------------------------------
def expand_grid(method_cfg: dict) -> list[dict]:
    """Every parameter setting of a method config: fixed params x cartesian grid (+ the default),
    after its ``preset`` (if any) is applied. A grid axis sweeps a parameter the config also
    fixes (``+method.grid.k=[3,5]``); the command line refuses the converse, a fixed value of a
    grid axis (:func:`ufsbench.run_config.check_override_keys`)."""
    method_cfg = apply_preset(method_cfg)
    name = method_cfg["name"]
    fixed = dict(method_cfg.get("params") or {})
    grid = {k: list(v) if isinstance(v, (list, tuple)) else [v]
            for k, v in (method_cfg.get("grid") or {}).items()}
    default = dict(method_cfg.get("default") or {})
    known = set(method_parameters(name))
    for source, keys in (("params", fixed), ("grid", grid), ("default", default)):
        unknown = sorted(set(keys) - known)
        if unknown:
            raise UFSBenchError(f"unknown parameter(s) {', '.join(unknown)} in method.{source} of "
                                f"{name!r}; its parameters are: {', '.join(sorted(known))}")
    settings = [dict(fixed, **dict(zip(grid, combo))) for combo in itertools.product(*grid.values())]
    default_setting = dict(fixed, **default)
    if default_setting not in settings:
        settings.append(default_setting)
    return settings


def feature_counts_for(counts, n_features: int, selection_kind: str) -> list[int]:
    """The data set's feature counts capped at d (all features for "all" methods)."""
    if selection_kind == "all":
        return [n_features]
    capped = sorted({min(int(m), n_features) for m in counts if int(m) >= 1})
    if not capped:
        raise UFSBenchError("no valid feature count: give positive integers, e.g. "
                            "feature_counts=[50,100]")
    return capped


# -- environment for records -----------------------------------------------------------------
@lru_cache(maxsize=1)
def environment() -> dict:
    import joblib
    import scipy
    import sklearn

    import ufsbench

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(ufsbench.__file__), timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"ufsbench": ufsbench.__version__, "git_commit": commit or None,
            "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "sklearn": sklearn.__version__,
            "joblib": joblib.__version__, "platform": platform.platform(), "blas": _blas()}


def _blas() -> str:
    """The BLAS libraries and the kernels they chose for this CPU (e.g. "openblas 0.3.31
    SkylakeX"): round-off, and with it a round-off-sensitive result, depends on them."""
    from threadpoolctl import threadpool_info

    return "; ".join(f"{os.path.basename(lib.get('filepath') or '?')}: {lib.get('internal_api')} "
                     f"{lib.get('version')} {lib.get('architecture')}"
                     for lib in threadpool_info() if lib.get("user_api") == "blas")


def plan_tasks(dataset: Dataset, method_cfg: dict, feature_counts, protocol: EvaluationProtocol,
               seed: int, results_dir: str | os.PathLike[str]) -> list[Task]:
    """The tasks of one (dataset, method config), with the pending ones first."""
    return [Task(dataset=dataset.name, method=method_cfg["name"], params=params,
                 feature_counts=list(feature_counts), n_clusters=dataset.n_classes,
                 data_checksum=dataset.checksum, seed=int(seed), protocol=protocol,
                 results_dir=str(results_dir), feature_names=dataset.feature_names,
                 data_source=dataset.meta.get("source"), preset=preset_label(method_cfg))
            for params in expand_grid(method_cfg)]


