"""The selector base class every method derives from, and the method registry.

A selector is a scikit-learn estimator (``BaseEstimator`` + ``SelectorMixin``). A subclass sets its
parameters in ``__init__`` (always ``n_features_to_select``, then keyword-only ``n_clusters``,
``random_state`` and its own) and
implements ``_fit(X)``, which must set either

* ``scores_`` (n_features,) -- higher means more important -- for a method that *ranks* features
  (``selection_kind = "ranking"``): one fit serves every feature count, or
* ``support_`` (n_features,) boolean with exactly ``n_features_to_select`` True entries, for a
  method that returns an exact subset (``selection_kind = "subset"``, e.g. l2,0 models): the
  runner refits it per feature count -- unless the class declares ``one_fit_serves_counts``:
  then a fit with ``n_features_to_select = H`` also holds the exact subset a fit with any
  h <= H would select, ``top_features(h)`` returns it (through the method's ``_subset_for(h)``,
  which must equal the refit's ``support_`` bit for bit; its tests must check that) and the
  runner fits once per setting at the largest count.

Joint methods that learn cluster labels also set ``labels_``; iterative ones record the objective
per iteration in ``objective_history_`` and end through :meth:`UFSSelector._stopped`, which sets
``n_iter_`` and ``converged_`` (whether the method's stated convergence test ended the fit, rather
than its iteration cap) and warns with a ``ConvergenceWarning`` when the cap ended it.

A method's config (``configs/method/<name>.yaml``) may name *presets*: sets of parameter values,
such as ``released`` (what the authors' public code runs). ``make_selector(name,
preset="released", **overrides)`` starts from a preset; see :mod:`ufsbench.presets`.

Parameters are validated once, at the entry of ``fit``, from the class's declarative
``_parameter_constraints`` (scikit-learn's ``Interval``, ``StrOptions``, ...; the base class
declares the three common ones and a subclass extends the dict) plus the data-free relations
between parameters a subclass checks in ``_check_parameter_relations``. Both need no data, so
:func:`check_setting` runs them for every grid point before a sweep computes anything; only
checks that need X (e.g. ``n_components < n_features``) stay in ``_fit``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings
from contextlib import nullcontext
from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, InvalidParameterError
from sklearn.utils.validation import check_is_fitted, validate_data

from ufsbench.errors import UFSBenchError
from ufsbench.numerics import ranking_from_scores
from ufsbench.numerics.lanes import one_blas_thread
from ufsbench.numerics.sparsity import tie_groups

DEFAULT_N_FEATURES = 50
#: Constraints that most selectors' parameters share (``_parameter_constraints`` values).
POSITIVE = [Interval(Real, 0, None, closed="neither")]
NON_NEGATIVE = [Interval(Real, 0, None, closed="left")]
POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
#: The constraint of a selector's ``memory`` parameter (opt-in disk cache of its data-only
#: intermediates, see :mod:`ufsbench.cache`): None, a directory, or a joblib.Memory.
MEMORY_CONSTRAINT = [None, str, HasMethods(["cache"])]


class NonNumericInputError(UFSBenchError, TypeError):
    """X holds values that are not numbers (a TypeError too, as scikit-learn expects)."""


class InvalidSelectorParameterError(UFSBenchError, InvalidParameterError):
    """A selector parameter outside its declared constraints, or two parameters that contradict
    each other: one line naming the parameter, what it must be and the value given (a
    ``UFSBenchError`` for the CLI, an ``InvalidParameterError`` for scikit-learn)."""


class DegenerateScoresWarning(UserWarning):
    """A ranking fit gave every feature the same score: its selection is not the model's."""


def _warn_if_scores_all_equal(name: str, scores: np.ndarray) -> None:
    finite = scores[np.isfinite(scores)]
    if scores.size > 1 and (finite.size == 0 or np.ptp(finite) == 0.0):
        value = finite[0] if finite.size else np.nan
        warnings.warn(f"{name}: all {scores.size} feature scores are equal ({value:g}), so the "
                      "selection is simply the lowest feature indices; at these parameters the "
                      "model shrinks every feature alike (e.g. a sparsity weight too large for "
                      "the data's scale)", DegenerateScoresWarning, stacklevel=3)


#: Seconds of one BLAS thread per d^3 of a dense symmetric eigendecomposition (LAPACK's divide
#: and conquer, all eigenvectors) on the reference machine of :class:`FitCost`: 1.65e-10 at
#: d = 2000, 1.88e-10 at d = 4000 (2026-11-27).
DENSE_EIGH_SECONDS_PER_CUBE = 1.8e-10


