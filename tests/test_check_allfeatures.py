import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ufsbench.testing import data_dir, requires_data

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_allfeatures.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("check_allfeatures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_preprocessings_do_what_they_say(script):
    X = np.random.default_rng(0).normal(3.0, 2.0, size=(30, 4))
    assert np.allclose(np.linalg.norm(script.PREPROCESSINGS["unit_rows"](X), axis=1), 1.0)
    scaled = script.PREPROCESSINGS["minmax"](X)
    assert np.allclose(scaled.min(axis=0), 0.0) and np.allclose(scaled.max(axis=0), 1.0)
    z = script.PREPROCESSINGS["zscore"](X)
    assert np.allclose(z.mean(axis=0), 0.0) and np.allclose(z.std(axis=0), 1.0)


@requires_data("allaml")
def test_check_puts_each_preprocessing_beside_the_published_cell(script):
    df = script.check(data_dir(), n_runs=3, papers=("dgufs",), datasets=["allaml"])
    assert set(df["metric"]) == {"ACC", "NMI"} and set(df["dataset"]) == {"allaml"}
    acc = df[df["metric"] == "ACC"].iloc[0]
    assert acc["published"] == pytest.approx(67.3, abs=0.05)  # DGUFS Table 2, all features
    ours = {k: acc[k] for k in script.PREPROCESSINGS}
    assert all(0 < v <= 100 for v in ours.values())
    assert acc["closest"] == min(ours, key=lambda k: abs(ours[k] - acc["published"]))
    assert "| paper" in script.render(df)
