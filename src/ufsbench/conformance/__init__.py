"""Conformance of the ``released`` presets to the outputs of the authors' own code.

A *case* is one JSON file (``<method>__<dataset>__<setting>.json``) written by running the
authors' released code on a data set: the exact call and every parameter, per-feature scores,
the full ranking, the selected sets, labels, the random starts the code drew, tie groups at the
cuts and how much the authors' own ranking moves under another BLAS thread count
(``numerical_sensitivity``). :func:`check_case` fits our ``released`` preset with the case's
parameters and compares the top-50 and top-100 sets.

What is compared, per feature count m in (50, 100):

* the authors' set: ``selected[m]`` when the code returns subsets, else the top m of ``ranking``;
* ours: the fitted selector's top m (a subset method is refitted at m);
* a tie group of the authors' scores that straddles the cut is compared as a group: its members
  are taken out of both sets, which must then agree, and both must hold as many of its members;
* the bar is a Jaccard index of at least :data:`JACCARD_BAR`, exact (1.0) when the case has no
  tie at the cut. Where the authors' ranking itself moves with the BLAS thread count, the bar is
  the overlap their code keeps with itself (the case's ``numerical_sensitivity``).

The mapping from a case's parameters to ours lives in one module per method,
``ufsbench.conformance.<method>``, with ``case_params(case, X) -> dict`` (overrides on top of
the ``released`` preset) and, where a documented degeneracy makes set agreement meaningless,
``weaker_property(case, selectors) -> (bool, str)``: the property that does hold.
"""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ufsbench.errors import DataError, UFSBenchError

#: Feature counts every case is compared at.
CUTS = (50, 100)
#: Minimum Jaccard index of the top-m sets where ties or round-off allow no exact match.
JACCARD_BAR = 0.95


@dataclass
class CaseResult:
    """One case's comparison: Jaccard indices of the top-m sets, whether it matches, and how."""

    case_id: str
    method: str
    dataset: str
    setting: str
    jaccard: dict
    match: bool
    how: str

    def row(self) -> list:
        return [self.method, self.dataset, self.setting,
                *(f"{self.jaccard[m]:.2f}" if m in self.jaccard else "—" for m in CUTS),
                "match" if self.match else "DIFFERS", self.how]


def reference_dir() -> Path | None:
    """Where the shared reference cases are: ``$UFSBENCH_REFERENCE_OUTPUTS``, else
    ``reference-outputs`` beside the data directory ``$UFSBENCH_DATA``; None when absent."""
    explicit = os.environ.get("UFSBENCH_REFERENCE_OUTPUTS")
    if explicit:
        return Path(explicit) if Path(explicit).is_dir() else None
    data = os.environ.get("UFSBENCH_DATA")
    if data:
        candidate = Path(data).expanduser().resolve().parent / "reference-outputs"
        if candidate.is_dir():
            return candidate
    return None


def case_files(directory) -> list[Path]:
    """Every case file (``<method>__<dataset>__<setting>.json``) in ``directory``, sorted."""
    return sorted(p for p in Path(directory).glob("*__*__*.json"))


def load_case(path) -> dict:
    with open(path) as fh:
        return json.load(fh)


def mapping(method: str):
    """The module holding the case-to-parameter mapping of ``method``, or None."""
    try:
        return importlib.import_module(f"ufsbench.conformance.{method}")
    except ModuleNotFoundError as exc:
        if exc.name != f"ufsbench.conformance.{method}":
            raise
        return None


def case_data(case: dict, data_dir=None) -> np.ndarray:
    """The case's X (n x d, float64, as the authors' call saw it), checked against its sha256."""
    from ufsbench.datasets.registry import file_sha256, read_mat
    from ufsbench.paths import default_data_dir

    directory = Path(data_dir) if data_dir else default_data_dir()
    path = directory / f"{case['dataset']}.mat"
    if not path.is_file():
        raise DataError(f"{path} not found: case {case['case_id']} needs data set "
                        f"{case['dataset']}; give --data-dir or set UFSBENCH_DATA")
    if file_sha256(path) != case["dataset_sha256"]:
        raise DataError(f"{path} is not the file case {case['case_id']} was made from "
                        f"(sha256 differs)")
    return read_mat(path)[0]


