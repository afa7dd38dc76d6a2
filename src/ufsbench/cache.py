"""Disk cache of per-data-set intermediates (kNN graphs, SVDs), keyed by data checksum + parameters.

A sweep fits one method at many parameter settings on the same data set, and many methods start
from the same kNN graph or thin SVD of X. Those depend only on X and a few graph parameters, so
they are computed once and stored with ``joblib.Memory``; every later fit in the same sweep -- or
in a later sweep, or in another worker process -- reads them back.

The key is ``(function identity, function code, data checksum, parameters)``:

* the *data checksum* is the sha256 of X's bytes, shape and dtype (:func:`array_checksum`), so
  the array itself is never pickled for hashing and two equal arrays share one entry;
* the *function code* is part of the key, so editing the function invalidates its old entries
  instead of serving stale results. The rule (:func:`_closure_fingerprint`): the key covers the
  bytecode, constants and names of the cached function, of its nested code (comprehensions,
  lambdas), and of every ``ufsbench`` function it reaches through module-level names -- directly
  (``nearest_neighbors(...)``) or as a module attribute (``graphs.sparse_knn_graph(...)``) --
  transitively; plus the numpy / scipy / scikit-learn / joblib versions. Editing a helper that a
  cached graph builder calls therefore invalidates its entries too. NOT covered: code reached
  any other way (methods of objects, callables passed in ``params``, ``getattr`` by string):
  a cached function must reach its ufsbench helpers by plain module-level names, or list them
  in a module-level ``__cache_callees__`` tuple of functions (fingerprinted the same way).

Caching is opt-in, as scikit-learn's ``memory=`` parameters are: every selector that builds such
intermediates takes ``memory=None`` (compute directly; the default) or a directory or
``joblib.Memory`` (read and write entries there), and passes it to :func:`cached_call`. The numerics
import nothing from here. ``ufsbench run`` passes :func:`default_location`: ``$UFSBENCH_CACHE`` if
set, else ``<XDG cache or ~/.cache>/ufsbench/compute`` (``UFSBENCH_CACHE=off``, ``0`` or ``none``
turns it off), and after each sweep trims the cache to ``$UFSBENCH_CACHE_LIMIT`` bytes (default 10
GB, least recently used entries first); ``ufsbench cache info`` and ``ufsbench cache clear`` show
and empty it.

Inputs smaller than ``min_cells`` entries are computed directly too: for them a disk round trip
costs more than the computation (and unit tests on toy data would fill the disk for nothing). So are
inputs with fewer than ``min_samples`` rows for the cheap graph builders of :data:`CHEAP_BUILDERS`:
a kNN graph costs one O(n^2 d) Gram product, the key O(n d) hashing plus a fixed lookup, so below
~50 samples reading the graph costs as much as computing it.

Adopting it in a method (see ``ufsbench/methods/ls.py``)::

    from ufsbench.cache import cached_call
    S = cached_call(self.memory, knn_graph, X, k=k, weight="heat", sigma=None)

The cached function must be a module-level function of ``(X, **params)`` whose result depends on
nothing else (no random state unless passed as a parameter).
"""

from __future__ import annotations

import hashlib
import os
import types
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import scipy.linalg
from joblib import Memory

from ufsbench.errors import UFSBenchError

#: Inputs with fewer entries than this are computed directly (disk I/O would cost more).
DEFAULT_MIN_CELLS = 100_000
#: Bytes the cache keeps after a sweep unless ``$UFSBENCH_CACHE_LIMIT`` says otherwise.
DEFAULT_SIZE_LIMIT = "10G"
#: Cached functions whose whole cost is about one n x n x d Gram product plus O(n k) work (kNN
#: graphs), and the fewest samples from which reading them back (an O(n d) sha256 of X plus a
#: ~2 ms lookup) beats computing them. Measured (docs/performance-history.md, column-major
#: data): equal at 30 x 4000 and 50 x 2000, the cache 2-3x faster from 50 x 7000 and 100 x 6000
#: on. Functions not listed (local-learning / local-discriminant matrices, SVDs: 5-50x a Gram
#: product at n ~ 100) are cached from ``min_cells`` on. Qualified names, so that this module
#: imports no method code.
CHEAP_BUILDERS = {"ufsbench.numerics.graphs.knn_graph": 50,
                  "ufsbench.numerics.graphs.sparse_knn_graph": 50}
_OFF = {"off", "0", "none", "false", "no"}


