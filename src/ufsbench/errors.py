"""Errors a user can act on: one line naming the problem and the fix."""


class UFSBenchError(ValueError):
    """Bad input or configuration. The CLI prints the message alone and exits with code 2.

    A subclass of ValueError so that scikit-learn's estimator checks recognise input errors.
    """


class DataError(UFSBenchError):
    """A data set is unknown, missing, corrupt or malformed."""


class UnsupportedDataError(UFSBenchError):
    """Valid data outside what a method's model takes (e.g. DGUFS and all-zero features),
    refused before any computation; the message names what to change in the data."""