def fit_case(case: dict, X: np.ndarray | None = None, n_features: int = max(CUTS),
             data_dir=None):
    """Our ``released`` fit with the case's parameters (at ``n_features``)."""
    from ufsbench.methods import make_selector

    module = mapping(case["method"])
    if module is None:
        raise UFSBenchError(f"no conformance mapping for method {case['method']!r}")
    X = case_data(case, data_dir) if X is None else X
    params = module.case_params(case, X)
    return make_selector(case["method"], preset="released", n_features_to_select=n_features,
                         **params).fit(X)


def authors_set(case: dict, m: int) -> set:
    selected = case.get("selected") or {}
    if str(m) in selected:
        return set(selected[str(m)])
    return set(case["ranking"][:m])


def straddling_group(case: dict, m: int) -> set | None:
    """Members of the authors' tie group that straddles the cut at m (None when none does; the
    whole tail when the group is too large to list: its ranks are given)."""
    for group in (case.get("ties") or {}).get("groups_in_top100", []):
        if group["rank_start"] < m <= group["rank_end"]:
            members = group["members"]
            if isinstance(members, list):
                return set(members)
            return set(case["ranking"][group["rank_start"]: group["rank_end"] + 1])
    return None


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def self_overlap(case: dict, m: int) -> float | None:
    """The fraction of the authors' top m their own code keeps under another BLAS thread count
    (None when the case records no change)."""
    sensitivity = case.get("numerical_sensitivity") or {}
    if sensitivity.get("identical_ranking", True):
        return None
    return sensitivity[f"top{m}_overlap"] / m


def compare_sets(case: dict, ours: dict[int, set]) -> tuple[dict, bool, str]:
    """(Jaccard per cut, match, how) of our top-m sets against the authors'."""
    scores, ok, hows = {}, True, []
    for m, our_set in ours.items():
        theirs = authors_set(case, m)
        group = straddling_group(case, m)
        if group is not None:
            same_share = len(our_set & group) == len(theirs & group)
            scores[m] = jaccard(our_set - group, theirs - group)
            ok &= same_share and scores[m] >= JACCARD_BAR
            hows.append(f"tie group of {len(group)} at {m} compared as a group")
            continue
        scores[m] = jaccard(our_set, theirs)
        floor = self_overlap(case, m)
        if floor is not None:
            bar = min(JACCARD_BAR, floor / (2 - floor))   # overlap fraction -> Jaccard
            ok &= scores[m] >= bar
            hows.append(f"bar {bar:.2f} at {m}: the authors' own ranking moves with BLAS threads")
        else:
            ok &= scores[m] == 1.0
    return scores, bool(ok), "; ".join(hows) or "exact"


def check_case(case: dict, data_dir=None) -> CaseResult:
    """Fit our ``released`` preset on one case and compare (see the module docstring)."""
    from ufsbench.methods.base import declared

    X = case_data(case, data_dir)
    if declared(case["method"], "selection_kind") == "subset":
        fits = {m: fit_case(case, X, m) for m in CUTS}
    else:
        fit = fit_case(case, X)
        fits = dict.fromkeys(CUTS, fit)
    ours = {m: set(fits[m].top_features(m).tolist()) for m in CUTS}
    scores, ok, how = compare_sets(case, ours)
    weaker = getattr(mapping(case["method"]), "weaker_property", None)
    if weaker is not None:
        held, property_ = weaker(case, fits)
        if property_:
            ok, how = held, property_
    setting = case["case_id"].split("__", 2)[-1]
    return CaseResult(case["case_id"], case["method"], case["dataset"], setting, scores, ok, how)
