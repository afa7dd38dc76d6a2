"""A researcher's own data file as a data set: .mat, .csv, .tsv, .npz, .npy, .parquet.

``ufsbench run method=ls dataset=path/to/colon.csv`` reads the file here. Tabular files keep their
header as feature names; the label column is ``label`` (a column name, a 0-based index, ``auto``
or ``none``): ``auto`` takes a column named ``label``, ``class`` or ``y`` (any case), else the
last column. ``.npz`` holds ``X`` and ``y`` (or ``Y``/``labels``; optional ``feature_names``);
``.npy`` holds X, its labels in a sibling ``<stem>_labels.npy`` (or ``<stem>_y.npy``) or in the
file given as ``label``; ``.mat`` holds ``X``/``Y`` or ``fea``/``gnd``.

Every problem is one :class:`DataError` line naming the file and the fix. The data checksum of a
file is its sha256, plus the label choice when it is not the default, so that a changed file
makes the records computed on it stale.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ufsbench.errors import DataError

#: File extensions read as data sets, and their format.
FORMATS = {".mat": "mat", ".csv": "csv", ".tsv": "tsv", ".txt": "csv", ".npz": "npz",
           ".npy": "npy", ".parquet": "parquet", ".pq": "parquet"}
#: Column names taken as the labels when ``label`` is ``auto`` (compared case-insensitively).
LABEL_NAMES = ("label", "labels", "class", "y", "target")
#: The papers' feature counts; a data set without its own gets these, below its d.
PAPER_FEATURE_COUNTS = (50, 100, 150, 200, 250, 300)
#: Up to this d, default feature counts are fractions of d instead (:func:`default_feature_counts`).
SMALL_D = 60


def default_feature_counts(n_features: int) -> list[int]:
    """Feature counts for a data set that names none.

    d > 60: the papers' grid 50, 100, ..., 300, those below d. d <= 60: 10 %, 20 %, 30 %, 40 % and
    50 % of d, rounded, each at least 1, distinct (d = 4 gives [1, 2]).
    """
    d = int(n_features)
    if d > SMALL_D:
        return [m for m in PAPER_FEATURE_COUNTS if m < d]
    return sorted({max(1, int(round(d * f / 10))) for f in range(1, 6)})


def is_data_path(value: str) -> bool:
    """True when a ``dataset=`` value names a file rather than a registry entry."""
    return Path(value).suffix.lower() in FORMATS or os.sep in value or value.startswith("~")


def file_format(path: Path, declared: str | None = None) -> str:
    """The format of ``path``: the declared one (a registry ``kind``), else its extension."""
    if declared and declared not in ("file", "auto"):
        if declared not in set(FORMATS.values()):
            raise DataError(f"kind {declared!r} of {path} is not a known format; use one of "
                            f"{', '.join(sorted(set(FORMATS.values())))}")
        return declared
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise DataError(f"{path}: unknown file type {Path(path).suffix or '(no extension)'!r}; "
                        f"ufsbench reads {', '.join(sorted(FORMATS))}: save the data in one of "
                        f"those formats")
    return fmt


def resolve_path(value: str | os.PathLike) -> Path:
    """The absolute path of a user's data file, which must exist."""
    path = Path(value).expanduser()
    if not path.is_file():
        where = "is a directory, not a file" if path.is_dir() else "does not exist"
        raise DataError(f"data file {path} {where}; give the path of a .mat, .csv, .tsv, .npz, "
                        f".npy or .parquet file, e.g. dataset=./colon.csv")
    return path.resolve()


def label_spec(label) -> str:
    """The label setting as text for checksums and records ('auto', 'none', a name, an index)."""
    if label is None:
        return "none"
    return str(label)


# -- readers ---------------------------------------------------------------------------------
def _not_this_format(path: Path, fmt: str, exc: Exception) -> DataError:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return DataError(f"{path} is not a readable {fmt} file ({first}); check that the file is "
                     f"what its extension says (or rename it to the right extension)")


def _read_table(path: Path, fmt: str):
    import pandas as pd

    try:
        if fmt == "parquet":
            return pd.read_parquet(path)
        with open(path, "rb") as fh:
            head = fh.read(65536)
        if b"\0" in head:
            raise ValueError("the file is binary, not text")
        first = head.splitlines()[0].decode("utf-8", "replace") if head.strip() else ""
        sep = "\t" if fmt == "tsv" else next((c for c in (",", ";", "\t") if c in first), None)
        table = pd.read_csv(path, sep=sep or r"\s+")
        if _all_numbers(table.columns):  # no header line: its first row is data
            table = pd.read_csv(path, sep=sep or r"\s+", header=None)
            table.columns = [f"x{j}" for j in range(table.shape[1])]
        return table
    except ImportError as exc:
        raise DataError(f"{path}: reading .parquet needs pyarrow or fastparquet ({exc}); "
                        f"`pip install pyarrow`, or save the table as .csv") from None
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise _not_this_format(path, fmt, exc) from None


