"""The result store: one JSON record per finished evaluation, written atomically.

Layout: ``<results_dir>/<dataset>/<method>/<record id>.json`` where the id hashes everything that
determines the numbers (data checksum, method, parameters, feature count, evaluation protocol,
seed, scoring). A record is written with a temporary file and ``os.replace``, so a kill at any
moment leaves either the whole record or nothing; a rerun skips every record already present.
Fits of ranking methods are cached beside them (``fits/<fit id>.json``) so a resumed sweep does
not refit either.

Reliability:

* A record carries an ``integrity`` digest of its content and is named by the digest of its key, so
  a truncated, corrupted or misfiled record is detected on reading, reported by name, and
  recomputed; records are keyed by content, so stores from several machines merge by copying
  (:func:`merge_stores`) without conflicts.
* A task is claimed with a lock file created with ``O_CREAT | O_EXCL`` (atomic on local and NFS v3+
  file systems) holding the owner's pid, host and start time, and refreshed by a heartbeat. A lock
  is stale when its owner is a dead process on this host or its heartbeat is older than
  ``stale_after`` seconds (any host); stale locks are broken under a second O_EXCL "breaker" file,
  so two processes cannot both break one lock and both compute the task.
* A failing write (read-only directory, disk full) raises :class:`StoreWriteError` naming the
  directory and the fix; the half-written temporary file is removed, and records written earlier
  are never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

from ufsbench.errors import UFSBenchError
from ufsbench.paths import default_results_dir

RECORD_VERSION = 1
#: Per-data-set directory of the subset-score cache (K-means scores keyed by the feature subset).
SUBSET_SCORES_DIR = "_subset_scores"
#: A lock whose heartbeat is older than this (seconds) is stale, whatever host holds it.
LOCK_STALE_AFTER = 600.0
#: How often (seconds) a lock holder refreshes its lock file's modification time.
LOCK_HEARTBEAT = 30.0


class StoreWriteError(UFSBenchError):
    """The result store cannot be written (read-only, missing permission, disk full)."""


def write_error(directory, exc: OSError) -> StoreWriteError:
    """The one-line error for a failed write into directory (what failed and what to do)."""
    return StoreWriteError(f"cannot write results to {directory} ({exc.strerror or exc}); "
                           f"records written before are kept; free disk space or choose a "
                           f"writable results_dir=...")


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def canonical(value) -> str:
    """Deterministic JSON text of a value (sorted keys), the basis of record ids."""
    return json.dumps(_jsonable(value), sort_keys=True, separators=(",", ":"))


def digest(value) -> str:
    return hashlib.sha1(canonical(value).encode()).hexdigest()[:20]


def _load_json(path: Path):
    """Parsed JSON at path, or None when the file is absent, unreadable or not JSON."""
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


class ResultStore:
    """Reads and writes records under one results directory."""

    def __init__(self, results_dir: str | os.PathLike | None = None):
        self.root = Path(results_dir).expanduser() if results_dir else default_results_dir()

    # -- paths ---------------------------------------------------------------------------------
    def record_path(self, key: dict) -> Path:
        return self.root / key["dataset"] / key["method"] / f"{digest(key)}.json"

    def fit_path(self, fit_key: dict) -> Path:
        return self.root / fit_key["dataset"] / fit_key["method"] / "fits" / f"{digest(fit_key)}.json"

    def failure_path(self, fit_key: dict) -> Path:
        """Where a parameter setting whose fit raised is noted (one level below records)."""
        return self.root / fit_key["dataset"] / fit_key["method"] / "failed" / \
            f"{digest(fit_key)}.json"

    def failure(self, fit_key: dict) -> dict | None:
        """The failure note of a setting, or None when it has not failed."""
        return self.failure_from(self.failure_path(fit_key))

    @staticmethod
    def failure_from(path: Path) -> dict | None:
        note = _load_json(path)
        return note if isinstance(note, dict) and isinstance(note.get("key"), dict) else None

    def write_failure(self, fit_key: dict, error: str, env: dict) -> Path:
        path = self.failure_path(fit_key)
        self.write(path, {"key": fit_key, "error": error, "env": env})
        return path

    def clear_failure(self, fit_key: dict) -> None:
        """Forget a setting's failure note (it has now run through)."""
        self.failure_path(fit_key).unlink(missing_ok=True)

    def subset_scores_path(self, scores_key: dict) -> Path:
        """Where the K-means scores of one feature subset live (one level deeper than records, so
        that iterating records never meets them)."""
        name = digest(scores_key)
        return self.root / scores_key["dataset"] / SUBSET_SCORES_DIR / name[:2] / f"{name}.json"

    # -- reading -------------------------------------------------------------------------------
    @staticmethod
    def read(path: Path) -> dict | None:
        """The record at path, or None when it is absent or unreadable (then it is recomputed)."""
        record = _load_json(path)
        return record if record is not None and record_problem(record, Path(path)) is None else None

    def has(self, key: dict) -> bool:
        return self.read(self.record_path(key)) is not None

    def needs(self, key: dict) -> bool:
        """True when the record of key must be computed; a corrupted one is reported by name."""
        path = self.record_path(key)
        if self.read(path) is not None:
            return False
        if path.exists():
            warnings.warn(f"recomputing corrupted record {path} ({describe_problem(path)})",
                          CorruptRecordWarning, stacklevel=2)
        return True

    def corrupt_records(self) -> list[tuple[Path, str]]:
        """(path, what is wrong) of every record file in the store that cannot be trusted."""
        if not self.root.is_dir():
            return []
        return [(path, describe_problem(path)) for path in sorted(self.root.glob("*/*/*.json"))
                if self.read(path) is None]

    def iter_records(self):
        """Every readable record; unreadable ones are reported by name and skipped."""
        if not self.root.is_dir():
            return
        for path in sorted(self.root.glob("*/*/*.json")):
            record = self.read(path)
            if record is None:
                warnings.warn(f"skipping unreadable record {path} ({describe_problem(path)}; it "
                              f"will be recomputed by the next run)", CorruptRecordWarning,
                              stacklevel=2)
                continue
            record["path"] = str(path)
            yield record

    # -- writing -------------------------------------------------------------------------------
    def write(self, path: Path, payload: dict) -> None:
        """Atomically write payload as JSON to path (temp file in the same directory + rename)."""
        text = json.dumps(_jsonable(payload), indent=1, sort_keys=True)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_partial_prefix(), suffix=".partial")
            try:
                with os.fdopen(fd, "w") as fh:
                    fh.write(text)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
            _fsync_directory(path.parent)
        except OSError as exc:
            raise write_error(path.parent, exc) from None

    def write_record(self, key: dict, result: dict) -> Path:
        return self._write_keyed(self.record_path(key), key, result)

    def read_subset_scores(self, scores_key: dict) -> dict | None:
        return self.read(self.subset_scores_path(scores_key))

    def write_subset_scores(self, scores_key: dict, scores: dict) -> Path:
        return self._write_keyed(self.subset_scores_path(scores_key), scores_key, scores)

    def _write_keyed(self, path: Path, key: dict, result: dict) -> Path:
        payload = _jsonable({"version": RECORD_VERSION, "key": key, **result})
        payload["integrity"] = digest(payload)
        self.write(path, payload)
        return path

    # -- task locks ----------------------------------------------------------------------------
    def lock_path(self, lock_key: dict) -> Path:
        return self.root / lock_key["dataset"] / lock_key["method"] / "locks" / \
            f"{digest(lock_key)}.lock"

    def task_lock(self, lock_key: dict, stale_after: float = LOCK_STALE_AFTER,
                  heartbeat: float = LOCK_HEARTBEAT) -> TaskLock:
        return TaskLock(self.lock_path(lock_key), stale_after=stale_after, heartbeat=heartbeat)


