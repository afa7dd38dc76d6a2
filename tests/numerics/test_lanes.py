"""Row-block lanes (ufsbench.numerics.lanes): every block once, results in block order, a lane's
blocks in order on one thread, the thread count from the caller's BLAS limit, also inside a
block that holds BLAS to one thread."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from ufsbench.numerics.lanes import BlockLanes, blas_thread_limit, one_blas_thread


@pytest.mark.parametrize("n_blocks,n_lanes", [(1, 2), (5, 1), (5, 2), (7, 3), (2, 8)])
def test_every_block_runs_once_in_its_lane_and_results_come_in_block_order(n_blocks, n_lanes):
    seen = []
    lock = threading.Lock()

    def step(j, lane):
        with lock:
            seen.append((j, lane, threading.get_ident()))
        return j * j

    with BlockLanes(n_blocks, n_lanes) as lanes:
        assert lanes.n_lanes == min(n_blocks, n_lanes)
        assert lanes.map(step) == [j * j for j in range(n_blocks)]
    assert sorted(j for j, _, _ in seen) == list(range(n_blocks))
    assert all(lane == j % lanes.n_lanes for j, lane, _ in seen)
    for lane in range(lanes.n_lanes):          # one thread per lane, its blocks in order
        mine = [(j, ident) for j, owner, ident in seen if owner == lane]
        assert [j for j, _ in mine] == list(range(lane, n_blocks, lanes.n_lanes))
        assert len({ident for _, ident in mine}) == 1


def test_blocks_of_an_array_written_from_two_lanes_equal_one_lane():
    X = np.random.default_rng(0).standard_normal((40, 300))
    blocks = [slice(i, i + 6) for i in range(0, 40, 6)]
    outs = []
    for n_lanes in (1, 2):
        out = np.empty_like(X)

        def step(j, lane, out=out):
            b = blocks[j]
            np.multiply(np.tanh(X[b]), 3.0, out=out[b])
            return float(np.sum(out[b] ** 2))

        with BlockLanes(len(blocks), n_lanes) as lanes:
            sums = lanes.map(step)
        outs.append((out, sums))
    assert np.array_equal(outs[0][0], outs[1][0]) and outs[0][1] == outs[1][1]


def test_an_error_in_a_lane_reaches_the_caller():
    def step(j, lane):
        if j == 3:
            raise ValueError("block 3")
        return j

    with BlockLanes(6, 2) as lanes, pytest.raises(ValueError, match="block 3"):
        lanes.map(step)


def test_the_lane_count_follows_the_blas_limit_in_force():
    with threadpool_limits(limits=1, user_api="blas"):
        assert blas_thread_limit() == 1
        assert BlockLanes(10).n_lanes == 1
    with threadpool_limits(limits=2, user_api="blas"):
        assert BlockLanes(10).n_lanes == min(2, blas_thread_limit())


def test_one_blas_thread_holds_blas_to_one_and_still_answers_the_callers_limit():
    from threadpoolctl import threadpool_info

    def blas_limits():
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    with threadpool_limits(limits=2, user_api="blas"):
        caller = blas_thread_limit()
        with one_blas_thread():
            assert blas_limits() == {1}
            assert blas_thread_limit() == caller
            assert BlockLanes(10).n_lanes == caller
        assert blas_limits() == {caller} and blas_thread_limit() == caller


def test_one_blas_thread_under_a_caller_limit_of_one_keeps_one():
    from threadpoolctl import threadpool_info

    with threadpool_limits(limits=1, user_api="blas"), one_blas_thread():
        assert {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"} == {1}
        assert blas_thread_limit() == 1