def _all_numbers(names) -> bool:
    try:
        [float(str(n)) for n in names]
    except ValueError:
        return False
    return True


def _pick_label_column(path: Path, columns: list, label) -> object | None:
    """The label column of a table (None for unlabelled data)."""
    text = [str(c) for c in columns]
    spec = label_spec(label)
    if spec.lower() == "none":
        return None
    if spec.lower() == "auto":
        for name in LABEL_NAMES:
            hits = [c for c, t in zip(columns, text) if t.strip().lower() == name]
            if hits:
                return hits[0]
        if len(columns) < 2:
            raise DataError(f"{path} has a single column; it needs feature columns and a label "
                            f"column (or dataset.label=none for unlabelled data)")
        return columns[-1]
    if spec in text:
        return columns[text.index(spec)]
    try:
        index = int(spec)
    except ValueError:
        index = None
    if index is not None and -len(columns) <= index < len(columns):
        return columns[index]
    shown = ", ".join(text[:12]) + (", ..." if len(text) > 12 else "")
    raise DataError(f"{path} has no label column {spec!r}; its columns are {shown}; give "
                    f"dataset.label=<column name or 0-based index> (dataset.label=none for "
                    f"unlabelled data)")


def _table_data(path: Path, fmt: str, label) -> tuple[np.ndarray, np.ndarray | None, list[str], str]:
    import pandas as pd

    df = _read_table(path, fmt)
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise DataError(f"{path} holds no data rows; check the file")
    column = _pick_label_column(path, list(df.columns), label)
    y = None
    if column is not None:
        labels = df[column]
        if labels.isna().any():
            rows = np.flatnonzero(labels.isna().to_numpy())[:5] + 2
            raise DataError(f"{path}: label column {column!r} is empty in {int(labels.isna().sum())}"
                            f" row(s) (file lines {', '.join(map(str, rows))}...); fill in the "
                            f"labels or drop those rows")
        y = labels.to_numpy()
        df = df.drop(columns=[column])
    bad = [str(c) for c in df.columns
           if not (pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]))]
    if bad:
        shown = ", ".join(bad[:8]) + (", ..." if len(bad) > 8 else "")
        raise DataError(f"{path}: column(s) {shown} are not numeric; ufsbench selects among numeric"
                        f" features: drop or encode them (e.g. one-hot) and save the file again"
                        + ("" if column is not None else "; or, if one of them is the label, give "
                           "dataset.label=<its name>"))
    X = df.to_numpy(dtype=np.float64)
    missing = ~np.isfinite(X)
    if missing.any():
        cols = [str(df.columns[j]) for j in np.flatnonzero(missing.any(axis=0))][:8]
        raise DataError(f"{path} has {int(missing.sum())} missing or infinite value(s) (in "
                        f"column(s) {', '.join(cols)}); ufsbench expects complete data: impute "
                        f"or drop them and save the file again")
    return X, y, [str(c) for c in df.columns], (str(column) if column is not None else "none")


def _array_labels(path: Path, label, n: int) -> tuple[np.ndarray | None, str]:
    """Labels of a .npy file: a sibling file, or the file given as ``label``."""
    spec = label_spec(label)
    if spec.lower() == "none":
        return None, "none"
    if spec.lower() == "auto":
        candidates = [path.with_name(f"{path.stem}{tail}") for tail in
                      ("_labels.npy", "_y.npy", ".labels.npy")]
        found = [c for c in candidates if c.is_file()]
        if not found:
            raise DataError(f"{path} holds only X; put its labels in {candidates[0].name} beside "
                            f"it, give dataset.label=<file of labels>, or dataset.label=none for "
                            f"unlabelled data")
        source = found[0]
    else:
        source = Path(spec).expanduser()
        if not source.is_absolute():
            source = (path.parent / source) if (path.parent / source).is_file() else source
        if not source.is_file():
            raise DataError(f"labels file {source} for {path} does not exist; give "
                            f"dataset.label=<.npy or .txt file with one label per sample>")
    try:
        y = np.load(source, allow_pickle=False) if source.suffix == ".npy" else \
            np.loadtxt(source, dtype=str, ndmin=1)
    except (ValueError, OSError) as exc:
        raise _not_this_format(source, "labels", exc) from None
    y = np.asarray(y).ravel()
    if y.size != n:
        raise DataError(f"{source} has {y.size} labels but {path} has {n} samples; give one "
                        f"label per sample")
    return y, str(source)


