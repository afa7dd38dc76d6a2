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


@requires_data("allaml")
def test_protocol_variants_beside_the_published_cell(script):
    """The second table: k-means++ starts, the best run, and the three NMI normalisations, each a
    real variant of the protocol runs (the best run is their max, the paper's NMI normalisation
    reproduces the first table's raw cell)."""
    df = script.check(data_dir(), n_runs=4, papers=("dgufs",), datasets=["allaml"])
    acc = df[df["metric"] == "ACC"].iloc[0]
    nmi = df[df["metric"] == "NMI"].iloc[0]
    assert acc["raw_best_of_20"] >= acc["raw"] and nmi["raw_best_of_20"] >= nmi["raw"]
    assert np.isnan(acc["raw_nmi_sqrt"]) and acc["closest_protocol"] in (
        "raw_kmeans++", "raw_best_of_20")
    assert nmi["raw_nmi_sqrt"] == pytest.approx(nmi["raw"])   # DGUFS normalises by sqrt
    # max(Hy, Hz) >= (Hy + Hz) / 2 >= sqrt(Hy Hz): the normalisations order the NMI values
    assert nmi["raw_nmi_max"] <= nmi["raw_nmi_arithmetic"] + 1e-9
    assert nmi["raw_nmi_arithmetic"] <= nmi["raw_nmi_sqrt"] + 1e-9
    assert 0 < nmi["raw_kmeans++"] <= 100
    text = script.render(df)
    assert "## The K-means protocol varied, on raw data" in text and "raw_best_of_20" in text


def test_protocol_variants_from_given_runs(script):
    from ufsbench.evaluation import ClusteringScores

    runs = ClusteringScores(acc=np.array([0.5, 0.7]), nmi=np.array([0.2, 0.4]),
                            nmi_all={"max": np.array([0.2, 0.4]), "sqrt": np.array([0.3, 0.5]),
                                     "arithmetic": np.array([0.25, 0.45])})
    plus = ClusteringScores(acc=np.array([0.9, 0.8]), nmi=np.array([0.6, 0.6]))
    acc = script.protocol_variants(runs, plus, "ACC")
    assert acc["raw_kmeans++"] == pytest.approx(85.0) and acc["raw_best_of_20"] == pytest.approx(70.0)
    nmi = script.protocol_variants(runs, plus, "NMI")
    assert nmi["raw_best_of_20"] == pytest.approx(40.0)
    assert nmi["raw_nmi_sqrt"] == pytest.approx(40.0) and nmi["raw_nmi_max"] == pytest.approx(30.0)