def array_checksum(X: np.ndarray) -> str:
    """sha256 of an array's dtype, shape, memory order and bytes: the cache's data key.

    The bytes are hashed in the array's own order (a column-major ``.mat`` array is not copied
    to row-major first: that copy cost as much as a third of the hash), and the order is part
    of the key: a Gram product's round-off depends on the layout, so a result computed from the
    row-major array may differ in the last bits from the one computed from the column-major
    array, and each must find its own entry. Non-contiguous views are hashed as a row-major
    copy. sha256 rather than blake2b: 2x faster here (4.9 MB: 5 vs 11 ms).
    """
    X = np.asarray(X)
    if X.flags.c_contiguous:
        order, arr = "C", X
    elif X.flags.f_contiguous:
        order, arr = "F", X.T                     # X.T is row-major: the same bytes, no copy
    else:
        order, arr = "C", np.ascontiguousarray(X)
    digest = hashlib.sha256(f"{X.dtype.str}{X.shape}{order}".encode())
    digest.update(arr.data.cast("B"))
    return digest.hexdigest()


def cache_dir() -> Path | None:
    """Where ``ufsbench run`` caches: $UFSBENCH_CACHE, else the per-user cache; None when off."""
    env = os.environ.get("UFSBENCH_CACHE")
    if env is not None and env.strip().lower() in _OFF:
        return None
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ufsbench" / "compute"


@lru_cache(maxsize=8)
def _memory(location: str) -> Memory:
    return Memory(location, verbose=0)


def _code_fingerprint(func: Callable) -> str:
    """Identity + code of a function, so that edited code never reads an older entry."""
    name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"
    code = getattr(func, "__code__", None)
    if code is None:  # builtins, numpy dispatchers: fall back to the library version
        module = __import__(getattr(func, "__module__", "builtins").split(".")[0])
        return f"{name}@{getattr(module, '__version__', '?')}"
    body = hashlib.sha256(code.co_code + repr(code.co_consts).encode()).hexdigest()[:16]
    return f"{name}@{body}"


def _code_digest(code: types.CodeType, digest) -> None:
    """Feed a code object into ``digest``: bytecode, names, constants, nested code (recursively;
    ``repr`` of a nested code object holds its memory address, so it would never hit again)."""
    digest.update(code.co_code)
    digest.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_digest(const, digest)
        else:
            digest.update(repr(const).encode())


def _all_names(code: types.CodeType) -> set[str]:
    """Global / attribute names used by a code object and its nested code objects."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _all_names(const)
    return names


def _is_project_function(obj: object) -> TypeGuard[types.FunctionType]:
    return isinstance(obj, types.FunctionType) and \
        (getattr(obj, "__module__", "") or "").split(".")[0] == "ufsbench"


def _callees(func: types.FunctionType) -> list[types.FunctionType]:
    """ufsbench functions that ``func`` reaches through module-level names (see module doc)."""
    names = _all_names(func.__code__)
    found: list[types.FunctionType] = []
    scope = func.__globals__
    for name in names:
        obj = scope.get(name)
        if _is_project_function(obj):
            found.append(obj)
        elif isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] == "ufsbench":
            found.extend(attr for attr in (getattr(obj, n, None) for n in names)
                         if _is_project_function(attr))
    found.extend(f for f in scope.get("__cache_callees__", ()) if _is_project_function(f))
    return found


def _library_versions() -> str:
    """Versions of the numerical libraries a cached result may depend on."""
    import sklearn
    return "|".join(f"{m.__name__}={m.__version__}"
                    for m in (np, scipy, sklearn, __import__("joblib")))


def _closure_fingerprint(func: Callable) -> str:
    """Key of ``func``'s code: its own code and that of every ufsbench function it reaches by
    module-level names, transitively, plus the library versions (the rule in the module doc)."""
    if not isinstance(func, types.FunctionType):
        return f"{_code_fingerprint(func)}|{_library_versions()}"
    seen: dict[str, types.FunctionType] = {}
    todo = [func]
    while todo:
        f = todo.pop()
        name = f"{f.__module__}.{f.__qualname__}"
        if name not in seen:
            seen[name] = f
            todo.extend(_callees(f))
    digest = hashlib.sha256(_library_versions().encode())
    for name in sorted(seen):
        digest.update(name.encode())
        _code_digest(seen[name].__code__, digest)
    return f"{func.__module__}.{func.__qualname__}@{digest.hexdigest()[:16]}"


def _compute(func: Callable, X: np.ndarray, fingerprint: str, checksum: str, params: dict) -> Any:
    """The function joblib caches: ``func`` and ``X`` are ignored for the key (see module doc)."""
    return func(X, **params)


@lru_cache(maxsize=8)
def _memorized(location: str):
    """joblib's wrapper of :func:`_compute`, built once per location (building it documents the
    function with pydoc: ~1 ms a call)."""
    return _memory(location).cache(_compute, ignore=["func", "X"])


def min_samples_for(func: Callable) -> int:
    """Fewest samples from which the disk cache pays for ``func`` (see :data:`CHEAP_BUILDERS`)."""
    name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"
    return CHEAP_BUILDERS.get(name, 0)


def default_location() -> str | None:
    """The ``memory`` ``ufsbench run`` gives every selector: :func:`cache_dir` as text."""
    location = cache_dir()
    return None if location is None else str(location)


def memory_location(memory) -> str | None:
    """The directory a selector's ``memory`` names: None (no caching), a path, or an object with
    joblib.Memory's interface (its ``location``; None there also means no caching)."""
    if memory is None or isinstance(memory, (str, os.PathLike)):
        return None if memory is None else str(memory)   # no Memory built: it makes the folder
    if not hasattr(memory, "cache"):
        raise UFSBenchError(f"memory={memory!r} must be None, a directory or a joblib.Memory")
    location = getattr(memory, "location", None)
    return None if location is None else str(location)


