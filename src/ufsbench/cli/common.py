"""What every ``ufsbench`` command shares: the one-line error exit."""

from __future__ import annotations

import sys


def fail(message: str) -> None:
    """``ufsbench: error: <message>`` on stderr and exit code 2 (bad input or settings)."""
    print(f"ufsbench: error: {message}", file=sys.stderr)
    sys.exit(2)
