import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from ufsbench.errors import UFSBenchError
from ufsbench.evaluation import clustering_accuracy, clustering_scores, kmeans_labels, normalized_mutual_info


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
    (dict(init="kmeans++"), "K-means init"),
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


def _kmeans_cases():
    """Inputs where a different start, tolerance or tie-break would change some labels."""
    rng = np.random.default_rng(7)
    cases = []
    for n, d, c in [(60, 3, 4), (300, 20, 10), (150, 500, 3), (40, 2, 40)]:
        cases.append((rng.standard_normal((n, d)) + 2 * rng.standard_normal((c, d))[
            rng.integers(0, c, n)], c))
    ties = np.round(rng.standard_normal((120, 4)), 1)                  # many exact ties
    ties[:50] = ties[0]                                                # duplicated points
    cases.append((ties, 6))
    cases.append((np.asfortranarray(rng.random((80, 7)).astype(np.float32)), 5))  # F order, f32
    cases.append((rng.random((1500, 2)), 25))     # slow Lloyd: the tolerance decides the stop
    return cases


@pytest.mark.parametrize("init", ["random", "k-means++"])
def test_protocol_runs_equal_scikit_learn_kmeans_bit_for_bit(init):
    """The evaluation prepares X once for its seeded runs; each run's labels must be those of
    scikit-learn's KMeans with the same seed (the stored results were made with KMeans)."""
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    def reference(X, c, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return KMeans(c, init=init, n_init=1, max_iter=100, random_state=seed,
                          algorithm="lloyd").fit_predict(X)

    for X, c in _kmeans_cases():
        y = np.arange(X.shape[0]) % c
        got = clustering_scores(X, y, c, n_runs=6, random_state=11, init=init, max_iter=100)
        for i, seed in enumerate(got.seeds):
            ref = reference(np.asarray(X, dtype=float), c, seed)   # scores take float64 data
            assert got.acc[i] == clustering_accuracy(y, ref)
            assert got.nmi_all["sqrt"][i] == normalized_mutual_info(y, ref, "sqrt")
            # one run on X as given: KMeans keeps float32 data in float32, and so do we
            np.testing.assert_array_equal(kmeans_labels(X, c, seed, init=init),
                                          reference(X, c, seed))


def test_protocol_runs_keep_lost_cluster_warnings_out_of_sweeps():
    import warnings
    X = np.repeat(np.arange(3.0)[:, None], 10, axis=0)                 # 3 distinct points, k = 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = clustering_scores(X, np.arange(30) % 4, 4, n_runs=3)
    assert s.acc.shape == (3,)


def test_clustering_scores_take_a_random_state_and_report_its_seeds():
    from ufsbench.evaluation import clustering_scores

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (20, 3)), rng.normal(6, 1, (20, 3))])
    y = np.repeat([0, 1], 20)
    drawn = clustering_scores(X, y, 2, n_runs=4, random_state=np.random.RandomState(7))
    again = clustering_scores(X, y, 2, n_runs=4, random_state=np.random.RandomState(7))
    assert drawn.seeds == again.seeds and len(set(drawn.seeds)) == 4
    # The drawn seeds are the runs' seeds: scoring with them one by one gives the same runs.
    for i, seed in enumerate(drawn.seeds):
        one = clustering_scores(X, y, 2, n_runs=1, random_state=seed)
        assert one.acc[0] == drawn.acc[i]
    assert clustering_scores(X, y, 2, n_runs=3, random_state=5).seeds == [5, 6, 7]
