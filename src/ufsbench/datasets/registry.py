"""The data-set registry (configs/dataset/*.yaml) and ``load_dataset``.

Every data set of the papers is known by name, shape, class count, checksum and public source,
whether or not its file is present. Files are read from a data directory (``data_dir``, else
``$UFSBENCH_DATA``, else the per-user cache), verified against the registry's sha256, and, where
the registry names a source URL and downloads are allowed, fetched with checksum verification.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import numpy as np
import yaml

from ufsbench.datasets.base import Dataset
from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import DataError
from ufsbench.paths import config_dir, default_data_dir


@functools.lru_cache(maxsize=1)
def _load_registry() -> dict[str, dict]:
    entries = {}
    for path in sorted((config_dir() / "dataset").glob("*.yaml")):
        entry = yaml.safe_load(path.read_text())
        entries[entry["name"]] = entry
    return entries


def registry_entries() -> dict[str, dict]:
    """All registry entries by name (a copy: callers may modify it, e.g. in tests)."""
    return {name: dict(entry) for name, entry in _load_registry().items()}


def dataset_names() -> list[str]:
    return sorted(_load_registry())


def dataset_entry(name: str, entries: dict | None = None) -> dict:
    entries = _load_registry() if entries is None else entries
    if name not in entries:
        raise DataError(f"unknown data set {name!r}; known data sets: {', '.join(sorted(entries))}")
    return entries[name]


# -- checksums -------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file, cached per (path, size, mtime) within the process."""
    st = os.stat(path)
    return _file_sha256(str(path), st.st_size, st.st_mtime_ns)


def git_blob_sha1(path: Path) -> str:
    """Git's object id of a file: sha1 of b"blob <size>\\0" + content."""
    data = Path(path).read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# -- reading .mat files ----------------------------------------------------------------------
