"""Downloading the registry's data sets: one checksummed, atomic HTTP download, and a small
OpenML client for the sets the papers took from OpenML.

A download streams into a hidden temporary file beside its target, is verified (sha256, git blob
SHA-1 or OpenML's md5) and only then renamed into place, so the data directory never holds a
partial or unverified file: a broken transfer, a checksum mismatch or Ctrl-C leaves nothing
behind, and the next attempt starts afresh.

An OpenML entry (``source.openml: {data_id, version, name}``, optionally ``target``, the label
attribute, and ``drop``, attributes that are not features) is fetched as its ARFF file, checked
against the md5 OpenML publishes in the data set's description, reduced by the entry's subset rule
(the first k samples of each class, in file order) and saved as the entry's ``.mat`` file (``X``,
``Y`` labels 1..c). That file is written deterministically (fixed header, no time stamp), and its
sha256, unknown to the registry, is recorded beside it in ``<file>.sha256`` and checked on every
later load. Files downloaded without a registry sha256 (lung, known by its git blob SHA-1) get
the same record.

``$UFSBENCH_OFFLINE=1`` forbids downloads; ``$UFSBENCH_OPENML_URL`` points the OpenML client at
another server (a mirror, or a test server).
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import io
import json
import os
import re
import secrets
import sys
import tempfile
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ufsbench.datasets.registry import (
    first_per_class,
    git_blob_sha1,
    record_sha256,
    sidecar_path,
    where_to_get,
)
from ufsbench.errors import DataError

#: OpenML's root (scikit-learn's ``fetch_openml`` uses it too); ``$UFSBENCH_OPENML_URL``
#: replaces it.
OPENML_URL = "https://www.openml.org/"
_CHUNK = 1 << 16
_TIMEOUT = 60  # seconds without a byte before a transfer counts as broken
#: What each expected checksum is called in messages.
_CHECKS = {"sha256": "sha256", "git_blob_sha1": "git blob SHA-1", "md5": "md5"}


@dataclass(frozen=True)
class Fetched:
    """A data file put into the data directory by :func:`fetch_dataset`.

    Attributes
    ----------
    path : Path
        The file that ``load_dataset`` reads.
    sha256 : str
        Its sha256.
    size : int
        Its size in bytes.
    verified : str
        What the download was checked against, in words.
    recorded : Path or None
        The ``<file>.sha256`` record written because the registry has no sha256 for the file.
    """

    path: Path
    sha256: str
    size: int
    verified: str
    recorded: Path | None = None


def downloads_off() -> bool:
    """True when ``$UFSBENCH_OFFLINE`` is 1."""
    return os.environ.get("UFSBENCH_OFFLINE") == "1"


def openml_url() -> str:
    """The OpenML API root (``$UFSBENCH_OPENML_URL``, else :data:`OPENML_URL`), ending in /."""
    return os.environ.get("UFSBENCH_OPENML_URL", OPENML_URL).rstrip("/") + "/"


def can_fetch(entry: dict) -> bool:
    """Whether the registry knows where to download the entry's file."""
    source = entry.get("source") or {}
    return bool(source.get("url") or source.get("openml"))


# -- one download ----------------------------------------------------------------------------
class _Counting(io.RawIOBase):
    """A response body that counts the bytes read from the wire (before any gzip decoding)."""

    def __init__(self, raw):
        self.raw, self.count = raw, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.raw.readinto(buffer)
        self.count += n or 0
        return n


def _bar(total: int | None, label: str, progress: bool | None):
    """A byte progress bar on stderr; ``progress=None`` shows it only on a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, leave=False, disable=None if progress is None else not progress)


class TransferError(DataError):
    """A download that failed in transit (nothing was saved)."""


def _reason(exc: BaseException) -> str:
    """A failed transfer's cause in one line."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, http.client.IncompleteRead):
        return f"the connection closed with {exc.expected} bytes still to come"
    if isinstance(exc, EOFError):  # a gzip-encoded body cut short
        return "the connection closed before the end of the compressed data"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    text = str(exc).replace("\n", " ").strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _partial(target: Path) -> Path:
    """A hidden, unused name beside ``target`` for the file being written. (Not mkstemp: its
    files are private to the user, and the data file would keep that mode after the rename.)"""
    return target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.part")


