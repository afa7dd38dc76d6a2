"""Mean ranks of methods across data sets with the Friedman test and the Nemenyi critical
difference (Demšar, "Statistical Comparisons of Classifiers over Multiple Data Sets", JMLR 2006).

Pure statistics on the report's cells: no figures (``ufsbench.plots.cd_figure`` draws them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ufsbench.errors import UFSBenchError
from ufsbench.report import select_cells, series_label


@dataclass
class RankTest:
    """Mean ranks over data sets with the Friedman test and the Nemenyi critical difference."""

    ranks: pd.DataFrame          # data sets x methods, 1 = best (ties share the average rank)
    mean_ranks: pd.Series        # per method, ascending (best first)
    cd: float                    # Nemenyi critical difference at alpha
    alpha: float
    statistic: float | None      # Friedman chi^2 (None with fewer than 3 methods)
    pvalue: float | None
    dropped: list = field(default_factory=list)  # data sets left out: a method had no result

    @property
    def n_datasets(self) -> int:
        return self.ranks.shape[0]

    @property
    def n_methods(self) -> int:
        return self.ranks.shape[1]


def nemenyi_cd(n_methods: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Demšar's critical difference q_alpha sqrt(k(k+1) / 6N), q from the studentized range."""
    from scipy.stats import studentized_range

    q = studentized_range.ppf(1 - alpha, n_methods, np.inf) / math.sqrt(2)
    return float(q * math.sqrt(n_methods * (n_methods + 1) / (6 * n_datasets)))


def rank_methods(df: pd.DataFrame, metric: str = "acc", rule: str = "paper",
                 summary: str = "mean", alpha: float = 0.05) -> RankTest:
    """Rank the methods on every data set where all of them have a cell, then test (Demšar 2006).

    The cells are the report's (``select_cells``): one per (data set, method, variant, scoring).
    """
    from scipy.stats import friedmanchisquare, rankdata

    cells = select_cells(df, metric, rule, summary)
    if cells.empty:
        raise UFSBenchError(f"no stored cell matches the {rule!r} rule; nothing to rank")
    cells = cells.assign(label=[series_label(m, s, v) for m, s, v in
                                zip(cells["method"], cells["scoring"], cells["variant"])])
    table = cells.pivot_table(index="dataset", columns="label", values="value", aggfunc="max")
    complete = table.dropna()
    dropped = sorted(set(table.index) - set(complete.index))
    if complete.shape[0] < 2 or complete.shape[1] < 2:
        raise UFSBenchError(f"ranking needs at least 2 methods with results on at least 2 common "
                            f"data sets; have {complete.shape[1]} method(s) on "
                            f"{complete.shape[0]} common data set(s) (incomplete: "
                            f"{', '.join(dropped) or 'none'}); restrict with --method/--dataset")
    ranks = pd.DataFrame(rankdata(-complete.to_numpy(), axis=1), index=complete.index,
                         columns=complete.columns)
    statistic = pvalue = None
    if complete.shape[1] >= 3:
        statistic, pvalue = _friedman(complete.to_numpy(), friedmanchisquare)
    return RankTest(ranks=ranks, mean_ranks=ranks.mean().sort_values(kind="stable"),
                    cd=nemenyi_cd(complete.shape[1], complete.shape[0], alpha), alpha=alpha,
                    statistic=statistic, pvalue=pvalue, dropped=dropped)


def _friedman(values: np.ndarray, friedmanchisquare) -> tuple[float, float]:
    """Friedman chi^2 and p over the columns; all-tied rows (no evidence either way) give 0, 1.

    scipy's tie correction divides by zero when every data set ties every method.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = friedmanchisquare(*values.T)
    if not np.isfinite(result.statistic):
        return 0.0, 1.0
    return float(result.statistic), float(result.pvalue)


def cliques(mean_ranks: pd.Series, cd: float) -> list[tuple[int, int]]:
    """Maximal runs (i, j) of rank-sorted methods whose mean ranks differ by less than cd."""
    values = mean_ranks.to_numpy()
    runs: list[tuple[int, int]] = []
    for i in range(len(values)):
        j = i
        while j + 1 < len(values) and values[j + 1] - values[i] < cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in runs):
            runs.append((i, j))
    return runs


def rank_table(test: RankTest) -> pd.DataFrame:
    """Ranks per data set with the mean rank as the last row, methods ordered best first."""
    table = test.ranks[test.mean_ranks.index]
    return pd.concat([table, test.mean_ranks.to_frame("mean rank").T])
