"""Declarative parameter validation: every selector declares a constraint for each parameter,
and a bad value is refused with one line before any fit (also without data, per grid point)."""

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

from ufsbench.errors import UFSBenchError
from ufsbench.methods import available_methods, make_selector
from ufsbench.methods.base import check_setting, selector_class

#: Constructor arguments that the checks' 20 x 5 data need (UFSOL's embedding must stay below d).
CHECK_PARAMS = {"ufsol": {"n_components": 1}}


@pytest.mark.parametrize("name", available_methods())
def test_scikit_learn_param_validation(name):
    # Every parameter has a constraint, and a value of a wrong type or out of its range is
    # refused by fit with scikit-learn's "The 'p' parameter of C must be ... Got ... instead."
    selector = make_selector(name, n_clusters=2, random_state=0, **CHECK_PARAMS.get(name, {}))
    check_param_validation(type(selector).__name__, selector)


@pytest.mark.parametrize("name", available_methods())
def test_every_default_setting_passes_without_data(name):
    check_setting(name, {})


@pytest.mark.parametrize("name, params", [
    ("ufsol", {"k": 2.7}), ("sogfs", {"lambda_init": -1.0}), ("mcfs", {"k": 2.5}),
    ("udfs", {"max_iter": 2.5}), ("dgufs", {"tol": "x"}), ("ls", {"weight": "hot"}),
    ("ls", {"k": -3}), ("ls", {"n_clusters": 0}), ("ls", {"n_features_to_select": 2.5}),
    ("ls", {"k": True}), ("ls", {"n_clusters": False}),
])
def test_bad_values_refused_without_data_in_one_line(name, params):
    (param,) = params
    with pytest.raises(UFSBenchError, match=f"'{param}' parameter of") as caught:
        check_setting(name, params)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, InvalidParameterError)


def test_fit_refuses_before_computing(monkeypatch):
    cls = selector_class("ls")

    def must_not_run(self, X):
        raise AssertionError("_fit ran with an invalid parameter")

    monkeypatch.setattr(cls, "_fit", must_not_run)
    with pytest.raises(UFSBenchError, match="'weight' parameter of LaplacianScore"):
        make_selector("ls", weight="hot").fit(np.random.default_rng(0).normal(size=(20, 5)))