@dataclass(frozen=True)
class FitCost:
    """A rough cost of one fit, for a note before a long run: CPU seconds on one BLAS thread of
    the machine the models were measured on (a 2-core AMD EPYC, OpenBLAS), within a factor of
    about 3 of the default fits there (data decide how many steps a bound or a convergence test
    saves), the largest working memory in bytes, and what dominates."""

    seconds: float
    memory_bytes: float
    dominated_by: str


class UFSSelector(SelectorMixin, BaseEstimator):
    """Base class of all unsupervised feature selectors (see the module docstring)."""

    #: "ranking" (one fit, any feature count), "subset" (refit per count) or "all" (no selection).
    selection_kind: ClassVar[str] = "ranking"
    #: Registry id, set by :func:`register`.
    method_id: ClassVar[str] = ""
    #: True when ``random_state`` reaches only the step that draws ``labels_`` from the fitted
    #: model (e.g. an eigensolver's random start), never the fit itself: then one fit serves
    #: every seed through :meth:`labels_for_seed`. A method declaring it implements
    #: ``_labels_for_seed`` and keeps its fit deterministic (its tests must check both).
    random_state_only_in_labels: ClassVar[bool] = False
    #: Subset methods only: True when a fit with n_features_to_select = H gives, through
    #: :meth:`top_features`, the exact subset a fit with any h <= H would select (e.g. a path
    #: whose shorter runs are its prefixes). A method declaring it implements ``_subset_for``.
    one_fit_serves_counts: ClassVar[bool] = False
    #: Raised whenever a change of the method alters what its fits select (a decision taken
    #: differently, not round-off). The runner puts it in the record keys when it is non-zero,
    #: so records of an earlier revision in a store are not served as current; revision 0
    #: leaves the keys as they always were.
    revision: ClassVar[int] = 0
    #: Ranking methods: scores within this relative distance of each other (see
    #: :func:`ufsbench.numerics.ranking_from_scores`) count as tied, and tied features are
    #: ordered by a permutation drawn from ``random_state`` (0 when None) rather than by index.
    #: 0 = exact comparison, ties by index; a method sets it where its scores tie up to
    #: round-off in large groups (the model then has no preference inside the group).
    score_tie_rtol: ClassVar[float] = 0.0
    #: True when the selection is itself a random draw (a chance baseline): the runner then
    #: evaluates a fresh draw per K-means run, draw i and run i both seeded with the run's
    #: seed + i, so a record's spread covers both sources of randomness.
    draws_per_run: ClassVar[bool] = False
    #: True for a model rebuilt without the paper's full text or code (not a faithful
    #: reproduction): reports mark its rows "[reconstructed]".
    reconstructed: ClassVar[bool] = False
    #: True when the fit runs BLAS on one thread whatever the caller allows: for a method whose
    #: iterations are many thin or medium-sized products, where OpenBLAS's threads cost more than
    #: they save (measured on every paper data set, basehock and USPS: K-means UFS on allaml
    #: 8.8 s on one thread, 32.5 s on two; SOCFS on isolet 2.5 and 12.3 s; none faster on two),
    #: or whose iterates amplify another thread count's round-off into another selection (EUFS,
    #: K-means UFS). Its direct fits also select what the runner's one-thread records hold, on
    #: any number of cores. The limit is threadpoolctl's, process-wide: fit such methods in
    #: processes, not in threads of one process (a thread that ends its fit restores the limit
    #: for the others).
    single_threaded_blas: ClassVar[bool] = False
    #: What each constructor parameter may be (scikit-learn's declarative validation). A
    #: subclass extends it: ``{**UFSSelector._parameter_constraints, "k": [...], ...}``.
    _parameter_constraints: ClassVar[dict] = {
        "n_features_to_select": [Interval(Integral, 1, None, closed="left"), None],
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def _validate_params(self) -> None:
        """Every parameter against ``_parameter_constraints``, then the data-free relations
        between parameters (``_check_parameter_relations``); raises
        :class:`InvalidSelectorParameterError` with one line."""
        try:
            super()._validate_params()
        except InvalidParameterError as exc:
            raise InvalidSelectorParameterError(str(exc)) from None
        for name, constraints in self._parameter_constraints.items():
            value = getattr(self, name)
            # Python counts True as the integer 1, so Interval accepts it; a flag given for a
            # number is a mistake (e.g. a shifted positional argument).
            if isinstance(value, (bool, np.bool_)) and "boolean" not in constraints:
                raise InvalidSelectorParameterError(
                    f"The '{name}' parameter of {type(self).__name__} must be a number, not a "
                    f"boolean. Got {value!r} instead.")
        self._check_parameter_relations()

    def _neighbours(self, n_samples: int, reserve: int = 1) -> int:
        """``k`` (the neighbours of the method's graph) capped at ``n_samples - reserve``, the
        most the data allow (``reserve`` = 1: the sample itself; 2 where the (k+1)-th neighbour
        is read too). A cap warns: every k above it gives the same fit, which a sweep over k
        would otherwise show without saying why."""
        cap = max(1, n_samples - reserve)
        if self.k > cap:
            warnings.warn(f"{type(self).__name__}: k={self.k} exceeds what {n_samples} samples "
                          f"allow; the graph uses k={cap} (every k >= {cap} gives this fit)",
                          UserWarning, stacklevel=3)
            return cap
        return int(self.k)

    @classmethod
    def expected_fit_cost(cls, n_samples: int, n_features: int, params: dict,
                          nonzero_fraction: float = 1.0) -> FitCost | None:
        """A rough cost of one fit on n_samples x n_features at ``params`` (constructor
        parameters), where the method has a model of it; None otherwise. ``nonzero_fraction``:
        the share of non-zero entries of X, for methods whose products read mostly-zero data
        through its non-zeros. Methods whose default fits can take minutes on data of a few
        thousand samples or features declare it, so that ``ufsbench run`` and ``select`` can say
        so before they start."""
        return None

    def _check_parameter_relations(self) -> None:
        """Raise :class:`InvalidSelectorParameterError` when parameters that are each valid
        contradict each other (e.g. a start above its cap). Needs no data; none by default."""

    def _check_sample_starts(self, init, name: str = "init") -> None:
        """Recorded K-means starts (``init``: one row of n_clusters distinct sample indices per
        start, as the authors' code drew them), checked without data; None passes."""
        if init is None:
            return
        starts = np.asarray(init)
        if (starts.ndim != 2 or starts.shape[0] < 1 or starts.shape[1] != self.n_clusters
                or not np.issubdtype(starts.dtype, np.integer) or starts.min() < 0):
            raise self._invalid(f"{name} must be sample indices, one row of n_clusters="
                                f"{self.n_clusters} non-negative integers per K-means start; "
                                f"got an array of shape {starts.shape} and dtype {starts.dtype}")
        if any(np.unique(row).size != row.size for row in starts):
            raise self._invalid(f"{name}: the starts of one K-means run must be distinct samples")

    def _sample_starts(self, init, n: int, name: str = "init") -> np.ndarray | None:
        """Recorded K-means starts as an int array, checked against the n samples of X (None
        when not given)."""
        if init is None:
            return None
        starts = np.asarray(init, dtype=np.intp)
        if starts.max() >= n:
            raise self._invalid(f"{name} holds sample index {starts.max()}, but X has {n} samples")
        return starts

    def _invalid(self, message: str) -> InvalidSelectorParameterError:
        """The error a relation check raises: ``"<Class>: <message>"``."""
        return InvalidSelectorParameterError(f"{type(self).__name__}: {message}")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit on X (n_samples, n_features). ``y`` is ignored: selectors never see labels."""
        X = self._validate_fit_input(X)
        self.n_features_to_select_ = self._resolve_n_features(X.shape[1])
        self.n_clusters_ = self._resolve_n_clusters(X.shape[0])
        with one_blas_thread() if self.single_threaded_blas else nullcontext():
            self._fit(X)
        if self.selection_kind == "ranking":
            self.scores_ = np.asarray(self.scores_, dtype=float)
            _warn_if_scores_all_equal(type(self).__name__, self.scores_)
            self.ranking_ = self._rank(self.scores_)
            self.support_ = np.zeros(X.shape[1], dtype=bool)
            self.support_[self.ranking_[: self.n_features_to_select_]] = True
        elif self.selection_kind == "all":
            self.support_ = np.ones(X.shape[1], dtype=bool)
        return self

    def _stopped(self, n_iter: int, converged: bool, test: str = "") -> None:
        """Record how an iterative fit ended: ``n_iter_`` iterations, ``converged_`` True when
        the convergence test ``test`` (e.g. "relative objective change <= tol") stopped it, False
        when ``max_iter`` did, which is also reported as a ``ConvergenceWarning``."""
        self.n_iter_, self.converged_ = int(n_iter), bool(converged)
        if not converged:
            rule = f" ({test})" if test else ""
            warnings.warn(f"{type(self).__name__} stopped at max_iter={n_iter} before its "
                          f"convergence test{rule} was met; raise max_iter or loosen tol",
                          ConvergenceWarning, stacklevel=3)

    def _rank(self, scores: np.ndarray) -> np.ndarray:
        if self.score_tie_rtol <= 0:
            return ranking_from_scores(scores)
        seed = 0 if self.random_state is None else self.random_state
        tie_order = check_random_state(seed).permutation(scores.size)
        return ranking_from_scores(scores, self.score_tie_rtol, tie_order)

    def _fit(self, X: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def top_features(self, m: int) -> np.ndarray:
        """Sorted indices of the m best features, without refitting.

        Ranking methods: the top m of the ranking. Subset methods: the fitted subset (m = its
        size), or, for a method declaring ``one_fit_serves_counts``, the subset a fit with
        ``n_features_to_select = m`` would select, for any m up to the fitted count.
        """
        check_is_fitted(self, "support_")
        if self.selection_kind == "all":
            return np.arange(self.n_features_in_)
        if self.selection_kind != "ranking":
            return self._subset_top_features(m)
        if not 1 <= m <= self.n_features_in_:
            raise UFSBenchError(f"m={m} must be between 1 and n_features={self.n_features_in_}")
        return np.sort(self.ranking_[:m])

    def tied_at_cut(self, m: int) -> int:
        """How many features tie with the m-th and the (m+1)-th of the ranking (0 when those two
        differ): the top m then takes part of a group the model scores alike, and the tie order
        (index, or the seeded one of ``score_tie_rtol``), not the model, decides which part.
        0 for subset and "all" methods and at m = n_features."""
        check_is_fitted(self, "support_")
        if self.selection_kind != "ranking" or not 1 <= m < self.n_features_in_:
            return 0
        # Groups of the scores in descending order: the ranking lists each group's members
        # together (in tie order), so position p of the ranking is in the p-th score's group.
        descending = np.sort(np.where(np.isnan(self.scores_), -np.inf, self.scores_))[::-1]
        groups = tie_groups(descending, self.score_tie_rtol)
        return int(np.sum(groups == groups[m - 1])) if groups[m] == groups[m - 1] else 0

    def _subset_top_features(self, m: int) -> np.ndarray:
        fitted = int(self.support_.sum())
        if m == fitted:
            return np.flatnonzero(self.support_)
        name = type(self).__name__
        if not self.one_fit_serves_counts:
            raise UFSBenchError(f"{name} selects an exact subset; refit it with "
                                f"n_features_to_select={m} instead of asking for the top {m}")
        if not 1 <= m <= fitted:
            raise UFSBenchError(f"{name} was fitted with n_features_to_select={fitted}, which "
                                f"serves feature counts 1..{fitted}; refit it with "
                                f"n_features_to_select >= {m} to get the subset for m={m}")
        return np.sort(np.asarray(self._subset_for(int(m)), dtype=int))

    def _subset_for(self, m: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} declares one_fit_serves_counts but "
                                  f"does not implement _subset_for")

    def labels_for_seed(self, random_state) -> np.ndarray | None:
        """The ``labels_`` a fit with ``random_state`` (an int seed) would give, without refitting.

        Runs that vary only a method's labelling randomness (DGUFS's eigensolver start, §5.1 of
        its paper) then cost one fit instead of one per seed. None when the method does not
        declare ``random_state_only_in_labels`` (the caller must refit) or learns no labels.
        """
        check_is_fitted(self, "support_")
        if not self.random_state_only_in_labels or getattr(self, "labels_", None) is None:
            return None
        return self._labels_for_seed(random_state)

    def _labels_for_seed(self, random_state) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} declares random_state_only_in_labels "
                                  f"but does not implement _labels_for_seed")

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted means a selection exists (parameters like ``lambda_`` end in "_" too)."""
        return hasattr(self, "support_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.allow_nan = False
        return tags

    # -- validation, once, at the entry ------------------------------------------------------
    def _validate_fit_input(self, X) -> np.ndarray:
        name = type(self).__name__
        if hasattr(X, "tocsr"):
            raise TypeError(f"{name} needs a dense X; pass X.toarray() for sparse input")
        try:
            raw = np.asarray(X)
            if raw.dtype.kind == "c":  # a float cast would silently drop the imaginary part
                raise UFSBenchError(f"{name}: Complex data not supported; pass the real part, "
                                    f"the magnitude or both as real feature columns")
            arr = raw.astype(np.float64)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, UFSBenchError):
                raise
            raise NonNumericInputError(f"{name}: X must be a numeric array (n_samples, "
                                       f"n_features): {exc}") from None
        if arr.ndim != 2:
            raise UFSBenchError(f"{name}: expected a 2-D X (n_samples, n_features), got shape "
                                f"{arr.shape}; reshape your data, e.g. X.reshape(-1, 1)")
        if arr.shape[0] < 2:
            raise UFSBenchError(f"{name}: X has {arr.shape[0]} sample(s); feature selection by "
                                f"clustering needs at least 2 samples (n_samples >= 2)")
        if arr.shape[1] < 1:
            raise UFSBenchError(f"{name}: X has 0 feature(s) (shape={arr.shape}) while a minimum "
                                f"of 1 is required; pass at least one feature column")
        if not np.all(np.isfinite(arr)):
            bad = int(np.count_nonzero(~np.isfinite(arr)))
            raise UFSBenchError(f"{name}: Input X contains NaN or infinity ({bad} entries); "
                                f"impute or drop them before feature selection")
        if np.all(arr == arr[0]):
            raise UFSBenchError(f"{name}: every sample of X is the same (no feature varies); "
                                f"there is nothing to select or cluster: check the data")
        # Finiteness and shape were checked above; scikit-learn records n_features_in_ without
        # a second pass over X (and a DataFrame's column names as feature_names_in_).
        return validate_data(self, X if hasattr(X, "columns") else arr, dtype=np.float64,
                             ensure_min_samples=2, ensure_all_finite=False, copy=False)

    def _resolve_n_features(self, n_features: int) -> int:
        m = self.n_features_to_select
        if m is None:
            return min(DEFAULT_N_FEATURES, n_features)
        if m > n_features:
            raise UFSBenchError(f"n_features_to_select={m} exceeds the {n_features} features of "
                                f"X (n_features={n_features}); choose at most {n_features}")
        return int(m)

    def _resolve_n_clusters(self, n_samples: int) -> int:
        c = self.n_clusters
        if c > n_samples:
            raise UFSBenchError(f"n_clusters={c} exceeds the {n_samples} samples of X; "
                                f"choose at most {n_samples} clusters")
        return int(c)