def _array_data(path: Path, fmt: str, label):
    try:
        data = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise _not_this_format(path, fmt, exc) from None
    names = None
    if fmt == "npz":
        if not hasattr(data, "files"):
            raise DataError(f"{path} is a single array (.npy), not an .npz archive; rename it to "
                            f".npy or save X and y with numpy.savez")
        keys = list(data.files)
        if "X" not in keys:
            raise DataError(f"{path} holds arrays {keys}, but ufsbench needs X (n x d) and y (n "
                            f"labels); save them with numpy.savez(path, X=X, y=y)")
        X = data["X"]
        if "feature_names" in keys:
            names = [str(v) for v in data["feature_names"]]
        y, used = None, "none"
        if label_spec(label).lower() != "none":
            y_key = next((k for k in ("y", "Y", "labels", "label") if k in keys), None)
            if label_spec(label).lower() not in ("auto",):
                y_key = label_spec(label) if label_spec(label) in keys else None
                if y_key is None:
                    raise DataError(f"{path} has no array {label_spec(label)!r}; its arrays are "
                                    f"{keys}; give dataset.label=<array name> or none")
            if y_key is None:
                raise DataError(f"{path} holds arrays {keys} but no labels y; save them with "
                                f"numpy.savez(path, X=X, y=y), or give dataset.label=none")
            y, used = np.asarray(data[y_key]).ravel(), y_key
    else:
        if hasattr(data, "files"):
            raise DataError(f"{path} is an .npz archive, not a single .npy array; rename it "
                            f"to .npz")
        X = data
        y, used = _array_labels(path, label, np.asarray(X).shape[0] if np.ndim(X) else 0)
    return X, y, names, used


def _mat_data(path: Path, label, layout: dict | None = None):
    import scipy.io
    import scipy.sparse

    from ufsbench.datasets.registry import read_mat

    if label_spec(label).lower() != "none":
        X, y = read_mat(path, layout, own_file=True)
        return X, y, None, "Y"
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # noqa: BLE001 - scipy raises several types for bad files
        raise _not_this_format(path, "MATLAB .mat", exc) from None
    key = next((k for k in ("X", "fea") if k in mat), None)
    if key is None:
        raise DataError(f"{path} holds no X or fea variable; save X (n x d) in it")
    X = mat[key]
    X = X.toarray() if scipy.sparse.issparse(X) else X
    return X, None, None, "none"


def read_data_file(path: str | os.PathLike, fmt: str | None = None, label="auto",
                   layout: dict | None = None) -> dict:
    """X (n, d) float64, raw labels (None when unlabelled), feature names (None when the file has
    none), the label column used, and the format: everything checked, one DataError line if not."""
    path = resolve_path(path)
    fmt = file_format(path, fmt)
    names: list[str] | None
    if fmt in ("csv", "tsv", "parquet"):
        X, y, names, used = _table_data(path, fmt, label)
    elif fmt in ("npz", "npy"):
        X, y, names, used = _array_data(path, fmt, label)
    else:
        X, y, names, used = _mat_data(path, label, layout)
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{path}: X is not numeric ({exc}); save numeric features only") from None
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
        raise DataError(f"{path}: X has shape {X.shape}; ufsbench needs a 2-D X with samples as "
                        f"rows (at least 2) and features as columns")
    if not np.all(np.isfinite(X)):
        raise DataError(f"{path} contains {int(np.sum(~np.isfinite(X)))} NaN or infinite "
                        f"value(s); ufsbench expects complete data: impute or drop them")
    if y is not None and len(y) != X.shape[0]:
        raise DataError(f"{path}: {len(y)} labels for {X.shape[0]} samples; give one label per "
                        f"sample")
    if names is not None and len(names) != X.shape[1]:
        names = None
    return {"X": X, "y": y, "feature_names": names, "label": used, "format": fmt, "path": path}


#: :func:`label_problem`'s answer for labels of one class.
SINGLE_CLASS = "has a single value"


def label_problem(y) -> str | None:
    """Why labels cannot score a clustering (nor give its number of clusters), or None: a
    single class, or a different value in every row (an id or a continuous feature)."""
    values = np.unique(np.asarray(y).astype(str))
    if values.size < 2:
        return SINGLE_CLASS
    if values.size >= len(y):
        return (f"has a different value in every row ({values.size}); it looks like an id or a "
                f"feature, not a class")
    return None


def check_labels(path, y, label: str) -> None:
    """Labels that can score a clustering: at least two classes, fewer classes than samples."""
    problem = label_problem(y)
    if problem is None:
        return
    if problem == SINGLE_CLASS:
        value = str(np.asarray(y).astype(str)[0])
        raise DataError(f"{path}: the label column {label!r} {problem} ({value!r}); scoring a "
                        f"clustering needs at least 2 classes: give the right column with "
                        f"dataset.label=..., or use `ufsbench select ... dataset.label=none` "
                        f"to select features without labels")
    raise DataError(f"{path}: the label column {label!r} {problem}: give the class column with "
                    f"dataset.label=...")
