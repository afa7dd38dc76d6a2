"""ranking_from_scores: higher first, ties by index, round-off differences read as ties on request."""

import numpy as np

from ufsbench.numerics import ranking_from_scores


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
