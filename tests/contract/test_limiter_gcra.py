"""The rate limiter's algorithm (GCRA) and its bounded in-memory store, on a fake clock."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.clock import FakeClock

from edge.http.limiter import MemoryLimiter, RateState, gcra, gcra_refund


def run(times: list[float], limit: int, window: int) -> list[RateState]:
    """Feed requests at `times` to one key; the decisions."""
    tat: float | None = None
    states = []
    for now in times:
        tat, state = gcra(tat, now, limit, window)
        states.append(state)
    return states


def test_a_fresh_key_gets_the_whole_quota_at_once():
    states = run([0.0] * 61, limit=60, window=60)
    assert [s.allowed for s in states] == [True] * 60 + [False]
    assert [s.remaining for s in states[:60]] == list(range(59, -1, -1))
    # Reset: seconds until the quota is whole again, i.e. one second per request spent.
    assert [s.reset_seconds for s in states[:60]] == list(range(1, 61))
    refused = states[60]
    assert refused == RateState(
        limit=60,
        window_seconds=60,
        remaining=0,
        reset_seconds=60,
        allowed=False,
        retry_after_seconds=1,
    )


def test_exact_values_for_a_pro_plan_fraction_of_a_second():
    # 600/60: a request costs 0.1 s; float steps of 0.1 must still give exact integers.
    states = run([5.0] * 600, limit=600, window=60)
    assert all(s.allowed for s in states)
    assert states[0].remaining == 599 and states[0].reset_seconds == 1
    assert states[9].remaining == 590 and states[9].reset_seconds == 1
    assert states[10].remaining == 589 and states[10].reset_seconds == 2
    assert states[-1].remaining == 0 and states[-1].reset_seconds == 60
    tat = None
    for _ in range(600):
        tat, _state = gcra(tat, 5.0, 600, 60)
    _, refused = gcra(tat, 5.0, 600, 60)
    assert not refused.allowed and refused.retry_after_seconds == 1  # 0.1 s, rounded up


def test_recovery_is_one_request_per_interval():
    tat = None
    for _ in range(60):
        tat, _s = gcra(tat, 0.0, 60, 60)
    _, refused = gcra(tat, 0.5, 60, 60)
    assert not refused.allowed and refused.retry_after_seconds == 1
    new_tat, allowed = gcra(tat, 1.0, 60, 60)
    assert allowed.allowed and allowed.remaining == 0 and allowed.reset_seconds == 60
    _, refused = gcra(new_tat, 1.0, 60, 60)
    assert not refused.allowed
    # After a whole window of silence the quota is whole again.
    _, fresh = gcra(new_tat, 61.0, 60, 60)
    assert fresh.allowed and fresh.remaining == 59


def test_refused_requests_cost_nothing():
    tat = None
    for _ in range(3):
        tat, _s = gcra(tat, 0.0, 3, 30)
    for now in (0.0, 1.0, 5.0, 9.9):
        same, refused = gcra(tat, now, 3, 30)
        assert same == tat and not refused.allowed
    assert refused.retry_after_seconds == 1  # 10 s after the burst: 0.1 s to go
    _, allowed = gcra(tat, 10.0, 3, 30)
    assert allowed.allowed


def test_retry_after_is_whole_seconds_and_at_least_one():
    tat = None
    for _ in range(2):
        tat, _s = gcra(tat, 0.0, 2, 7)  # 3.5 s per request
    _, refused = gcra(tat, 0.0, 2, 7)
    assert refused.retry_after_seconds == 4
    _, refused = gcra(tat, 3.49, 2, 7)
    assert refused.retry_after_seconds == 1
    _, allowed = gcra(tat, 3.5, 2, 7)
    assert allowed.allowed


def test_no_double_burst_at_a_window_boundary():
    """A fixed window lets 2x the limit through around its boundary; GCRA does not."""
    limit, window = 60, 60
    # Spend the whole quota just before a would-be boundary at t=60 ...
    times = [59.9] * limit
    # ... then try a full quota's worth just after it.
    times += [60.1] * limit
    states = run(times, limit, window)
    after_boundary = sum(s.allowed for s in states[limit:])
    assert sum(s.allowed for s in states[:limit]) == limit
    assert after_boundary == 0  # 0.2 s later not even one request (1 s each) came back


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(1, 50),
    window=st.integers(1, 120),
    gaps=st.lists(st.floats(0, 5, allow_nan=False), min_size=1, max_size=300),
)
def test_no_span_ever_admits_more_than_the_burst_plus_the_rate(limit, window, gaps):
    """In any span of t seconds at most limit + t * limit / window requests pass."""
    now, times = 0.0, []
    for gap in gaps:
        now += gap
        times.append(now)
    allowed = [t for t, s in zip(times, run(times, limit, window), strict=True) if s.allowed]
    interval = window / limit
    for i, start in enumerate(allowed):
        for j in range(i, len(allowed)):
            span = allowed[j] - start
            assert j - i + 1 <= limit + span / interval + 1e-6


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(1, 1000),
    window=st.integers(1, 3600),
    times=st.lists(st.floats(0, 10_000, allow_nan=False), min_size=1, max_size=50),
)
def test_headers_stay_in_their_ranges(limit, window, times):
    for state in run(sorted(times), limit, window):
        assert 0 <= state.remaining < limit
        assert 0 <= state.reset_seconds <= window
        if state.allowed:
            assert state.retry_after_seconds == 0
            assert state.reset_seconds >= 1
        else:
            assert 1 <= state.retry_after_seconds <= window
            assert state.remaining == 0


async def test_limits_are_per_key():
    clock = FakeClock()
    limiter = MemoryLimiter(clock=clock)
    for _ in range(2):
        assert (await limiter.hit("a", 2, 10)).allowed
    assert not (await limiter.hit("a", 2, 10)).allowed
    assert (await limiter.hit("b", 2, 10)).allowed
    clock.advance(5)
    assert (await limiter.hit("a", 2, 10)).allowed


@pytest.mark.slow
async def test_memory_is_bounded_however_many_keys():
    clock = FakeClock()
    limiter = MemoryLimiter(capacity=10_000, clock=clock)
    for i in range(200_000):
        await limiter.hit(f"key-{i}", 60, 60)
        if i % 1000 == 0:
            clock.advance(0.01)
        assert len(limiter) <= 10_000


async def test_eviction_drops_recovered_keys_first():
    clock = FakeClock()
    limiter = MemoryLimiter(capacity=100, clock=clock)
    # An active key, exhausted: its history must survive the flood below.
    for _ in range(3):
        await limiter.hit("busy", 3, 60)
    assert not (await limiter.hit("busy", 3, 60)).allowed
    # 99 keys that make one request each and have recovered 2 s later (1 s per request).
    for i in range(99):
        await limiter.hit(f"idle-{i}", 60, 60)
    clock.advance(2)
    # New keys push the table over capacity: the recovered ones go, not "busy".
    for i in range(50):
        await limiter.hit(f"new-{i}", 60, 60)
    assert len(limiter) <= 100
    assert not (await limiter.hit("busy", 3, 60)).allowed


async def test_when_everything_is_active_the_least_recently_used_go():
    clock = FakeClock()
    limiter = MemoryLimiter(capacity=10, clock=clock)
    for i in range(25):
        await limiter.hit(f"k{i}", 1, 60)  # each exhausted for 60 s
    assert len(limiter) <= 10
    assert not (await limiter.hit("k24", 1, 60)).allowed  # recent: remembered
    # An early key lost its history: it gets a whole quota again (never a false refusal).
    assert (await limiter.hit("k0", 1, 60)).allowed


def test_capacity_must_be_positive():
    with pytest.raises(ValueError):
        MemoryLimiter(capacity=0)


async def test_hit_now_is_hit_without_a_coroutine():
    """The in-memory limiter answers `hit_now` (what the rate limit step calls first) with
    the very decisions `hit` makes, counting once per call."""
    clock = FakeClock()
    now, awaited = MemoryLimiter(clock=clock), MemoryLimiter(clock=clock)
    for step in range(12):
        clock.advance(0.25 * (step % 3))
        mine = now.hit_now("k", 5, 10)
        assert mine == await awaited.hit("k", 5, 10)
    assert not mine.allowed


@settings(max_examples=300, deadline=None)
@given(
    limit=st.integers(1, 1000),
    window=st.integers(1, 3600),
    used=st.integers(0, 1000),
    elapsed=st.floats(0, 7200, allow_nan=False),
)
@pytest.mark.slow
def test_a_refund_undoes_the_hit_it_follows(limit, window, used, elapsed):
    """hit then refund leave the TAT as it was, and report the quota of a request made just
    before the hit (Remaining one more than the hit said, capped at the limit)."""
    now = 1000.0
    tat = None
    for _ in range(min(used, limit)):
        tat, _ = gcra(tat, now, limit, window)
    now += elapsed
    after_hit, state = gcra(tat, now, limit, window)
    if not state.allowed:
        return  # refused requests cost nothing, so nothing is refunded
    restored, refunded = gcra_refund(after_hit, now, limit, window)
    before = None if tat is None or tat <= now else tat
    if before is None:
        assert restored is None and refunded == RateState(limit, window, limit, 0)
    else:
        assert restored == pytest.approx(before)
        assert refunded.remaining == min(limit, state.remaining + 1)


def test_refunds_never_fill_more_than_the_bucket():
    clock = FakeClock()
    limiter = MemoryLimiter(clock=clock)
    assert limiter.hit_now("k", 5, 60).remaining == 4
    assert limiter.refund_now("k", 5, 60) == RateState(5, 60, 5, 0)
    assert limiter.refund_now("k", 5, 60) == RateState(5, 60, 5, 0)
    assert len(limiter) == 0  # a full bucket is not remembered
    assert limiter.hit_now("k", 5, 60).remaining == 4
