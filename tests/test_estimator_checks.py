"""scikit-learn's estimator checks over every registered selector.

Every selector must pass scikit-learn's whole ``check_estimator`` suite apart from the expected
failures documented in ``EXPECTED_FAILURES`` (each with its reason). The checks that exercise input
validation and the estimator API run in the default suite for every selector; the rest of the
matrix (many refits of iterative methods on the checks' data) is marked slow (``make test-slow``).
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ufsbench.methods import available_methods, make_selector

#: Constructor arguments for the checks. The checks' data have as few as 2 features and ~30
#: samples; two clusters suit all of it. UFSOL's embedding dimension must stay below d, so it gets
#: n_components=1 (its default follows n_clusters, which would equal d on 2-feature data).
CHECK_PARAMS = {"ufsol": {"n_components": 1}}

#: Checks a selector is expected to fail, with the reason; a selector not listed passes them
#: all. Base-class behaviour (complex/object/empty input messages, 1-feature data, fitted-state
#: detection with ``lambda_``-style parameters) was fixed in ufsbench/methods/base.py instead.
_SOCFS_ORTHOGONALITY = ("the check sets n_components=1 with n_clusters=2; SOCFS's B^T B = I_c "
                        "needs n_components >= n_clusters, so the fit refuses that setting")
EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "socfs": {"check_methods_sample_order_invariance": _SOCFS_ORTHOGONALITY},
    "socfs_triplet": {"check_methods_sample_order_invariance": _SOCFS_ORTHOGONALITY},
}

#: Cheap checks that exercise validation and the API: default suite, for every selector.
FAST_CHECKS = {
    "check_complex_data", "check_dtype_object", "check_estimators_empty_data_messages",
    "check_fit2d_1sample", "check_fit2d_1feature", "check_fit1d", "check_estimators_nan_inf",
    "check_fit_check_is_fitted", "check_estimators_unfitted", "check_estimator_sparse_tag",
    "check_estimator_sparse_array", "check_estimator_sparse_matrix", "check_set_params",
    "check_get_params_invariance", "check_no_attributes_set_in_init", "check_estimator_cloneable",
    "check_estimator_repr", "check_parameters_default_constructible", "check_mixin_order",
    "check_estimator_tags_renamed", "check_valid_tag_types",
}


def check_instances():
    return [make_selector(name, n_clusters=2, random_state=0, **CHECK_PARAMS.get(name, {}))
            for name in available_methods()]


def expected_failures(estimator) -> dict[str, str]:
    return EXPECTED_FAILURES.get(estimator.method_id, {})


def _check_name(check) -> str:
    return getattr(check, "func", check).__name__


CHECKS = parametrize_with_checks(check_instances(), expected_failed_checks=expected_failures)


def _slow_only(decorator):
    """The same parametrisation restricted to the checks outside FAST_CHECKS, marked slow."""
    argnames, params = decorator.args[0], decorator.args[1]
    marked = []
    for p in params:
        values, marks = (p.values, list(p.marks)) if hasattr(p, "values") else (p, [])
        if _check_name(values[1]) not in FAST_CHECKS:
            marked.append(pytest.param(*values, marks=[*marks, pytest.mark.slow]))
    return pytest.mark.parametrize(argnames, marked, **decorator.kwargs)


def _fast_checks_of(method_id: str):
    """(check, expected-failure reason or None) of the fast checks for one selector."""
    for p in CHECKS.args[1]:
        values, marks = (p.values, p.marks) if hasattr(p, "values") else (p, ())
        estimator, check = values
        if estimator.method_id == method_id and _check_name(check) in FAST_CHECKS:
            yield estimator, check, bool(marks)


@_slow_only(CHECKS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name", available_methods())
def test_sklearn_validation_checks(name):
    """The fast checks, one test per selector (each check's name is in the failure message)."""
    ran = 0
    for estimator, check, expected_to_fail in _fast_checks_of(name):
        if expected_to_fail:
            continue
        try:
            check(estimator)
        except Exception as exc:
            raise AssertionError(f"{name}: {_check_name(check)} failed: {exc}") from exc
        ran += 1
    assert ran >= len(FAST_CHECKS) - 6  # a few fast checks apply only to some estimator types


def test_every_selector_is_checked():
    # The checks' parametrisation, built at import, against an independent list of the
    # methods: their configs (configs/method/*.yaml), which the CLI offers.
    from ufsbench.paths import config_dir

    configured = {p.stem for p in (config_dir() / "method").glob("*.yaml")}
    parametrised = {(p.values if hasattr(p, "values") else p)[0].method_id
                    for p in CHECKS.args[1]}
    assert parametrised == configured == set(available_methods())
    assert set(CHECK_PARAMS) <= configured and set(EXPECTED_FAILURES) <= configured