class CorruptRecordWarning(UserWarning):
    """A record file is truncated, corrupted or misfiled; it is ignored and recomputed."""


def record_problem(record, path: Path) -> str | None:
    """What makes a parsed record untrustworthy, or None when it is sound.

    A sound record is a dict with a ``key``, per-run ``acc`` and ``nmi``, is named by the digest of
    its key (so a copied or edited record cannot pose as another), and, when it carries one
    (every record this version writes does; older records may not), matches its ``integrity``
    digest.
    """
    if not isinstance(record, dict) or not isinstance(record.get("key"), dict):
        return "no record key"
    if not isinstance(record.get("acc"), list) or not isinstance(record.get("nmi"), dict):
        return "no per-run scores"
    if path.suffix == ".json" and path.stem != digest(record["key"]):
        return "its name does not match its key"
    stored = record.get("integrity")
    if stored is not None:
        content = {k: v for k, v in record.items() if k != "integrity"}
        if digest(content) != stored:
            return "content does not match its integrity digest"
    return None


def describe_problem(path: Path) -> str:
    """One phrase saying why the record file at path is unusable."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    try:
        record = json.loads(text)
    except ValueError:
        return "truncated or not JSON" if text.strip() else "empty file"
    return record_problem(record, Path(path)) or "sound"


def _fsync_directory(directory: Path) -> None:
    """Make a rename durable (the directory entry reaches the disk), where the OS allows it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- task locks --------------------------------------------------------------------------------
