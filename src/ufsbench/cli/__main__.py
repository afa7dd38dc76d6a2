"""``python -m ufsbench.cli``: the ``ufsbench`` command."""

from ufsbench.cli import main

main()
