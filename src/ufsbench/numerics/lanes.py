"""Row blocks of an element-wise step spread over threads, with the bits of one thread.

The ADMM steps of EUFS pass over n x d arrays element by element (shrinkage, residuals, dual
updates) a few hundred times per fit: memory-bound numpy work that BLAS threads do not touch. Its
row blocks are independent, and numpy releases the GIL inside each of these operations, so two
threads working on different blocks use two cores. The same holds for the row blocks of SOGFS's
graphs on many samples and for scipy's sparse products, which release the GIL too
(``ufsbench.numerics.sparse_gram``: column blocks of a sparse-dense product, row ranges of a
sparse matrix-vector product). Every block is computed by the same calls on
the same data whichever thread runs it, and whatever a step reduces over blocks (a sum of squares)
is returned per block and added in block order by the caller: the result is the one of a single
thread, bit for bit.

How many threads: as many as the caller lets BLAS use (threadpoolctl's view of the environment
variables and of any ``threadpool_limits`` in force), so a runner or a smoke worker that limits
BLAS to one thread also gets one lane here, and a direct fit on an idle machine gets every core
BLAS would take. Inside :func:`one_blas_thread` (a fit whose BLAS runs on one thread) the
answer stays the caller's limit: the lanes then take the threads BLAS does not. Import by
module path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

#: The caller's BLAS thread limit while :func:`one_blas_thread` holds BLAS to one thread.
_CALLER_LIMIT: ContextVar[int | None] = ContextVar("ufsbench_caller_blas_limit", default=None)


def blas_thread_limit() -> int:
    """Threads the caller lets the loaded BLAS libraries use (the smallest limit among them;
    outside any :func:`one_blas_thread`, the limit in force); 1 when none is loaded."""
    outer = _CALLER_LIMIT.get()
    if outer is not None:
        return outer
    from threadpoolctl import threadpool_info

    counts = [int(info["num_threads"]) for info in threadpool_info()
              if info.get("user_api") == "blas"]
    return max(1, min(counts)) if counts else 1


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside the block, whatever the caller allows; :func:`blas_thread_limit`
    still answers the caller's limit there."""
    from threadpoolctl import threadpool_limits

    caller = blas_thread_limit()
    token = _CALLER_LIMIT.set(caller)
    try:
        # Already one thread (the runner's tasks): no second scan of the loaded libraries.
        with threadpool_limits(limits=1, user_api="blas") if caller > 1 else nullcontext():
            yield
    finally:
        _CALLER_LIMIT.reset(token)


class BlockLanes:
    """Runs ``step(block, lane)`` for every block index; block j runs in lane j % n_lanes.

    Each lane is one thread (none when there is one lane) and works through its blocks in order,
    so a lane may own scratch buffers (index them by ``lane``). :meth:`map` returns the steps'
    results in block order. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, n_blocks: int, n_lanes: int | None = None):
        self.n_blocks = int(n_blocks)
        lanes = blas_thread_limit() if n_lanes is None else int(n_lanes)
        self.n_lanes = max(1, min(lanes, self.n_blocks))
        self._pool = (ThreadPoolExecutor(max_workers=self.n_lanes, thread_name_prefix="ufs-lane")
                      if self.n_lanes > 1 else None)

    def map(self, step: Callable[[int, int], Any]) -> list:
        """[step(j, j % n_lanes) for j in range(n_blocks)], the lanes in parallel."""
        if self._pool is None:
            return [step(j, 0) for j in range(self.n_blocks)]
        futures = [self._pool.submit(self._run_lane, step, lane) for lane in range(self.n_lanes)]
        results: list = [None] * self.n_blocks
        for future in futures:
            for j, value in future.result():
                results[j] = value
        return results

    def _run_lane(self, step: Callable[[int, int], Any], lane: int) -> list:
        return [(j, step(j, lane)) for j in range(lane, self.n_blocks, self.n_lanes)]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def __enter__(self) -> BlockLanes:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
