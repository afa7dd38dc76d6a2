"""Unsupervised feature selectors, one module per method, all reachable through ``make_selector``."""

from ufsbench.methods.base import (UFSSelector, available_methods, make_selector,
                                   method_parameters, register, selector_class)

__all__ = ["UFSSelector", "available_methods", "make_selector", "method_parameters", "register",
           "selector_class"]
