"""ranking_from_scores: higher first, ties by index, round-off differences read as ties on request."""

import numpy as np

from ufsbench.numerics import ranking_from_scores
from ufsbench.numerics.sparsity import tie_groups


def test_exact_ranking_orders_by_score_then_index_with_nan_last():
    scores = np.array([0.5, np.nan, 2.0, 0.5, 1.0])
    np.testing.assert_array_equal(ranking_from_scores(scores), [2, 4, 0, 3, 1])


def test_round_off_differences_are_ties_ordered_by_index():
    ulp = np.spacing(1.0)
    scores = np.array([0.3, 1.0 - ulp, 1.0 + 2 * ulp, 1.0, 0.9, 1.0 - 1e-9, np.nan])
    assert ranking_from_scores(scores)[:4].tolist() == [2, 3, 1, 5]     # round-off decides
    tied = ranking_from_scores(scores, tie_rtol=1e-12)
    np.testing.assert_array_equal(tied, [1, 2, 3, 5, 4, 0, 6])          # 1e-9 is not a tie
    # The tolerance is relative to the largest score: the same ranking at any scale.
    np.testing.assert_array_equal(ranking_from_scores(1e-6 * scores, tie_rtol=1e-12), tied)


def test_tied_ranking_does_not_move_with_round_off():
    rng = np.random.default_rng(0)
    scores = np.repeat([3.0, 2.0, 1.0], 20)
    for _ in range(5):
        noisy = scores * (1 + 4 * np.spacing(1.0) * rng.standard_normal(scores.size))
        np.testing.assert_array_equal(ranking_from_scores(noisy, tie_rtol=1e-12),
                                      np.arange(60))


def test_tie_order_replaces_index_order_only_among_ties():
    scores = np.array([1.0, 0.2, 1.0 + 1e-15, 0.5, 1.0])
    tie_order = np.array([4, 0, 3, 2, 1])                   # keys: feature 1 < 4 < 3 < 2 < 0
    np.testing.assert_array_equal(ranking_from_scores(scores, 1e-12, tie_order), [4, 2, 0, 3, 1])
    np.testing.assert_array_equal(ranking_from_scores(scores, 1e-12), [0, 2, 4, 3, 1])


def test_infinite_and_nan_scores_do_not_widen_the_tolerance():
    scores = np.array([1.0, 0.5, -np.inf, np.nan, 0.5 + 1e-15, np.inf])
    np.testing.assert_array_equal(ranking_from_scores(scores, 1e-12), [5, 0, 1, 4, 2, 3])


def test_a_long_run_of_small_steps_is_not_one_tie_group():
    """Near-zero row norms 1e-13 apart spanning 2e-10 (UDFS at gamma = 1e6): chaining steps
    below the tolerance made them one group, and a seeded order replaced their real order.
    Every group now spans at most the tolerance."""
    scores = np.concatenate(([1.0, 1.0 - 1e-16], 2e-10 - 1e-13 * np.arange(2000)))
    groups = tie_groups(scores, 1e-12)
    for g in np.unique(groups):
        members = scores[groups == g]
        assert members.max() - members.min() <= 1e-12
    assert groups[0] == groups[1] != groups[2]
    assert np.unique(groups).size > 100
    ranking = ranking_from_scores(scores, 1e-12, tie_order=np.random.default_rng(0).permutation(2002))
    assert set(ranking[:2]) == {0, 1}
    assert np.all(np.diff(scores[ranking[2:]]) <= 1e-12)    # order kept up to the tolerance


def test_tied_at_cut_counts_the_group_the_ranking_permutes():
    """A run of scores 1.1e-13 apart below a top score of 1 (tolerance 1e-12): groups of 10.
    tied_at_cut used to re-group the scores in ranking order, where the seeded order inside a
    group breaks the run into pieces (and the old chained groups made the run one group)."""
    from ufsbench.methods.base import UFSSelector

    class Tied(UFSSelector):
        score_tie_rtol = 1e-12

        def __init__(self, n_features_to_select=None, n_clusters=2, random_state=None):
            self.n_features_to_select = n_features_to_select
            self.n_clusters = n_clusters
            self.random_state = random_state

        def _fit(self, X):
            run = 1e-12 * (3.05 - 0.11 * np.arange(X.shape[1] - 1))
            self.scores_ = np.concatenate(([1.0], run))

    X = np.random.default_rng(0).standard_normal((5, 32))
    for seed in range(3):
        sel = Tied(random_state=seed).fit(X)
        assert [sel.tied_at_cut(m) for m in (1, 5, 10, 11, 15, 21, 25, 30, 31)] == \
            [0, 10, 10, 0, 10, 0, 10, 10, 0]


def test_positions_among_stored_rows_follow_top_rows_and_l20_project():
    from ufsbench.numerics.sparsity import (
        l20_project,
        largest_positions,
        smallest_positions,
        top_rows,
    )

    rng = np.random.default_rng(4)
    W = np.round(rng.standard_normal((30, 3)), 1)             # ties in the row norms
    W[[3, 7, 8]] = W[5]
    norms, idx = np.linalg.norm(W, axis=1), np.arange(30)
    for m in (1, 4, 10):
        np.testing.assert_array_equal(idx[largest_positions(norms, idx, m)], top_rows(W, m))
        zeroed = np.flatnonzero(~np.any(l20_project(W, 30 - m), axis=1))
        np.testing.assert_array_equal(np.sort(idx[smallest_positions(norms, idx, m)]), zeroed)
    stored = np.array([2, 3, 5, 7, 8, 20])                    # a matrix stored on some rows
    np.testing.assert_array_equal(largest_positions(norms[stored], stored, 3),
                                  top_rows(W[stored], 3))


def test_largest_indices_is_the_stable_sort_rule_on_ties_zeros_infinities_and_nan():
    from ufsbench.numerics.sparsity import largest_indices

    rng = np.random.default_rng(7)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])
    for trial in range(400):
        n = int(rng.integers(1, 40))
        values = rng.integers(0, 4, size=n).astype(float)     # many ties at the cut
        if trial % 3 == 0:
            values[rng.integers(0, n, size=3)] = rng.choice(specials, size=3)
        for m in range(n + 2):
            expected = np.sort(np.lexsort((np.arange(n), -values))[:m])
            np.testing.assert_array_equal(largest_indices(values, m), expected)