def read_mat(path: Path, layout: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """X (n, d) float64 and raw labels from a .mat file.

    Understands scikit-feature's ``X``/``Y`` and Deng Cai's ``fea``/``gnd``; ``layout`` describes
    other originals (variable names, transposed X, label column, one-hot labels).
    """
    import scipy.io
    import scipy.sparse

    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # scipy raises several types for corrupt files
        raise DataError(f"{path} is not a readable MATLAB .mat file ({exc}); delete it and "
                        f"download it again") from None
    layout = dict(layout or {})
    if not layout:
        for x_key, y_key in (("X", "Y"), ("fea", "gnd"), ("X", "y")):
            if x_key in mat and y_key in mat:
                layout = {"x": x_key, "y": y_key}
                break
        else:
            keys = sorted(k for k in mat if not k.startswith("__"))
            raise DataError(f"{path} holds variables {keys}, but ufsbench needs X (n x d) and Y "
                            f"(n labels), or fea and gnd; save the file with those names")
    X, Y = mat[layout["x"]], mat[layout["y"]]
    X = X.toarray() if scipy.sparse.issparse(X) else np.asarray(X)
    Y = Y.toarray() if scipy.sparse.issparse(Y) else np.asarray(Y)
    if "x_columns" in layout:
        X = X[:, layout["x_columns"][0]:layout["x_columns"][1]]
    if "y_column" in layout:
        Y = Y[:, layout["y_column"]]
    if layout.get("transpose_x"):
        X = X.T
    if layout.get("y_onehot"):
        Y = np.argmax(Y, axis=1) + 1
    return X.astype(np.float64), np.asarray(Y).ravel()


def first_per_class(y: np.ndarray, count: int) -> np.ndarray:
    """Indices of the first ``count`` samples of each class, in file order."""
    keep = np.zeros(len(y), dtype=bool)
    for label in np.unique(y):
        keep[np.flatnonzero(y == label)[:count]] = True
    return np.flatnonzero(keep)


def _encode_labels(y: np.ndarray) -> np.ndarray:
    return np.unique(y, return_inverse=True)[1].astype(np.int64)


# -- locating and fetching files -------------------------------------------------------------
def _where_to_get(entry: dict, path: Path) -> str:
    source = entry.get("source") or {}
    if source.get("url"):
        where = f"download {source['url']}"
        if source.get("layout"):
            where += " (the original; ufsbench converts it on load)"
    else:
        where = f"get it from {source.get('note', 'its public source (see MANIFEST.csv)')}"
    return f"{where} and save it as {path}, or set UFSBENCH_DATA to a directory holding {path.name}"


def _fetch(entry: dict, data_dir: Path) -> Path:
    """Download the entry's source file into data_dir, verifying its checksum."""
    import pooch

    source = entry["source"]
    converted = bool(source.get("layout"))
    target_dir = data_dir / "sources" if converted else data_dir
    fname = Path(source["path"]).name if converted else entry["file"]
    known = f"sha256:{source['sha256']}" if source.get("sha256") else None
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        path = Path(pooch.retrieve(source["url"], known_hash=known, fname=fname,
                                   path=target_dir, progressbar=False))
    except ValueError as exc:  # pooch: hash mismatch
        raise DataError(f"download of {entry['name']} from {source['url']} failed its checksum "
                        f"({exc}); the source changed or the transfer broke: retry, or fetch "
                        f"the file by hand") from None
    except Exception as exc:
        raise DataError(f"data set {entry['name']!r} is not in {data_dir} and downloading it "
                        f"failed ({type(exc).__name__}: {exc}); "
                        f"{_where_to_get(entry, data_dir / entry['file'])}") from None
    blob = source.get("git_blob_sha1")
    if blob and git_blob_sha1(path) != blob:
        path.unlink()
        raise DataError(f"download of {entry['name']} does not match git blob {blob}; the file "
                        f"was removed; retry or fetch it by hand")
    return path


def _locate(entry: dict, data_dir: Path, download: bool) -> tuple[Path, dict | None]:
    """The file to read and its layout (None for the registry's own X/Y file)."""
    local = data_dir / entry["file"]
    if local.is_file():
        return local, None
    source = entry.get("source") or {}
    if source.get("layout"):
        original = data_dir / "sources" / Path(source["path"]).name
        if original.is_file():
            return original, source["layout"]
    if download and source.get("url") and os.environ.get("UFSBENCH_OFFLINE") != "1":
        path = _fetch(entry, data_dir)
        return path, source.get("layout")
    raise DataError(f"data set {entry['name']!r} not found: looked for {local}; "
                    f"{_where_to_get(entry, local)}")


def _verify(entry: dict, path: Path, layout: dict | None) -> str:
    """Check the file against the registry; return the checksum recorded with results."""
    source = entry.get("source") or {}
    expected = source.get("sha256") if layout else entry.get("sha256")
    actual = file_sha256(path)
    if expected and actual != expected:
        raise DataError(f"checksum mismatch for {path}: expected sha256 {expected}, got {actual}; "
                        f"the file is corrupt or a different version: delete it and restore the "
                        f"original ({_where_to_get(entry, path)})")
    if not expected and source.get("git_blob_sha1"):
        blob = git_blob_sha1(path)
        if blob != source["git_blob_sha1"]:
            raise DataError(f"checksum mismatch for {path}: expected git blob "
                            f"{source['git_blob_sha1']}, got {blob}; delete it and restore the "
                            f"original ({_where_to_get(entry, path)})")
    if layout and expected and entry.get("sha256"):
        # A verified original converts to exactly the registry's file: record that identity.
        return f"sha256:{entry['sha256']}"
    return f"sha256:{actual}"


def _check_shape(entry: dict, X: np.ndarray, path: Path) -> None:
    for key, got in (("n_features", X.shape[1]), ("n_samples", X.shape[0])):
        want = entry.get(key)
        if want and got != want:
            raise DataError(f"{path} has {got} {key[2:]} but the registry says {entry['name']} "
                            f"has {want}; the file is a different version of the data set")


# -- the public loader -----------------------------------------------------------------------
def load_dataset(name: str, data_dir: str | os.PathLike | None = None, download: bool = True,
                 entries: dict | None = None) -> Dataset:
    """Load a registered data set: X (n, d) float64, y labels 0..c-1, n_classes, name, checksum.

    ``data_dir`` defaults to ``$UFSBENCH_DATA``, then the per-user cache directory. Missing files
    are downloaded (with checksum verification) where the registry has a source URL and
    ``download`` is true; otherwise a :class:`DataError` says where to put the file.
    """
    entry = dataset_entry(name, entries)
    kind = entry.get("kind", "mat")
    if kind == "synthetic":
        return make_synthetic(**entry["synthetic"])
    if kind == "sklearn_digits":
        from sklearn.datasets import load_digits

        digits = load_digits()
        checksum = "sha256:" + hashlib.sha256(digits.data.tobytes()).hexdigest()
        return Dataset("digits", digits.data.astype(np.float64), digits.target.astype(np.int64),
                       checksum=checksum, meta={"image": entry.get("image")})
    if kind == "subset":
        parent = load_dataset(entry["parent"], data_dir, download, entries)
        X, y, checksum = parent.X, parent.y, parent.checksum
        path = Path(entry["parent"])
    else:
        directory = Path(data_dir).expanduser() if data_dir else default_data_dir()
        path, layout = _locate(entry, directory, download)
        checksum = _verify(entry, path, layout)
        X, y = read_mat(path, layout)
    if "subset" in entry:
        rows = first_per_class(y, entry["subset"]["first_per_class"])
        X, y = X[rows], y[rows]
        checksum += f"|first_per_class={entry['subset']['first_per_class']}"
    _check_shape(entry, X, path)
    if not np.all(np.isfinite(X)):
        raise DataError(f"{path} contains NaN or infinite values; ufsbench expects complete data")
    return Dataset(name, X, _encode_labels(y), checksum=checksum,
                   meta={"image": entry.get("image"), "papers": entry.get("papers", [])})


def dataset_status(name: str, data_dir: str | os.PathLike | None = None) -> dict:
    """Whether a data set's file is present and verified, without downloading anything."""
    entry = dataset_entry(name)
    if entry.get("kind") in ("synthetic", "sklearn_digits"):
        return {"present": True, "verified": True, "detail": "embedded"}
    if entry.get("kind") == "subset":
        status = dataset_status(entry["parent"], data_dir)
        return {**status, "detail": f"subset of {entry['parent']}"}
    directory = Path(data_dir).expanduser() if data_dir else default_data_dir()
    try:
        path, layout = _locate(entry, directory, download=False)
    except DataError:
        return {"present": False, "verified": False, "detail": "missing"}
    try:
        _verify(entry, path, layout)
    except DataError:
        return {"present": True, "verified": False, "detail": f"CHECKSUM MISMATCH {path}"}
    return {"present": True, "verified": True, "detail": str(path)}


def current_checksum(name: str) -> str | None:
    """The checksum a fresh load of ``name`` would record, when the registry fixes it (else None).

    Records whose ``data_checksum`` differs were computed on other data: they are stale.
    """
    entries = _load_registry()
    entry = entries.get(name)
    if entry is None:
        return None
    if entry.get("kind") == "subset":
        parent = current_checksum(entry["parent"])
        suffix = f"|first_per_class={entry['subset']['first_per_class']}"
        return None if parent is None else parent + suffix
    sha = entry.get("sha256")
    if not sha or entry.get("kind", "mat") != "mat":
        return None
    subset = entry.get("subset")
    return f"sha256:{sha}" + (f"|first_per_class={subset['first_per_class']}" if subset else "")
