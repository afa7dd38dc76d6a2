"""Parameter checks shared by the selectors' ``_check_params``.

Each check raises :class:`ufsbench.errors.UFSBenchError` with one line naming the problem and the
fix, ``"OWNER: name=value must be ...; hint"``; ``owner`` is the selector's class name. Checks that
are particular to one method (relations between parameters, properties of X) stay in the method.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ufsbench.errors import UFSBenchError


def _fail(owner: str, name: str, value, requirement: str, hint: str = "") -> None:
    message = f"{owner}: {name}={value!r} must be {requirement}"
    raise UFSBenchError(f"{message}; {hint}" if hint else message)


def _bound(x) -> str:
    return f"{x:g}" if isinstance(x, (Real, np.number)) else str(x)


def _range_text(low, high, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return (f"in {'(' if low_open else '['}{_bound(low)}, {_bound(high)}"
                f"{')' if high_open else ']'}")
    if low is not None:
        return f"{'>' if low_open else '>='} {_bound(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {_bound(high)}"
    return ""


def check_number(owner: str, name: str, value, low=None, high=None, low_open: bool = False,
                 high_open: bool = False, hint: str = "", finite: bool = True,
                 none_ok: bool = False) -> None:
    """``value`` is a real number (not a bool), finite unless ``finite=False``, never NaN, and
    within [low, high] (an end open with ``low_open`` / ``high_open``; None = unbounded).
    ``none_ok`` also accepts None."""
    if none_ok and value is None:
        return
    kind = "a finite number" if finite else "a number"
    where = _range_text(low, high, low_open, high_open)
    requirement = f"{kind} {where}".rstrip() + (" or None" if none_ok else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.number)):
        _fail(owner, name, value, requirement, hint)
    x = float(value)
    if math.isnan(x) or (finite and math.isinf(x)):
        _fail(owner, name, value, requirement, hint)
    if low is not None and (x <= low if low_open else x < low):
        _fail(owner, name, value, requirement, hint)
    if high is not None and (x >= high if high_open else x > high):
        _fail(owner, name, value, requirement, hint)


def check_int(owner: str, name: str, value, minimum: int | None = 1, maximum: int | None = None,
              hint: str = "", none_ok: bool = False) -> None:
    """``value`` is an integer (Python or NumPy, not a bool) in [minimum, maximum] (None =
    unbounded); ``none_ok`` also accepts None."""
    if none_ok and value is None:
        return
    if minimum == 1 and maximum is None:
        requirement = "a positive integer"
    else:
        requirement = f"an integer {_range_text(minimum, maximum, False, False)}".rstrip()
    requirement += " or None" if none_ok else ""
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer))
            or (minimum is not None and value < minimum)
            or (maximum is not None and value > maximum)):
        _fail(owner, name, value, requirement, hint)


def check_choice(owner: str, name: str, value, choices, hint: str = "") -> None:
    """``value`` is one of ``choices`` (any iterable of allowed values, e.g. a tuple or the keys
    of a dict)."""
    allowed = tuple(choices)
    try:
        known = value in allowed
    except (TypeError, ValueError):  # e.g. an array, whose == is element-wise
        known = False
    if not known:
        _fail(owner, name, value, f"one of {', '.join(map(repr, allowed))}", hint)