def _open(url: str):
    request = urllib.request.Request(url, headers={"User-Agent": "ufsbench",
                                                   "Accept-Encoding": "gzip"})
    return urllib.request.urlopen(request, timeout=_TIMEOUT)


def _stream(url: str, out, label: str, progress: bool | None) -> dict:
    """Copy the body of ``url`` into ``out``; its sha256, md5 and size (of the decoded body)."""
    sha256, md5, size = hashlib.sha256(), hashlib.md5(), 0
    with _open(url) as response:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        wire = _Counting(response)
        body = gzip.GzipFile(fileobj=wire) \
            if response.headers.get("Content-Encoding", "").lower() == "gzip" else wire
        with _bar(total, label, progress) as bar:
            while chunk := body.read(_CHUNK):
                out.write(chunk)
                sha256.update(chunk)
                md5.update(chunk)
                size += len(chunk)
                bar.update(wire.count - bar.n)
        if total is not None and wire.count != total:
            raise http.client.IncompleteRead(b"", total - wire.count)
    return {"sha256": sha256.hexdigest(), "md5": md5.hexdigest(), "size": size}


def download(url: str, target, *, name: str, expected: dict | None = None,
             progress: bool | None = None) -> dict:
    """Download ``url`` into ``target`` atomically, verified against ``expected`` checksums.

    The body streams into a hidden temporary file in ``target``'s directory, which replaces
    ``target`` only once every expected checksum matches; on any failure (or Ctrl-C) the
    temporary file is removed and ``target`` is left as it was.

    Parameters
    ----------
    url : str
        What to download (http, https or file URL); a gzip-encoded body is decoded.
    target : path-like
        Where to save it; its directory is created.
    name : str
        The data set's name, for progress and messages.
    expected : dict, optional
        Checksums to verify, by kind: ``sha256``, ``git_blob_sha1``, ``md5`` (None values are
        ignored).
    progress : bool or None, default=None
        Show a progress bar on stderr; None shows it only when stderr is a terminal.

    Returns
    -------
    digests : dict
        ``sha256``, ``md5`` and ``size`` of the saved file (and ``git_blob_sha1`` when it was
        checked).

    Raises
    ------
    DataError
        When the transfer fails or a checksum does not match (one line: the data set, the URL
        and, for a mismatch, the expected and the actual checksum).
    """
    expected = {kind: value for kind, value in (expected or {}).items() if value}
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    part, placed = _partial(target), False
    try:
        with open(part, "xb") as out:
            try:
                digests = _stream(url, out, name, progress)
            except (OSError, http.client.HTTPException, EOFError, zlib.error) as exc:
                raise TransferError(f"download of {name} from {url} failed ({_reason(exc)}); "
                                    f"nothing was saved; run the same command again to "
                                    f"retry") from None
        if "git_blob_sha1" in expected:
            digests["git_blob_sha1"] = git_blob_sha1(part)
        for kind, want in expected.items():
            if digests.get(kind) != want:
                raise DataError(f"download of {name} from {url} failed its checksum: expected "
                                f"{_CHECKS[kind]} {want}, got {digests.get(kind)}; the file was "
                                f"removed; the source changed or the transfer broke: retry, or "
                                f"fetch the file by hand")
        os.replace(part, target)
        placed = True
    finally:
        if not placed:  # a broken, mismatching or interrupted transfer leaves nothing behind
            part.unlink(missing_ok=True)
    return digests


def _get_json(url: str, name: str) -> dict:
    try:
        with _open(url) as response:
            data = response.read()
            if response.headers.get("Content-Encoding", "").lower() == "gzip":
                data = gzip.decompress(data)
        return json.loads(data)
    except (OSError, http.client.HTTPException, EOFError, zlib.error, ValueError) as exc:
        raise TransferError(f"download of {name}'s OpenML description from {url} failed "
                        f"({_reason(exc)}); nothing was saved; run the same command again to "
                        f"retry") from None


# -- registry entries ------------------------------------------------------------------------
def _offline_error(entry: dict, data_dir: Path) -> DataError:
    path = data_dir / entry["file"]
    return DataError(f"data set {entry['name']!r} is not in {data_dir} and downloads are off "
                     f"(UFSBENCH_OFFLINE=1): unset UFSBENCH_OFFLINE to let ufsbench fetch it, "
                     f"or {where_to_get(entry, path)}")


