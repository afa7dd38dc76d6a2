"""The data-set registry (configs/dataset/*.yaml) and ``load_dataset``.

Every data set of the papers is known by name, shape, class count, checksum and public source,
whether or not its file is present. Files are read from a data directory (``data_dir``, else
``$UFSBENCH_DATA``, else the per-user cache), verified against the registry's sha256, and, where
the registry names a source (a URL or an OpenML data set) and downloads are allowed, fetched with
checksum verification by :mod:`ufsbench.datasets.fetch`. A file whose sha256 the registry does
not know gets it recorded at download in ``<file>.sha256``, which later loads check.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path

import numpy as np
import yaml

from ufsbench.datasets.base import Dataset
from ufsbench.datasets.files import (
    FORMATS,
    check_labels,
    default_feature_counts,
    read_data_file,
    resolve_path,
)
from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import DataError
from ufsbench.paths import default_data_dir


@functools.lru_cache(maxsize=8)
def _registry_from(sources: tuple) -> tuple[dict[str, dict], dict[str, Path]]:
    """Entries by name, and the user's config file of each user entry, from config sources
    (:func:`ufsbench.datasets.config_dirs.config_sources`; a later entry shadows an earlier)."""
    from ufsbench.datasets.config_dirs import group_files

    entries, user = {}, {}
    for name, (path, is_user) in group_files("dataset", sources).items():
        entry = yaml.safe_load(path.read_text())
        entries[entry.get("name", name)] = entry
        if is_user:
            user[entry.get("name", name)] = path
    return dict(sorted(entries.items())), user


def _load_registry() -> dict[str, dict]:
    from ufsbench.datasets.config_dirs import config_sources

    return _registry_from(config_sources())[0]


def user_entry_file(name: str) -> Path | None:
    """The user's config file defining data set ``name`` (None for a packaged entry)."""
    from ufsbench.datasets.config_dirs import config_sources

    return _registry_from(config_sources())[1].get(name)


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


def sidecar_path(path: Path) -> Path:
    """Where the sha256 of a downloaded file the registry has no checksum for is recorded."""
    path = Path(path)
    return path.with_name(path.name + ".sha256")


def record_sha256(path: Path, sha256: str) -> Path:
    """Record a file's sha256 beside it, in ``sha256sum`` format; returns the record's path."""
    record = sidecar_path(path)
    record.write_text(f"{sha256}  {Path(path).name}\n")
    return record


def recorded_sha256(path: Path) -> str | None:
    """The sha256 recorded beside a file at its download, or None when there is no record."""
    record = sidecar_path(path)
    if not record.is_file():
        return None
    fields = record.read_text().split()
    return fields[0] if fields else ""


