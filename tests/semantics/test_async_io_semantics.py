"""Async I/O's emission order, capacity and timeouts (funke.semantics.async_io), in pure Python.

Calls complete in an order the test fixes: element ``(i, after)`` finishes once every element
named in ``after`` has finished, so the completion order is known without timing anything."""

from __future__ import annotations

import asyncio

import pytest

from funke.semantics.async_io import AsyncFunction, run_async


class Chained(AsyncFunction):
    def __init__(self):
        self.done: dict[int, asyncio.Event] = {}
        self.in_flight = self.most_in_flight = 0

    def _event(self, i):
        return self.done.setdefault(i, asyncio.Event())

    async def async_invoke(self, value):
        i, after = value
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        for j in after:
            await self._event(j).wait()
        self.in_flight -= 1
        self._event(i).set()
        return [i, i * 10]


ELEMENTS = [(0, [2]), (1, [0]), (2, []), (3, [])]  # completion order: 2, 3, 0, 1 (3 may pass 0)


def test_ordered_results_follow_the_elements_order():
    out = run_async(Chained(), ELEMENTS, ordered=True, timeout_ms=60_000, capacity=10)
    assert out == [0, 0, 1, 10, 2, 20, 3, 30]


def test_unordered_results_follow_the_completion_order():
    out = run_async(Chained(), ELEMENTS, ordered=False, timeout_ms=60_000, capacity=10)
    firsts = out[::2]
    assert sorted(firsts) == [0, 1, 2, 3]
    assert firsts.index(2) < firsts.index(0) < firsts.index(1)  # each after what it waited for
    assert out[1::2] == [10 * i for i in firsts]


class Crowd(AsyncFunction):
    """Call ``i`` completes once ``wanted(i)`` calls have started: with room for enough calls at
    once, every call completes; the test reads how many were in flight at most."""

    def __init__(self, wanted):
        self.wanted, self.started, self.in_flight, self.most_in_flight = wanted, 0, 0, 0
        self.changed = None

    async def async_invoke(self, value):
        self.changed = self.changed or asyncio.Condition()
        async with self.changed:
            self.started += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.changed.notify_all()
            await self.changed.wait_for(lambda: self.started >= self.wanted(value))
            self.in_flight -= 1
        return [value]


def test_capacity_bounds_the_elements_in_flight():
    f = Crowd(lambda i: min(i + 3, 20))  # call i completes when call i + 2 has started
    out = run_async(f, list(range(20)), ordered=False, timeout_ms=60_000, capacity=3)
    assert sorted(out) == list(range(20))
    assert f.most_in_flight == 3
    g = Crowd(lambda i: 20)  # every call waits for the last one: all 20 in flight at once
    assert sorted(run_async(g, list(range(20)), ordered=True, timeout_ms=60_000, capacity=50)) == list(range(20))
    assert g.most_in_flight == 20


def test_in_ordered_mode_a_finished_element_keeps_its_place_until_those_before_it_finish():
    # capacity 2: 0 waits for 2, which cannot enter while 0 and 1 hold both places (1 finished, but
    # it is behind 0), so every call times out; in unordered mode 1 leaves and 2 can enter.
    class Slow(Chained):
        def timeout(self, value):
            return ["timeout", value[0]]

    elements = [(0, [2]), (1, []), (2, [])]
    assert run_async(Slow(), elements, ordered=True, timeout_ms=200, capacity=2) == ["timeout", 0, 1, 10, 2, 20]
    assert run_async(Slow(), elements, ordered=False, timeout_ms=60_000, capacity=2) == [1, 10, 2, 20, 0, 0]


class Never(AsyncFunction):
    async def async_invoke(self, value):
        await asyncio.Event().wait()  # never set: the call never completes


def test_a_timed_out_call_fails_the_job_by_default_naming_the_function_and_element():
    with pytest.raises(TimeoutError, match=r"Never.async_invoke timed out for 7"):
        run_async(Never(), [7], ordered=True, timeout_ms=50, capacity=1)


class Fallback(Never):
    def timeout(self, value):
        return [("default", value)]


def test_timeout_gives_the_results_of_a_timed_out_call():
    assert run_async(Fallback(), [1, 2], ordered=True, timeout_ms=50, capacity=5) == [("default", 1), ("default", 2)]


class Single(AsyncFunction):
    async def async_invoke(self, value):
        return value


def test_a_result_that_is_not_a_list_is_refused_saying_to_wrap_it():
    with pytest.raises(TypeError, match=r"must return a list of results \(even for one result: \[result\]\)"):
        run_async(Single(), [1], ordered=True, timeout_ms=1_000, capacity=1)


class Fails(AsyncFunction):
    async def async_invoke(self, value):
        raise ConnectionError(f"service down for {value}")


def test_an_error_in_a_call_fails_the_run():
    with pytest.raises(ConnectionError, match="service down for 3"):
        run_async(Fails(), [3], ordered=False, timeout_ms=1_000, capacity=2)


def test_capacity_and_timeout_must_be_positive():
    with pytest.raises(ValueError, match="capacity must be positive"):
        run_async(Single(), [], ordered=True, timeout_ms=1, capacity=0)
    with pytest.raises(ValueError, match="timeout must be positive"):
        run_async(Single(), [], ordered=True, timeout_ms=0, capacity=1)
