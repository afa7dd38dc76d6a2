"""Optional: fits on the paper data sets, read from ``$UFSBENCH_DATA`` (never downloaded).

Skipped (asv: ``n/a``) when ``$UFSBENCH_DATA`` is not set or the data set's file is absent.

* ``DefaultFit``: every registered method's default fit (typical setting, 100 features, the data
  set's class count, ``random_state=0``) on three paper data sets: jaffe (213 x 676), coil20
  (1440 x 1024) and prostate_ge (102 x 5966); ``track_n_iter`` is the iterations it ran.
* ``ScalingUSPS``: DGUFS, SOGFS and SF2SOG on seeded subsets of USPS (n = 1000, 2000, 4000 of
  9298, d = 256): their cost in n on real data. DGUFS's dense n x n ADMM takes minutes at
  n = 4000.

``benchmarks/bench_default_fits.py`` prints the whole table (every method on every paper data
set with n <= 2000, CPU seconds, iterations, convergence) in one run.
"""

from __future__ import annotations

from . import _common

DATASETS = ["jaffe", "coil20", "prostate_ge"]


class DefaultFit:
    params = [_common.METHODS, DATASETS]
    param_names = ["method", "data set"]
    timeout = 600.0

    def setup(self, method: str, dataset: str):
        self.X, n_classes = _common.real_data(dataset)
        self.selector = _common.selector(method, self.X, n_classes, n_features=100)

    def time_fit(self, method: str, dataset: str):
        _common.fit_quietly(self.selector, self.X)

    def track_n_iter(self, method: str, dataset: str):
        """Iterations of the fit (0 for methods that do not iterate)."""
        fitted = _common.fit_quietly(self.selector, self.X)
        return int(getattr(fitted, "n_iter_", 0) or 0)

    track_n_iter.unit = "iterations"


class ScalingUSPS:
    params = [["dgufs", "sogfs", "sf2sog"], [1000, 2000, 4000]]
    param_names = ["method", "n"]
    timeout = 1800.0

    def setup(self, method: str, n: int):
        self.X, n_classes = _common.real_data("usps", n)
        self.selector = _common.selector(method, self.X, n_classes, n_features=100)

    def time_fit(self, method: str, n: int):
        _common.fit_quietly(self.selector, self.X)