# -- reading .mat files ----------------------------------------------------------------------
def read_mat(path: Path, layout: dict | None = None,
             own_file: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """X (n, d) float64 and raw labels from a .mat file.

    Understands scikit-feature's ``X``/``Y`` and Deng Cai's ``fea``/``gnd``; ``layout`` describes
    other originals (variable names, transposed X, label column, one-hot labels). ``own_file``:
    the file is the user's own (no advice to download it again).
    """
    import scipy.io
    import scipy.sparse

    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # scipy raises several types for corrupt files
        fix = ("check that it is a MATLAB .mat file (v7.3/HDF5 files: save with -v7, or "
               "scipy.io.savemat), or give it the extension of its real format") if own_file \
            else "delete it and download it again"
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{path} is not a readable MATLAB .mat file ({first}); {fix}") from None
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
def where_to_get(entry: dict, path: Path) -> str:
    """How to put an entry's file in place by hand, in words (one clause, no full stop)."""
    source = entry.get("source") or {}
    if not source:  # the user's own file: nowhere to download it from
        return (f"save it as {path}, set UFSBENCH_DATA to the directory holding {path.name}, or "
                f"give the entry the file's absolute path (path: /.../{path.name})")
    if source.get("openml"):
        spec = source["openml"]
        subset = (entry.get("subset") or {}).get("first_per_class")
        rows = f"the first {subset} samples of each class" if subset else "all samples"
        where = (f"save {rows} of OpenML data set {spec['data_id']} version {spec['version']} "
                 f"({spec['name']}) as X (n x d) and Y (labels) in {path}")
        return f"{where}, or set UFSBENCH_DATA to a directory holding {path.name}"
    target = path
    if source.get("url"):
        where = f"download {source['url']}"
        if source.get("layout"):   # read from sources/ and converted; at `path` it would not be
            where += " (the original; ufsbench converts it on load)"
            target = path.parent / "sources" / Path(source["path"]).name
    else:
        where = f"get it from {source.get('note', 'its public source (see MANIFEST.csv)')}"
    return (f"{where} and save it as {target}, or set UFSBENCH_DATA to a directory holding "
            f"{path.name}")


def _locate(entry: dict, data_dir: Path, download: bool) -> tuple[Path, dict | None]:
    """The file to read and its layout (None for the registry's own X/Y file)."""
    if entry.get("path"):
        return resolve_path(entry["path"]), None
    local = data_dir / entry["file"]
    if local.is_file():
        return local, None
    source = entry.get("source") or {}
    if source.get("layout"):
        original = data_dir / "sources" / Path(source["path"]).name
        if original.is_file():
            return original, source["layout"]
    from ufsbench.datasets.fetch import can_fetch, fetch_dataset

    if download and can_fetch(entry):
        return fetch_dataset(entry, data_dir).path, source.get("layout")
    fetch = f"run `ufsbench datasets fetch {entry['name']}`, or " if can_fetch(entry) else ""
    raise DataError(f"data set {entry['name']!r} not found: looked for {local}; "
                    f"{fetch}{where_to_get(entry, local)}")


def _verify(entry: dict, path: Path, layout: dict | None) -> str:
    """Check the file against the registry; return the checksum recorded with results."""
    source = entry.get("source") or {}
    expected = source.get("sha256") if layout else entry.get("sha256")
    actual = file_sha256(path)
    if expected and actual != expected:
        raise DataError(f"checksum mismatch for {path}: expected sha256 {expected}, got {actual}; "
                        f"the file is corrupt or a different version: delete it and restore the "
                        f"original ({where_to_get(entry, path)})")
    recorded = None if expected else recorded_sha256(path)
    if recorded is not None and recorded != actual:
        raise DataError(f"checksum mismatch for {path}: its sha256 at download was {recorded} "
                        f"(recorded in {sidecar_path(path).name}), the file now has {actual}; "
                        f"delete both files and run `ufsbench datasets fetch {entry['name']}`")
    if not expected and source.get("git_blob_sha1"):
        blob = git_blob_sha1(path)
        if blob != source["git_blob_sha1"]:
            raise DataError(f"checksum mismatch for {path}: expected git blob "
                            f"{source['git_blob_sha1']}, got {blob}; delete it and restore the "
                            f"original ({where_to_get(entry, path)})")
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
    own = not entry.get("source")  # the user's own file: no download, no checksum to match
    if kind in TABLE_KINDS or (own and kind == "mat" and "subset" not in entry):
        directory = Path(data_dir).expanduser() if data_dir else default_data_dir()
        path, _ = _locate(entry, directory, download)
        return load_file_dataset(path, name=name, label=entry.get("label", "auto"),
                                 fmt=None if kind == "file" else kind,
                                 expected_sha256=entry.get("sha256"))
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
        X, y = read_mat(path, layout, own_file=own)
    if "subset" in entry:
        rows = first_per_class(y, entry["subset"]["first_per_class"])
        X, y = X[rows], y[rows]
        checksum += f"|first_per_class={entry['subset']['first_per_class']}"
    _check_shape(entry, X, path)
    if not np.all(np.isfinite(X)):
        raise DataError(f"{path} contains NaN or infinite values; ufsbench expects complete data")
    return Dataset(name, X, _encode_labels(y), checksum=checksum,
                   meta={"image": entry.get("image"), "papers": entry.get("papers", [])})


#: Registry kinds read by :func:`ufsbench.datasets.files.read_data_file` ("file": by extension).
TABLE_KINDS = ("file", *sorted(set(FORMATS.values()) - {"mat"}))
#: Formats whose X depends on which column is the label: their checksum names that column.
_LABEL_SHAPES_X = ("csv", "tsv", "parquet")


def file_checksum(path, fmt: str, label: str) -> str:
    """The data checksum of a user's file: its sha256, plus the label column for tables (the
    column chosen decides which columns are features)."""
    checksum = f"sha256:{file_sha256(Path(path))}"
    return checksum + (f"|label={label}" if fmt in _LABEL_SHAPES_X else "")


def load_file_dataset(path, name: str | None = None, label="auto", fmt: str | None = None,
                      need_labels: bool = True, expected_sha256: str | None = None) -> Dataset:
    """A user's data file as a Dataset (see :mod:`ufsbench.datasets.files`).

    ``name`` defaults to the file stem; ``need_labels`` (true for ``run``) requires labels that
    can score a clustering. Unlabelled data (``label="none"``) gets y = zeros and
    ``meta["labelled"] = False``. ``meta["source"]`` (path, format, label column) goes into every
    record, so that a later change of the file marks the records stale.
    """
    data = read_data_file(path, fmt, label)
    path = data["path"]
    actual = file_sha256(path)
    if expected_sha256 and actual != expected_sha256:
        raise DataError(f"checksum mismatch for {path}: its config says sha256 {expected_sha256}, "
                        f"the file has {actual}; the file changed: update or remove sha256 in "
                        f"its config")
    if data["y"] is None:
        if need_labels:
            raise DataError(f"{path} has no labels (dataset.label=none), which `ufsbench run` needs "
                            f"to score the clustering; give the label column with "
                            f"dataset.label=..., or use `ufsbench select` for a selection without "
                            f"evaluation")
        y = np.zeros(data["X"].shape[0], dtype=np.int64)
    else:
        if need_labels:
            check_labels(path, data["y"], data["label"])
        y = _encode_labels(np.asarray(data["y"]).astype(str) if data["y"].dtype == object
                           else data["y"])
    source = {"path": str(path), "format": data["format"], "label": data["label"]}
    return Dataset(name or path.stem, data["X"], y,
                   checksum=file_checksum(path, data["format"], data["label"]),
                   feature_names=data["feature_names"],
                   meta={"source": source, "labelled": data["y"] is not None})


def path_dataset_config(path, name: str | None = None, label="auto") -> dict:
    """The config node of a data file given as ``dataset=<path>`` (a data set like a registry
    entry, named after the file stem unless ``name`` is given). Refuses a name that a registry
    entry already has, and a file that does not exist or has an unknown extension."""
    from ufsbench.datasets.files import file_format

    resolved = resolve_path(path)
    fmt = file_format(resolved)
    # A name Hydra's override grammar takes as it is (no spaces, brackets or commas).
    name = str(name or re.sub(r"[^A-Za-z0-9_.-]+", "_", resolved.stem).strip("_") or "data")
    if name in _load_registry():
        raise DataError(f"data file {resolved} would be named {name!r}, which is a registry data "
                        f"set; rename the file or give another name with dataset.name=<name>")
    return {"name": name, "kind": "file", "path": str(resolved), "format": fmt,
            "label": label, "feature_counts": None}


def load_dataset_config(node: dict, data_dir=None, download: bool = True,
                        need_labels: bool = True) -> Dataset:
    """The data set of a composed ``dataset`` config node: a data file given by path
    (``kind: file`` with ``path``), else the registry entry of ``node["name"]``."""
    if node.get("kind") == "file" and node.get("path") and node["name"] not in _load_registry():
        return load_file_dataset(node["path"], node["name"], node.get("label", "auto"),
                                 node.get("format"), need_labels=need_labels)
    return load_dataset(node["name"], data_dir=data_dir, download=download)


def dataset_feature_counts(entry: dict | None, n_features: int) -> list[int]:
    """A data set's feature counts: its own, else the default for its d
    (:func:`ufsbench.datasets.files.default_feature_counts`)."""
    counts = (entry or {}).get("feature_counts")
    return list(counts) if counts else default_feature_counts(n_features)


def source_checksum(source: dict | None) -> str | None:
    """The checksum a fresh load of a recorded data file (``record["data_source"]``) would give,
    or None when the file is gone (then its records cannot be checked)."""
    if not source or not source.get("path") or not Path(source["path"]).is_file():
        return None
    return file_checksum(source["path"], source.get("format", ""), source.get("label", ""))


def dataset_status(name: str, data_dir: str | os.PathLike | None = None) -> dict:
    """Whether a data set's file is present and verified, without downloading anything."""
    entry = dataset_entry(name)
    if entry.get("kind") in ("synthetic", "sklearn_digits"):
        return {"present": True, "verified": True, "detail": "embedded"}
    kind = entry.get("kind", "mat")
    if kind in TABLE_KINDS or (kind == "mat" and not entry.get("source")):  # the user's own file
        directory = Path(data_dir).expanduser() if data_dir else default_data_dir()
        path = Path(entry["path"]).expanduser() if entry.get("path") else \
            directory / entry.get("file", "")
        present = path.is_file()
        ok = present and (not entry.get("sha256") or file_sha256(path) == entry["sha256"])
        return {"present": present, "verified": ok,
                "detail": str(path) if present else f"missing {path}"}
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


def _recorded_in_data_dir(entry: dict) -> str | None:
    """The sha256 recorded at download beside the entry's file in the default data directory
    (for sets the registry has no checksum for), or None."""
    return recorded_sha256(default_data_dir() / entry["file"]) if entry.get("file") else None


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
    if entry.get("kind", "mat") != "mat":
        return None
    sha = entry.get("sha256") or _recorded_in_data_dir(entry)
    if not sha:
        return None
    subset = entry.get("subset")
    return f"sha256:{sha}" + (f"|first_per_class={subset['first_per_class']}" if subset else "")
