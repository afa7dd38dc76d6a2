"""Unsupervised feature selectors, one module per method, all reachable through ``make_selector``
and importable by class name (``from ufsbench.methods import LaplacianScore``)."""

from ufsbench.methods.base import (
    UFSSelector,
    available_methods,
    make_selector,
    method_parameters,
    register,
    selector_class,
)

__all__ = ["UFSSelector", "available_methods", "make_selector", "method_parameters", "register",
           "selector_class"]


def _classes() -> dict:
    return {selector_class(name).__name__: selector_class(name) for name in available_methods()}


def __getattr__(name: str):
    # The method modules are imported on first use, not with the package (each pulls in its
    # numerics): a class name is looked up in the registry then.
    classes = _classes()
    if name in classes:
        return classes[name]
    raise AttributeError(f"module 'ufsbench.methods' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, *_classes()])