# -- registry ---------------------------------------------------------------------------------
_REGISTRY: dict[str, type[UFSSelector]] = {}


def register(method_id: str):
    """Class decorator: make a selector reachable as ``make_selector(method_id, ...)``."""

    def decorate(cls):
        if method_id in _REGISTRY and _REGISTRY[method_id] is not cls:
            raise RuntimeError(f"method id {method_id!r} registered twice")
        cls.method_id = method_id
        _REGISTRY[method_id] = cls
        return cls

    return decorate


_discovered = False


def _discover() -> None:
    """Import every module of ``ufsbench.methods`` so that its ``@register`` runs (once)."""
    global _discovered
    if _discovered:  # walking the package costs ~2 ms, paid per make_selector otherwise
        return
    _discovered = True
    package = importlib.import_module("ufsbench.methods")
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_") and info.name != "base":
            importlib.import_module(f"ufsbench.methods.{info.name}")


def available_methods() -> list[str]:
    """Sorted ids of every registered method."""
    _discover()
    return sorted(_REGISTRY)


def selector_class(name: str) -> type[UFSSelector]:
    _discover()
    if name not in _REGISTRY:
        raise UFSBenchError(f"unknown method {name!r}; known methods: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def declared(name: str, capability: str, default=None):
    """A capability the class of method ``name`` declares (``selection_kind``,
    ``reconstructed``, ...): what reporting asks instead of comparing method names. ``default``
    for an id no longer registered (records of a removed method in an old store)."""
    _discover()
    cls = _REGISTRY.get(name)
    return default if cls is None else getattr(cls, capability)


def keeps_all_features(name: str) -> bool:
    """The method selects nothing (``selection_kind == "all"``): the reference row of a table,
    evaluated once on all d features, so it has no feature count of its own."""
    return declared(name, "selection_kind") == "all"


def method_parameters(name: str) -> list[str]:
    """Names of the constructor parameters of a method."""
    return [p for p in inspect.signature(selector_class(name).__init__).parameters if p != "self"]


def check_setting(name: str, params: dict) -> None:
    """Validate one parameter setting of method ``name`` without data (before any fit): unknown
    names, every declared constraint and the data-free relations. Raises
    :class:`~ufsbench.errors.UFSBenchError` with one line."""
    make_selector(name, **params)._validate_params()


def make_selector(name: str, preset: str | None = None, **params) -> UFSSelector:
    """A new, unfitted selector of method ``name`` with the given parameters, on top of the
    parameter values of ``preset`` (e.g. "released") from the method's config when given."""
    cls = selector_class(name)
    if preset is not None:
        from ufsbench.presets import preset_params

        params = {**preset_params(name, preset), **params}
    known = method_parameters(name)
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise UFSBenchError(f"unknown parameter(s) {', '.join(unknown)} for method {name!r}; "
                            f"its parameters are: {', '.join(known)}")
    return cls(**params)