def _partial_prefix() -> str:
    """Temporary record files name their writer, so that a dead writer's leftovers can go."""
    return f".{socket.gethostname()}.{os.getpid()}."


def remove_dead_partials(directory: Path) -> int:
    """Delete half-written record files left in directory by killed processes of this host."""
    removed = 0
    host = socket.gethostname()
    for path in Path(directory).glob(f".{host}.*.partial"):
        pid = path.name[len(host) + 2:].split(".", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: The task locks this process holds (see abandon_held_locks).
_HELD_LOCKS: set = set()


def abandon_held_locks() -> None:
    """Remove the lock file of every task lock this process holds, waiting for nothing.

    For a process about to end itself mid-task: its heartbeat stops with it, but a lock file left
    behind would still look live to other hosts until it is ``stale_after`` old.
    """
    for lock in list(_HELD_LOCKS):
        try:
            if (lock.owner() or {}).get("token") == lock.token:
                lock.path.unlink(missing_ok=True)
        except OSError:
            pass  # the lock goes stale as any dead owner's does


class TaskLock:
    """An exclusive claim on one task across processes and hosts sharing a results directory.

    ``acquire()`` returns False while another live owner holds the lock. The owner's pid, host and
    start time are written into the lock file; a daemon thread touches it every ``heartbeat``
    seconds so that other hosts can tell a live owner (fresh heartbeat) from a dead one.
    """

    BREAKER_STALE_AFTER = 60.0

    def __init__(self, path: Path, stale_after: float = LOCK_STALE_AFTER,
                 heartbeat: float = LOCK_HEARTBEAT):
        self.path = Path(path)
        self.stale_after = float(stale_after)
        self.heartbeat = float(heartbeat)
        self.token = f"{socket.gethostname()}:{os.getpid()}:{time.time_ns()}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.held = False

    # -- owner info --------------------------------------------------------------------------
    def owner(self) -> dict | None:
        """The current lock file's content (pid, host, created, token), or None if there is none."""
        try:
            info = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}
        return info if isinstance(info, dict) else {}

    def is_stale(self) -> bool:
        """True when the lock file exists but its owner is gone (see the class docstring)."""
        try:
            age = time.time() - self.path.stat().st_mtime
        except FileNotFoundError:
            return False
        info = self.owner()
        if info is None:
            return False
        if not info:  # the owner died between creating and filling the file
            return age > min(10.0, self.stale_after)
        if info.get("host") == socket.gethostname() and not _pid_alive(int(info.get("pid", -1))):
            return True
        return age > self.stale_after

    # -- acquire / release --------------------------------------------------------------------
    def acquire(self) -> bool:
        """Claim the lock now (breaking a stale one); False when a live owner holds it."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_error(self.path.parent.parent, exc) from None
        for _ in range(2):
            if self._create():
                self.held = True
                _HELD_LOCKS.add(self)
                self._start_heartbeat()
                return True
            if not self._break_if_stale():
                return False
        return False

    def _create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        except OSError as exc:
            raise write_error(self.path.parent.parent, exc) from None
        info = {"pid": os.getpid(), "host": socket.gethostname(), "created": time.time(),
                "token": self.token}
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(info))
        return True

    def clear_if_stale(self) -> None:
        """Remove the lock file when its owner is gone (a kill after the task's last record)."""
        if self.path.exists():
            self._break_if_stale()

    def _break_if_stale(self) -> bool:
        """Remove a stale lock, holding the breaker file; True when the lock is gone now."""
        if not self.is_stale():
            return not self.path.exists()
        breaker = self.path.with_suffix(".break")
        try:
            fd = os.open(breaker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                if time.time() - breaker.stat().st_mtime > self.BREAKER_STALE_AFTER:
                    breaker.unlink()
            except FileNotFoundError:
                pass
            return False
        os.close(fd)
        try:
            if self.is_stale():  # still stale now that only we may break it
                self.path.unlink(missing_ok=True)
            return not self.path.exists()
        finally:
            breaker.unlink(missing_ok=True)

    def release(self) -> None:
        """Give the lock up (only if this object still owns it)."""
        _HELD_LOCKS.discard(self)
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.held and (self.owner() or {}).get("token") == self.token:
            self.path.unlink(missing_ok=True)
        self.held = False

    def _start_heartbeat(self) -> None:
        self._stop.clear()

        def beat():
            while not self._stop.wait(self.heartbeat):
                try:
                    os.utime(self.path)
                except OSError:
                    return

        self._thread = threading.Thread(target=beat, name="ufsbench-lock-heartbeat", daemon=True)
        self._thread.start()

    def __enter__(self) -> TaskLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def merge_stores(source: str | os.PathLike, target: str | os.PathLike) -> dict:
    """Copy every sound record of ``source`` into ``target`` (stores of several machines -> one).

    Records are named by the digest of their key, so the same evaluation has the same name on
    every machine: a record already in the target is kept (same key = same evaluation), a new
    one is copied atomically. Corrupted source records are reported by name and not copied.
    Returns counts ``{"copied", "present", "corrupt", "conflicts"}``; a conflict is a record whose
    per-run scores differ from the target's copy of the same key (a non-deterministic method or
    a different machine's numerics), kept as it is in the target and reported.
    """
    src, dst = ResultStore(source), ResultStore(target)
    counts = {"copied": 0, "present": 0, "corrupt": 0, "conflicts": 0}
    if not src.root.is_dir():
        raise UFSBenchError(f"no result store at {src.root}; give the directory holding "
                            f"<dataset>/<method>/*.json records")
    for path in sorted(src.root.glob("*/*/*.json")):
        record = src.read(path)
        if record is None:
            warnings.warn(f"not merging corrupted record {path} ({describe_problem(path)})",
                          CorruptRecordWarning, stacklevel=2)
            counts["corrupt"] += 1
            continue
        existing = dst.read(dst.record_path(record["key"]))
        if existing is None:
            dst.write(dst.record_path(record["key"]), record)
            counts["copied"] += 1
        elif (existing["acc"], existing["nmi"]) != (record["acc"], record["nmi"]):
            warnings.warn(f"merge conflict: {path.name} has different scores in {source} and "
                          f"{target}; the target's copy is kept", stacklevel=2)
            counts["conflicts"] += 1
        else:
            counts["present"] += 1
    return counts


# The tidy tables of the records live in ufsbench.records; re-exported so that
# ``from ufsbench.results import load_results`` (and the rest) keeps working.
from ufsbench.records import (  # noqa: E402, F401
    PROTOCOL_COLUMNS,
    PROTOCOL_FLAGS,
    default_protocol,
    load_failures,
    load_results,
    named_rows,
    one_protocol,
    protocol_text,
)
