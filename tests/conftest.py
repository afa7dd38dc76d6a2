import os

import pytest


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """No test writes into the repository or the user's cache, or reads the user's config
    directories; downloads are off unless asked."""
    monkeypatch.setenv("UFSBENCH_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("UFSBENCH_CONFIG_DIR", raising=False)
    monkeypatch.setenv("UFSBENCH_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("UFSBENCH_CACHE", str(tmp_path / "compute-cache"))
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))