def uses_disk(func: Callable, X: np.ndarray, min_cells: int = DEFAULT_MIN_CELLS,
              min_samples: int | None = None) -> bool:
    """Whether :func:`cached_call` with a cache location goes through the disk for ``func`` on
    X (the rule in the module doc): X has ``min_cells`` entries and ``min_samples`` rows."""
    if min_samples is None:
        min_samples = min_samples_for(func)
    return X.size >= min_cells and X.shape[0] >= min_samples


def cached_call(memory, func: Callable, X: np.ndarray, *, min_cells: int = DEFAULT_MIN_CELLS,
                min_samples: int | None = None, **params) -> Any:
    """``func(X, **params)``, read from the cache at ``memory`` (a selector's ``memory``
    parameter: None computes directly) when the same data and parameters were seen.

    ``params`` must be picklable plain values (numbers, strings, None, tuples); they are part of
    the key together with X's checksum and ``func``'s code. The disk is used only for inputs of
    at least ``min_cells`` entries and ``min_samples`` rows (None: :func:`min_samples_for`);
    smaller inputs are computed directly, with the same result.
    """
    if not callable(func):
        raise UFSBenchError(f"cached_call needs a function, got {func!r}; pass e.g. knn_graph")
    location = memory_location(memory)
    X = np.asarray(X)
    if location is None or not uses_disk(func, X, min_cells, min_samples):
        return func(X, **params)
    return _memorized(location)(func, X, _closure_fingerprint(func), array_checksum(X),
                                dict(sorted(params.items())))


def cached_seeded_call(memory, func: Callable, X: np.ndarray, random_state, **params) -> Any:
    """``func(X, random_state=random_state, **params)`` through :func:`cached_call` when the
    seed is an int (a seeded start, e.g. K-means or spectral clustering, is then a deterministic
    function of the key); computed directly for None or a ``RandomState`` (not reproducible, or
    state that a key cannot capture)."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return cached_call(memory, func, X, random_state=int(random_state), **params)
    return func(X, random_state=random_state, **params)


def _thin_svd(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    U, s, Vt = scipy.linalg.svd(X, full_matrices=False, lapack_driver="gesdd")
    return U, s, Vt


def thin_svd(X: np.ndarray, memory=None, *, min_cells: int = DEFAULT_MIN_CELLS):
    """Thin SVD ``U, s, Vt`` of X (min(n, d) singular triplets), cached at ``memory``."""
    return cached_call(memory, _thin_svd, X, min_cells=min_cells)


def _entries_dir(location) -> Path:
    return Path(location) / "joblib"


def cache_info(location=None) -> dict:
    """Location, number of entries and bytes of the cache (default: :func:`cache_dir`)."""
    location = location if location is not None else cache_dir()
    if location is None:
        return {"location": None, "entries": 0, "bytes": 0}
    root = _entries_dir(location)
    files = [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []
    entries = {p.parent for p in files if p.name == "output.pkl"}
    return {"location": str(location), "entries": len(entries),
            "bytes": sum(p.stat().st_size for p in files)}


def clear_cache(location=None) -> None:
    """Delete every cached entry (the directory stays); default location :func:`cache_dir`."""
    location = location if location is not None else cache_dir()
    if location is not None:
        _memory(str(location)).clear(warn=False)


def size_limit() -> str | int:
    """``$UFSBENCH_CACHE_LIMIT`` (bytes, or joblib's "10G"-style text), else 10 GB."""
    value = os.environ.get("UFSBENCH_CACHE_LIMIT", DEFAULT_SIZE_LIMIT).strip()
    return int(value) if value.isdigit() else value


def bound_cache(location=None) -> None:
    """Trim the cache to :func:`size_limit`, least recently used entries first."""
    location = location if location is not None else cache_dir()
    if location is not None and _entries_dir(location).is_dir():
        _memory(str(location)).reduce_size(bytes_limit=size_limit())
