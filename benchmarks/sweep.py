"""A small sweep through the runner: plan, fit every grid setting, K-means-evaluate every feature
count, write the records, from an empty result store and an empty disk cache.

Per method, its config's grid thinned to the first and last value of every grid parameter (plus
the label-free default), feature counts 10, 20 and 50, 5 seeded K-means runs per count, one
worker (``n_jobs=1``), on seeded synthetic data (200 x 300, 10 planted informative features, 3
clusters). Every timed sweep starts from a fresh store and cache (a new temporary directory per
sample), so nothing is resumed or read back.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from . import _common

FEATURE_COUNTS = [10, 20, 50]
N_RUNS = 5
SHAPE = (200, 300)


def thinned_config(method: str) -> dict:
    """The method config with each grid list cut to its first and last value."""
    from ufsbench.report import method_config

    cfg = dict(method_config(method))
    grid = cfg.get("grid") or {}
    cfg["grid"] = {name: [values[0], values[-1]] if len(values) > 1 else list(values)
                   for name, values in grid.items()}
    return cfg


class Sweep:
    params = [["ls", "mcfs", "udfs", "ndfs"]]
    param_names = ["method"]
    timeout = 300.0
    number = 1          # one sweep per sample: each sample gets its own empty store
    warmup_time = 0.0   # a warm-up sweep would only fill the store the sample then skips

    def setup(self, method: str):
        from ufsbench.datasets import make_synthetic
        from ufsbench.runner import EvaluationProtocol, plan_tasks

        self.dataset = make_synthetic(n_samples=SHAPE[0], n_features=SHAPE[1], n_informative=10,
                                      n_clusters=_common.N_CLUSTERS, random_state=0)
        self.tmp = tempfile.mkdtemp(prefix="ufsbench-asv-sweep-")
        self.cache_before = os.environ.get("UFSBENCH_CACHE")
        os.environ["UFSBENCH_CACHE"] = os.path.join(self.tmp, "cache")
        self.tasks = plan_tasks(self.dataset, thinned_config(method), FEATURE_COUNTS,
                                EvaluationProtocol(n_runs=N_RUNS), seed=0,
                                results_dir=os.path.join(self.tmp, "results"))

    def teardown(self, method: str):
        if self.cache_before is None:
            os.environ.pop("UFSBENCH_CACHE", None)
        else:
            os.environ["UFSBENCH_CACHE"] = self.cache_before
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_sweep(self, method: str):
        self._run()

    def track_records(self, method: str):
        """Records the sweep wrote (settings x counts): a change means the plan changed."""
        return self._run()["records"]

    track_records.unit = "records"

    def _run(self) -> dict:
        from ufsbench.runner import run_sweep

        stats = run_sweep(self.dataset, self.tasks, n_jobs=1, progress=False)
        if stats.get("failed"):
            raise RuntimeError(f"sweep failures: {stats.get('failures')}")
        return stats
