"""CentredColumns: X_c diag(1/r) X_c^T, X_c W and X_c^T Y in the dense and split (sparse) forms."""

import numpy as np
import pytest

from ufsbench.numerics.scaled_gram import CentredColumns


def _sparse_data(rng, n=40, d=120, dense_columns=8):
    X = rng.poisson(0.04, size=(n, d)).astype(float) * rng.uniform(1, 9, size=(n, d))
    X[:, :dense_columns] = rng.uniform(0, 4, size=(n, dense_columns))
    return X


@pytest.mark.parametrize("centre", [True, False])
@pytest.mark.parametrize("split", [True, False, None])
def test_both_forms_equal_the_direct_product(centre, split):
    rng = np.random.default_rng(0)
    X = _sparse_data(rng)
    mean = X.mean(axis=0) if centre else None
    Xc = X - mean if centre else X
    data = CentredColumns(X, mean, split=split)
    for _ in range(3):                                        # the stored data is not altered
        reg = rng.uniform(0.05, 20.0, X.shape[1])
        K = data.outer(reg)
        # Sums of 120 products of entries <= 36 / 0.05: round-off far below 1e-10 relative.
        np.testing.assert_allclose(K, Xc @ np.diag(1.0 / reg) @ Xc.T, rtol=1e-12,
                                   atol=1e-10 * np.abs(K).max())
        W, Y = rng.standard_normal((X.shape[1], 3)), rng.standard_normal((X.shape[0], 3))
        XW, XtY = data.dot(W), data.t_dot(Y)
        np.testing.assert_allclose(XW, Xc @ W, rtol=1e-12, atol=1e-12 * np.abs(XW).max())
        np.testing.assert_allclose(XtY, Xc.T @ Y, rtol=1e-12, atol=1e-12 * np.abs(XtY).max())


def test_split_form_is_chosen_for_mostly_sparse_columns_only():
    rng = np.random.default_rng(1)
    assert CentredColumns(_sparse_data(rng)).split
    assert not CentredColumns(rng.standard_normal((40, 120))).split
    # Only heavy columns in the split form: the sparse part is empty.
    X = rng.standard_normal((30, 20))
    data = CentredColumns(X, X.mean(axis=0), split=True)
    reg = rng.uniform(0.5, 2.0, 20)
    Xc = X - X.mean(axis=0)
    np.testing.assert_allclose(data.outer(reg), Xc @ np.diag(1.0 / reg) @ Xc.T, rtol=1e-12,
                               atol=1e-12)
    W, Y = rng.standard_normal((20, 2)), rng.standard_normal((30, 2))
    np.testing.assert_allclose(data.dot(W), Xc @ W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(data.t_dot(Y), Xc.T @ Y, rtol=1e-12, atol=1e-12)


def test_dense_form_is_the_blas_products_of_the_given_centred_data():
    # The dense form is bit for bit the product the push-through solver forms.
    rng = np.random.default_rng(2)
    X = rng.standard_normal((25, 60))
    reg = rng.uniform(0.1, 3.0, 60)
    Xc = X - X.mean(axis=0)
    Z = Xc / np.sqrt(reg)[None, :]
    data = CentredColumns(X, X.mean(axis=0), centred=Xc)
    np.testing.assert_array_equal(data.outer(reg), Z @ Z.T)
    W, Y = rng.standard_normal((60, 2)), rng.standard_normal((25, 2))
    np.testing.assert_array_equal(data.dot(W), Xc @ W)
    np.testing.assert_array_equal(data.t_dot(Y), Xc.T @ Y)
