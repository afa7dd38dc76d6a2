"""ufsbench: a reproducible benchmark harness for unsupervised feature selection."""

__version__ = "0.1.0"
