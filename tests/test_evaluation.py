import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from ufsbench.errors import UFSBenchError
from ufsbench.evaluation import (clustering_accuracy, clustering_scores, kmeans_labels,
                                 normalized_mutual_info)


def test_acc_hand_worked_permutation():
    # Clusters are a relabelling of the classes except one sample: 5 of 6 correct.
    y = [0, 0, 1, 1, 2, 2]
    z = [2, 2, 0, 0, 1, 0]
    assert clustering_accuracy(y, z) == pytest.approx(5 / 6)


def test_acc_uses_one_to_one_map_not_majority():
    # Majority voting would map both clusters to class 0 (ACC 1.0 is impossible one-to-one).
    y = [0, 0, 0, 0, 1, 1]
    z = [0, 0, 1, 1, 1, 1]
    # Best one-to-one map: cluster 0 -> class 0 (2 right), cluster 1 -> class 1 (2 right).
    assert clustering_accuracy(y, z) == pytest.approx(4 / 6)


def test_nmi_hand_worked():
    # y splits 4 samples 2/2, z puts all in one cluster: I = 0.
    assert normalized_mutual_info([0, 0, 1, 1], [0, 0, 0, 0]) == 0.0
    # Identical partitions: NMI = 1 under every normalisation.
    for norm in ("max", "sqrt", "arithmetic"):
        assert normalized_mutual_info([0, 0, 1, 1, 2], [1, 1, 0, 0, 2], norm) == pytest.approx(1)
    # y = (0,0,1,1), z = (0,0,0,1): H(y) = ln 2, H(z) = H(1/4), I = H(y) - H(y|z).
    hy = np.log(2)
    hz = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))
    h_y_given_z = 0.75 * (-(1 / 3) * np.log(1 / 3) - (2 / 3) * np.log(2 / 3))
    mi = hy - h_y_given_z
    y, z = [0, 0, 1, 1], [0, 0, 0, 1]
    assert normalized_mutual_info(y, z, "max") == pytest.approx(mi / max(hy, hz))
    assert normalized_mutual_info(y, z, "sqrt") == pytest.approx(mi / np.sqrt(hy * hz))
    assert normalized_mutual_info(y, z, "arithmetic") == pytest.approx(
        normalized_mutual_info_score(y, z))


def test_kmeans_is_deterministic_per_seed_and_varies_across_seeds():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    a = clustering_scores(X, rng.integers(0, 4, 200), 4, n_runs=5, random_state=3)
    b = clustering_scores(X, rng.integers(0, 4, 200), 4, n_runs=5, random_state=3)
    assert a.seeds == b.seeds == [3, 4, 5, 6, 7]
    np.testing.assert_array_equal(kmeans_labels(X, 4, 3), kmeans_labels(X, 4, 3))
    labelings = {tuple(kmeans_labels(X, 4, s)) for s in range(5)}
    assert len(labelings) > 1  # the runs really are differently initialised


def test_clustering_scores_on_separable_data():
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(3), 30)
    X = 10 * np.eye(3)[y] + 0.1 * rng.standard_normal((90, 3))
    s = clustering_scores(X, y, 3, n_runs=4)
    assert s.acc.shape == (4,) and s.nmi.shape == (4,)
    assert s.acc_mean > 0.9 and s.nmi_mean > 0.8
    assert set(s.nmi_all) == {"max", "sqrt", "arithmetic"}


@pytest.mark.parametrize("kwargs, message", [
    (dict(nmi="geometric"), "NMI normalisation"),
    (dict(n_runs=0), "n_runs"),
    (dict(n_clusters=50), "n_clusters"),
])
def test_clustering_scores_bad_input(kwargs, message):
    X, y = np.zeros((10, 2)), np.zeros(10)
    args = dict(n_clusters=2) | kwargs
    with pytest.raises(UFSBenchError, match=message):
        clustering_scores(X, y, **args)


def test_scores_of_one_labelling_equal_the_separate_metrics():
    from ufsbench.evaluation import score_labels

    rng = np.random.default_rng(3)
    y, z = rng.integers(0, 5, 300), rng.integers(0, 7, 300) * 3 + 1   # non-contiguous labels
    acc, nmis = score_labels(y, z)
    assert acc == clustering_accuracy(y, z)
    for norm, value in nmis.items():
        assert value == normalized_mutual_info(y, z, norm)
    assert normalized_mutual_info(y, z, "arithmetic") == pytest.approx(
        normalized_mutual_info_score(y, z))