def fetch_dataset(entry: dict, data_dir, *, progress: bool | None = None) -> Fetched:
    """Download a registry entry's file into ``data_dir`` and verify it.

    A URL source is saved as the entry's file (or, for a converted set, as its original under
    ``sources/``) after its sha256 or git blob SHA-1 matched. An OpenML source is downloaded,
    checked against OpenML's md5, reduced by the entry's subset rule and saved as the entry's
    ``.mat`` file. Without a registry sha256, the file's sha256 is recorded in
    ``<file>.sha256``, which later loads check.

    Parameters
    ----------
    entry : dict
        A registry entry (``ufsbench.datasets.registry_entries()[name]``).
    data_dir : path-like
        The data directory.
    progress : bool or None, default=None
        Show a progress bar on stderr; None shows it only when stderr is a terminal.

    Returns
    -------
    Fetched

    Raises
    ------
    DataError
        When downloads are off (``UFSBENCH_OFFLINE=1``), the entry has no download source, the
        transfer fails or the data does not match the registry.
    """
    data_dir = Path(data_dir).expanduser()
    if not can_fetch(entry):
        raise DataError(f"data set {entry['name']!r} has no download source in the registry; "
                        f"{where_to_get(entry, data_dir / entry.get('file', entry['name']))}")
    if downloads_off():
        raise _offline_error(entry, data_dir)
    try:
        if entry["source"].get("openml"):
            return _fetch_openml(entry, data_dir, progress)
        return _fetch_url(entry, data_dir, progress)
    except TransferError as exc:   # no network, perhaps: the way by hand too
        raise DataError(f"{exc}, or {where_to_get(entry, data_dir / entry['file'])}") from None


def _fetch_url(entry: dict, data_dir: Path, progress) -> Fetched:
    source = entry["source"]
    converted = bool(source.get("layout"))
    target = data_dir / "sources" / Path(source["path"]).name if converted \
        else data_dir / entry["file"]
    sha256 = source.get("sha256") or (None if converted else entry.get("sha256"))
    expected = {"sha256": sha256, "git_blob_sha1": source.get("git_blob_sha1")}
    digests = download(source["url"], target, name=entry["name"], expected=expected,
                       progress=progress)
    verified = " and ".join(f"{_CHECKS[k]} {v}" for k, v in expected.items() if v) or "nothing"
    recorded = None
    if not sha256:
        recorded = record_sha256(target, digests["sha256"])
    return Fetched(target, digests["sha256"], digests["size"], verified, recorded)


def _fetch_openml(entry: dict, data_dir: Path, progress) -> Fetched:
    spec, name = entry["source"]["openml"], entry["name"]
    base = openml_url()
    description = _get_json(f"{base}api/v1/json/data/{spec['data_id']}", name)
    description = _check_description(description, spec, name)
    data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=data_dir, prefix=f".{name}-openml-") as scratch:
        arff = Path(scratch) / f"{spec['data_id']}.arff"
        # The description names the file's location (OpenML moves files between hosts).
        url = description.get("url") or f"{base}data/v1/download/{description['file_id']}"
        download(url, arff, name=name, expected={"md5": description["md5_checksum"]},
                 progress=progress)
        X, y = read_arff_xy(arff, target=spec.get("target") or
                            description.get("default_target_attribute"),
                            drop=_listed(description.get("ignore_attribute"))
                            + _listed(description.get("row_id_attribute"))
                            + _listed(spec.get("drop")))
    X, Y, rule = _apply_registry_rule(entry, X, y, spec)
    note = (f"OpenML data set {spec['data_id']} version {spec['version']} "
            f"(md5 {description['md5_checksum']}), {rule}")
    target = data_dir / entry["file"]
    sha256, size = write_mat(target, X, Y, note)
    recorded = record_sha256(target, sha256)
    return Fetched(target, sha256, size, f"OpenML md5 {description['md5_checksum']}", recorded)


