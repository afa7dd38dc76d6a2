"""Where ufsbench finds its configs, the data and the result store."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def config_dir() -> Path:
    """The Hydra config tree shipped inside the package (``ufsbench/configs``)."""
    candidate = PACKAGE_DIR / "configs"
    if (candidate / "config.yaml").is_file():
        return candidate
    raise FileNotFoundError("ufsbench's configs/ directory is missing; reinstall the package "
                            "with `pip install ufsbench` (or `pip install -e .` in a clone)")


def repository_dir() -> Path:
    """The clone the package runs from (``src/ufsbench`` -> the clone's top folder)."""
    return PACKAGE_DIR.parents[1]


def default_data_dir() -> Path:
    """$UFSBENCH_DATA, else the per-user cache directory where downloads go."""
    env = os.environ.get("UFSBENCH_DATA")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ufsbench" / "datasets"


def default_results_dir() -> Path:
    """$UFSBENCH_RESULTS, else ``results/runs`` under the current working directory."""
    env = os.environ.get("UFSBENCH_RESULTS")
    return Path(env).expanduser() if env else Path.cwd() / "results" / "runs"