def _listed(value) -> list[str]:
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def _check_description(response: dict, spec: dict, name: str) -> dict:
    """The data set description, checked against the registry's pin."""
    description = response.get("data_set_description") if isinstance(response, dict) else None
    if not isinstance(description, dict) or not description.get("file_id"):
        raise DataError(f"OpenML's description of data set {spec['data_id']} (for {name}) has no "
                        f"file_id; the server is not an OpenML API, or the data set is gone")
    got = (description.get("name"), str(description.get("version")))
    want = (spec["name"], str(spec["version"]))
    if got != want:
        raise DataError(f"OpenML data set {spec['data_id']} is {got[0]} version {got[1]}, but the "
                        f"registry entry {name} pins {want[0]} version {want[1]}; the pinned id "
                        f"is wrong: correct source.openml in its config")
    if "sparse" in str(description.get("format", "")).lower():
        raise DataError(f"OpenML data set {spec['data_id']} ({name}) is sparse ARFF, which "
                        f"ufsbench does not read")
    if not description.get("md5_checksum"):
        raise DataError(f"OpenML publishes no md5 for data set {spec['data_id']} ({name}); "
                        f"ufsbench downloads only files it can verify")
    return description


def _apply_registry_rule(entry: dict, X: np.ndarray, y: np.ndarray, spec: dict):
    """X, labels 1..c and the rule in words: the entry's subset, checked against its shape."""
    subset = (entry.get("subset") or {}).get("first_per_class")
    rule = "all samples"
    if subset:
        rows = first_per_class(y, subset)
        X, y = X[rows], y[rows]
        rule = f"first {subset} samples of each class in file order"
    n_classes = len(np.unique(y))
    want = (entry.get("n_samples"), entry.get("n_features"), entry.get("n_classes"))
    got = (X.shape[0], X.shape[1], n_classes)
    if any(w and w != g for w, g in zip(want, got)):
        raise DataError(f"OpenML data set {spec['data_id']} version {spec['version']} gives "
                        f"{got[0]} x {got[1]} with {got[2]} classes ({rule}), but the registry "
                        f"says {entry['name']} is {want[0]} x {want[1]} with {want[2]}; the "
                        f"pinned data set is not the paper's: nothing was saved")
    if not np.all(np.isfinite(X)):
        raise DataError(f"OpenML data set {spec['data_id']} has missing values among the samples "
                        f"{entry['name']} keeps; ufsbench expects complete data: nothing was saved")
    return X, y, rule


# -- ARFF ------------------------------------------------------------------------------------
_ATTRIBUTE = re.compile(r"""@attribute\s+('[^']*'|"[^"]*"|[^\s{]+)\s*(.*)$""", re.IGNORECASE)


def _attribute(line: str) -> tuple[str, list[str] | None]:
    """(name, kind) of an ``@attribute`` line: kind is None for a number, the declared values
    of a nominal attribute, or [] for strings and dates."""
    match = _ATTRIBUTE.match(line)
    if not match or not match.group(2):
        raise DataError(f"cannot read the ARFF attribute line {line[:80]!r}")
    name, kind = match.group(1).strip("'\""), match.group(2).strip()
    if kind.startswith("{"):
        return name, [value.strip().strip("'\"") for value in kind.strip("{}").split(",")]
    return name, None if kind.split()[0].lower() in ("numeric", "real", "integer") else []


def read_arff_xy(path, target: str | None, drop=()) -> tuple[np.ndarray, np.ndarray]:
    """X (n, d) float64 and labels 1..c from a dense ARFF file.

    Parameters
    ----------
    path : path-like
        The ARFF file.
    target : str or None
        The label attribute; None takes the last attribute.
    drop : sequence of str
        Attributes that are neither features nor labels (OpenML's ignore and row-id attributes,
        and the registry's ``source.openml.drop``); names the file lacks are skipped.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels 1..c: a nominal label's position among its declared values, else the rank of
        its value.
    """
    import pandas as pd

    attributes = []
    with open(path, "rb") as fh:
        for raw in iter(fh.readline, b""):
            line = raw.decode("utf-8", "replace").strip()
            word = line.split(None, 1)[0].lower() if line else ""
            if word == "@attribute":
                attributes.append(_attribute(line))
            elif word == "@data":
                break
        start = fh.tell()
        first = next((line for line in iter(fh.readline, b"")
                      if line.strip() and not line.startswith(b"%")), b"")
        if first.lstrip().startswith(b"{"):
            raise DataError(f"{path} is sparse ARFF, which ufsbench does not read")
        fh.seek(start)
        names = [name for name, _ in attributes]
        nominal = {name: str for name, kind in attributes if kind is not None}
        frame = pd.read_csv(fh, header=None, names=names, quotechar="'", skipinitialspace=True,
                            na_values=["?"], keep_default_na=False, comment="%", dtype=nominal)
    target = target or names[-1]
    kinds = dict(attributes)
    if target not in kinds:
        raise DataError(f"{path} has no attribute {target!r} to take the labels from")
    drop = set(drop)
    features = [name for name in names if name != target and name not in drop]
    text = [name for name in features if kinds[name] is not None]
    if text:
        raise DataError(f"{path} has non-numeric attributes ({', '.join(text[:3])}); ufsbench "
                        f"reads numeric features only")
    labels = frame[target]
    if labels.isna().any():
        raise DataError(f"{path} has samples without a label ({target!r} is missing)")
    declared = kinds[target]
    if declared:
        y = labels.map({value: i + 1 for i, value in enumerate(declared)})
        if y.isna().any():
            raise DataError(f"{path} has labels outside the declared values of {target!r}")
        y = y.to_numpy(np.int64)
    else:
        y = np.unique(labels.to_numpy(), return_inverse=True)[1].astype(np.int64) + 1
    return frame[features].to_numpy(np.float64), y


# -- derived files ---------------------------------------------------------------------------
def write_mat(path, X: np.ndarray, y: np.ndarray, note: str) -> tuple[str, int]:
    """Save X and labels y (1..c) as a compressed .mat file, atomically and reproducibly.

    scipy writes the creation time into the 116-byte header text; it is replaced by ``note``
    (the file's provenance), so that the same data always gives the same bytes and sha256.

    Returns
    -------
    sha256 : str
    size : int
    """
    import scipy.io

    buffer = io.BytesIO()
    labels = np.asarray(y).reshape(-1, 1).astype(np.min_scalar_type(int(np.max(y))))
    scipy.io.savemat(buffer, {"X": np.asarray(X, dtype=np.float64), "Y": labels},
                     do_compression=True)
    data = bytearray(buffer.getvalue())
    data[:116] = f"MATLAB 5.0 MAT-file written by ufsbench: {note}"[:116].ljust(116).encode(
        "ascii", "replace")
    path = Path(path)
    part = _partial(path)
    try:
        part.write_bytes(data)
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return hashlib.sha256(data).hexdigest(), len(data)


# -- what a fetch would do -------------------------------------------------------------------
def fetch_plan(entry: dict, data_dir) -> dict:
    """What :func:`fetch_dataset` would download for an entry, without any network access.

    Returns
    -------
    plan : dict
        ``source`` (URL, or OpenML data id and version with its description URL), ``size``
        (bytes, or None when unknown), ``verify`` (the checks, in words) and ``saves`` (the
        file written, and the sha256 record when there is one).
    """
    data_dir = Path(data_dir).expanduser()
    source = entry["source"]
    target = data_dir / entry["file"]
    if source.get("openml"):
        spec = source["openml"]
        subset = (entry.get("subset") or {}).get("first_per_class")
        rule = f"first {subset} samples of each class" if subset else "all samples"
        return {"source": f"OpenML data set {spec['data_id']} version {spec['version']} "
                          f"({spec['name']}): {openml_url()}api/v1/json/data/{spec['data_id']}",
                "size": source.get("size"),
                "verify": "the md5 OpenML publishes for the ARFF file; then the registry's "
                          "shape and class count",
                "saves": f"{target} ({rule}); its sha256 is not known before the first fetch: "
                         f"recorded in {sidecar_path(target).name} and checked on later loads"}
    converted = bool(source.get("layout"))
    sha256 = source.get("sha256") or (None if converted else entry.get("sha256"))
    checks = [f"{_CHECKS[k]} {v}" for k, v in (("sha256", sha256),
                                                ("git_blob_sha1", source.get("git_blob_sha1")))
              if v]
    if converted:
        saves = f"{data_dir / 'sources' / Path(source['path']).name} (the original, converted on load)"
    else:
        saves = str(target)
    if not sha256:
        saves += f"; its sha256 is recorded in {sidecar_path(target).name} and checked on " \
                 f"later loads"
    return {"source": source["url"], "size": source.get("size"),
            "verify": " and ".join(checks) or "nothing (no checksum recorded)", "saves": saves}
