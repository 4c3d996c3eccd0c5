"""PyFlink programs run unchanged on funke (the import hook, in this process, on the test session):
PyFlink 2.3's own DataStream examples as published in the ``apache-flink`` wheel (downloaded at run
time, never copied into funke) and funke's constructs program (tests/pyflink_programs/constructs.py).

Each program's printed lines are compared as a multiset with the lines computed here, independently,
from the program's data (``N>`` prefixes aside: which parallel instance prints a line is not fixed in
Flink either). ``funke bench pyflink --examples`` runs the same programs on real PyFlink too; both
agreed line for line when these tests were written (README, "Coming from PyFlink").
"""

from __future__ import annotations

import json
import logging
import runpy
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from funke.bench.pyflink import examples_dir, lines
from funke.pyflink._hook import install
from funke.pyflink._runner import QUIET

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("spark")]  # (the shared session, before a PyFlink env asks for one)

PROGRAMS = Path(__file__).resolve().parents[1] / "pyflink_programs"


@pytest.fixture(scope="module")
def examples() -> Path:
    return examples_dir()


def run_program(path: Path, capsys, *args: str) -> Counter[str]:
    """Run a PyFlink program as ``python -m funke.pyflink`` does, here; its printed lines."""
    install()
    saved_argv, root = sys.argv, logging.getLogger()
    saved = (root.handlers[:], root.level, [(logging.getLogger(n).propagate, logging.getLogger(n).level, logging.getLogger(n).handlers[:]) for n in QUIET])
    for name in QUIET:
        logging.getLogger(name).propagate = False
    sys.argv = [str(path), *args]
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv = saved_argv
        root.handlers[:], _ = saved[0], root.setLevel(saved[1])
        for name, (propagate, level, handlers) in zip(QUIET, saved[2], strict=True):
            logger = logging.getLogger(name)
            logger.propagate, logger.handlers[:] = propagate, handlers
            logger.setLevel(level)
    return lines(capsys.readouterr().out)


def module_data(path: Path) -> dict:
    """The program's module-level names (its data), without running its job."""
    return runpy.run_path(str(path), run_name="not_main")


SCRIPT_LINES = ["Printing result to stdout. Use --output to specify output path."]


def test_word_count_prints_each_word_s_count_once_in_batch_mode(examples, capsys):
    path = examples / "word_count.py"
    install()
    words = Counter(w for line in module_data(path)["word_count_data"] for w in line.split())
    expected = Counter([f"({w},{n})" for w, n in words.items()])
    expected.update(["Executing word_count example with default input data set.", "Use --input to specify file input.", *SCRIPT_LINES])
    assert run_program(path, capsys) == expected


def test_basic_operations_map_filter_and_a_rolling_keyed_sum(examples, capsys):
    rows = [
        (1, {"name": "Flink", "tel": 123, "addr": {"country": "Germany", "city": "Berlin"}}),
        (2, {"name": "hello", "tel": 135, "addr": {"country": "China", "city": "Shanghai"}}),
        (3, {"name": "world", "tel": 124, "addr": {"country": "USA", "city": "NewYork"}}),
        (4, {"name": "PyFlink", "tel": 32, "addr": {"country": "China", "city": "Hangzhou"}}),
    ]
    updated = [str((i, json.dumps({**d, "tel": d["tel"] + 1}))) for i, d in rows]
    sums: dict[str, int] = {}
    rolling = []
    for _, d in rows:  # key_by(country).sum(1): the running sum after each element
        country = d["addr"]["country"]
        sums[country] = sums.get(country, 0) + d["tel"]
        rolling.append(str((country, sums[country])))
    assert run_program(examples / "basic_operations.py", capsys) == Counter([*updated, updated[0], *rolling])


def float32(x: float) -> float:
    return float(np.float32(x))


def test_state_access_sums_float_values_through_float32_as_pyflink_gives_them(examples, capsys):
    data = [("Alice", 110.1), ("Bob", 30.2), ("Alice", 20.0), ("Bob", 53.1), ("Alice", 13.1), ("Bob", 3.1), ("Bob", 16.1), ("Alice", 20.1)]
    totals: dict[str, float] = {}
    expected = []
    for name, v in data:  # Types.FLOAT(): each value comes back from the source as a float32
        totals[name] = totals.get(name, 0) + float32(v)
        expected.append(str((name, totals[name])))
    assert run_program(examples / "state_access.py", capsys) == Counter(expected)


def test_event_time_timer_fires_each_key_s_timers_with_its_final_sum(examples, capsys):
    data = [(1000, "Alice", 110.1), (4000, "Bob", 30.2), (3000, "Alice", 20.0), (2000, "Bob", 53.1), (5000, "Alice", 13.1), (3000, "Bob", 3.1), (7000, "Bob", 16.1), (10000, "Alice", 20.1)]
    totals: dict[str, float] = {}
    timers: dict[str, set[int]] = {}
    for ts, name, v in data:
        totals[name] = totals.get(name, 0) + float32(v)
        timers.setdefault(name, set()).add(ts + 2000)
    # the collection is read before the watermark passes any timer: each fires after the last update
    expected = Counter({str((name, totals[name])): len(ts) for name, ts in timers.items()})
    assert run_program(examples / "event_time_timer.py", capsys) == expected


def test_process_json_data_keeps_the_rows_whose_country_is_china(examples, capsys):
    expected = [
        str((2, {"name": "hello", "tel": 136, "addr": {"country": "China", "city": "Shanghai"}})),
        str((4, {"name": "PyFlink", "tel": 33, "addr": {"country": "China", "city": "Hangzhou"}})),
    ]
    assert run_program(examples / "process_json_data.py", capsys) == Counter(expected)


def windows(times: list[int], size: int, slide: int) -> Counter[str]:
    counts: Counter[tuple[int, int]] = Counter()
    for t in times:
        start = t - t % slide
        while start > t - size:
            counts[(start, start + size)] += 1
            start -= slide
    return Counter(f"(hi,{s},{e},{n})" for (s, e), n in counts.items())


def sessions(times: list[int], gap) -> Counter[str]:
    out, current = [], None
    for t in sorted(times):
        w = (t, t + gap(t))
        if current is not None and w[0] <= current[1]:
            current = (current[0], max(current[1], w[1]), current[2] + 1)
        else:
            if current is not None:
                out.append(current)
            current = (*w, 1)
    out.append(current)
    return Counter(f"(hi,{s},{e},{n})" for s, e, n in out)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("tumbling_time_window", windows([1, 2, 3, 4, 5, 8, 9, 15], 5, 5)),
        ("sliding_time_window", windows([1, 2, 3, 4, 5, 8, 9, 15], 5, 2)),
        ("session_with_gap_window", sessions([1, 2, 3, 4, 8, 9, 15], lambda t: 5)),
        ("session_with_dynamic_gap_window", sessions([1, 2, 3, 4, 8, 9, 15], lambda t: t)),
        ("tumbling_count_window", Counter(["(hi,4)", "(hello,6)", "(hello,12)"])),  # hi: 1+3 (5 waits), hello: 2+4, 6+6
    ],
)
def test_the_windowing_examples(examples, capsys, name, expected):
    assert run_program(examples / "windowing" / f"{name}.py", capsys) == expected + Counter(SCRIPT_LINES)


# -- funke's constructs program ------------------------------------------------------------------------------
# EVENTS = (key, value, event ms): a/1/1000, b/2/1500, a/3/2500, c/4/6000, a/5/7000, b/6/11000.

CONSTRUCTS = {
    # Scale (x10) -> Twice (itself and the upper-cased key) -> Odd (odd originals) -> key_by(First).sum(1):
    # a/1, a/3, a/5 pass, as (a, 10) and (A, 10) ...; the running sums per key
    "functions": [
        "classes: ('a', 10)", "classes: ('A', 10)", "classes: ('a', 40)", "classes: ('A', 40)", "classes: ('a', 90)", "classes: ('A', 90)",
        "+I[x,1.100000023841858]", "(t,2.5)",  # a ROW_NAMED FLOAT through float32, printed by Python; a tuple by Java
        "collected: 3", "collected: 1", "collected: 2", "collected: 9",
    ],
    # per key: count, list, map of squares, reducing sum, aggregating max, all read when each element's
    # timer (its time + 1 s) fires, at the end of the bounded input; values >= 5 also to the side output
    "state": [
        "state: ('timer', 'a', 2000, 3, [1, 3, 5], [1, 9, 25], 9, 5)", "state: ('timer', 'a', 3500, 3, [1, 3, 5], [1, 9, 25], 9, 5)",
        "state: ('timer', 'a', 8000, 3, [1, 3, 5], [1, 9, 25], 9, 5)", "state: ('timer', 'b', 2500, 2, [2, 6], [4, 36], 8, 6)",
        "state: ('timer', 'b', 12000, 2, [2, 6], [4, 36], 8, 6)", "state: ('timer', 'c', 7000, 1, [4], [16], 4, 4)",
        "big: ('a', 5)", "big: ('b', 6)",
    ],
    "windows": [
        # 5 s tumbling, ProcessWindowFunction with the elements
        "tumbling: ('a', 0, 5000, [('a', 1, 1000), ('a', 3, 2500)])", "tumbling: ('b', 0, 5000, [('b', 2, 1500)])",
        "tumbling: ('a', 5000, 10000, [('a', 5, 7000)])", "tumbling: ('c', 5000, 10000, [('c', 4, 6000)])",
        "tumbling: ('b', 10000, 15000, [('b', 6, 11000)])",
        # 4 s windows every 2 s, mean value: a [-2,2) 1, [0,4) 2, [2,6) 3, [4,8) 5, [6,10) 5; b [-2,2) 2, [0,4) 2, [8,12) 6, [10,14) 6; c 4, 4
        "mean: 1.0", "mean: 2.0", "mean: 3.0", "mean: 5.0", "mean: 5.0", "mean: 2.0", "mean: 2.0", "mean: 6.0", "mean: 6.0", "mean: 4.0", "mean: 4.0",
        # 5 s tumbling reduce (key, sum, latest time)
        "reduce: ('a', 4, 2500)", "reduce: ('b', 2, 1500)", "reduce: ('a', 5, 7000)", "reduce: ('c', 4, 6000)", "reduce: ('b', 6, 11000)",
        # window_all: elements per 5 s window
        "all: ('all', 0, 3)", "all: ('all', 5000, 2)", "all: ('all', 10000, 1)",
        # count_window(2) per key: a's first two, b's two (a's third and c's one wait)
        "count: ('a', [1, 3])", "count: ('b', [2, 6])",
        # cascading: the 5 s sums (each timestamped 4999, 9999 or 14999, its window's last millisecond) summed
        # again per key in 10 s windows (a's 4 and 5 meet), counted per 10 s window over all keys, and read by a
        # ProcessFunction's ctx.timestamp(); the sliding means likewise (a [-2,2) 1999, [0,4) 3999, ...)
        "cascade: ('a', 9, 7000)", "cascade: ('b', 2, 1500)", "cascade: ('c', 4, 6000)", "cascade: ('b', 6, 11000)",
        "cascade-all: ('all', 0, 4)", "cascade-all: ('all', 10000, 1)",
        "cascade-when: (('a', 4, 2500), 4999)", "cascade-when: (('b', 2, 1500), 4999)", "cascade-when: (('a', 5, 7000), 9999)",
        "cascade-when: (('c', 4, 6000), 9999)", "cascade-when: (('b', 6, 11000), 14999)",
        "mean-when: (1.0, 1999)", "mean-when: (2.0, 3999)", "mean-when: (3.0, 5999)", "mean-when: (5.0, 7999)", "mean-when: (5.0, 9999)",
        "mean-when: (2.0, 1999)", "mean-when: (2.0, 3999)", "mean-when: (6.0, 11999)", "mean-when: (6.0, 13999)",
        "mean-when: (4.0, 7999)", "mean-when: (4.0, 9999)",
        # an element without a timestamp: PyFlink's ctx.timestamp() gives Long.MIN_VALUE
        "untimed: (('z', 0, 0), -9223372036854775808)",
        # count_window(2)'s sums carry the time of the element that fired them (a's 3 at 2500, b's 6 at 11000), and
        # an event-time window over them puts them in [0, 10 s) and [10 s, 20 s); count_window(2, 1) fires from a
        # key's 2nd element on, over its last two (PyFlink's count windows; Flink's Java ones would give [1] first)
        "count-when: (('a', 4, 2500), 2500)", "count-when: (('b', 8, 11000), 11000)",
        "count-cascade: ('all', 0, 1)", "count-cascade: ('all', 10000, 1)",
        "slide-when: (('a', [1, 3]), 2500)", "slide-when: (('a', [3, 5]), 7000)", "slide-when: (('b', [2, 6]), 11000)",
    ],
    "connect": [
        "split: ('a', 1, 1000)", "split: ('b', 2, 1500)", "split: ('a', 3, 2500)", "split: ('c', 4, 6000)", "split-big: ('a', 5)", "split-big: ('b', 6)",
        "comap: ('left', 'a')", "comap: ('left', 'b')", "comap: ('left', 'a')", "comap: ('left', 'c')", "comap: ('left', 'a')", "comap: ('left', 'b')",
        "comap: ('right', 7)", "comap: ('right', 8)",
        *(f"coprocess: ('first', {v})" for v in range(1, 7)), "coprocess: ('second', 'z')",
        *(f"keyed: ('first', '{k}', {v})" for k, v in (("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5), ("b", 6))),
        "keyed: ('second', 'a', 'x')", "keyed: ('second', 'b', 'y')",
        # the broadcast limit 4 (a rule): values above it flagged
        *(f"broadcast: ('rule', '{k}', {v}, {v > 4})" for k, v in (("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5), ("b", 6))),
    ],
    # async I/O: each value times 100, none for 3; ordered (capacity 2) and unordered, the same multiset
    "async": [f"{mode}: ('{k}', {v * 100})" for mode in ("ordered", "unordered") for k, v in (("a", 1), ("b", 2), ("c", 4), ("a", 5), ("b", 6))],
    "collect": ["collect: [1, 2, 3, 4, 5, 6]"],
    # the sum per key as a changelog stream (each RowKind; PyFlink ignores a changelog mode without a target
    # schema), printed and mapped; then a batch sort of the whole table, and one skipping 1 and keeping 3
    "table": [
        *(f"{tag}: {change}" for tag in ("changelog", "upsert") for change in (
            "('+I', 'a', 1)", "('+I', 'b', 2)", "('-U', 'a', 1)", "('+U', 'a', 4)", "('+I', 'c', 4)", "('-U', 'a', 4)", "('+U', 'a', 9)",
            "('-U', 'b', 2)", "('+U', 'b', 8)")),
        "+I[a,1]", "+I[b,2]", "-U[a,1]", "+U[a,4]", "+I[c,4]", "-U[a,4]", "+U[a,9]", "-U[b,2]", "+U[b,8]",
        "sorted: [('a', 5), ('a', 3), ('a', 1), ('b', 6), ('b', 2), ('c', 4)]",
        "paged: [('a', 5), ('c', 4), ('a', 3)]",
    ],
}  # fmt: skip


@pytest.mark.parametrize("job", sorted(CONSTRUCTS))
def test_each_construct_prints_what_pyflink_prints(capsys, job):
    assert run_program(PROGRAMS / "constructs.py", capsys, job) == Counter(CONSTRUCTS[job])


def test_funke_bench_pyflink_job_gives_the_expected_windows_in_both_apis():
    """``funke bench pyflink``'s job, small: as a PyFlink script on funke and as funke's own API, each in a process
    of its own, both outputs equal to the windows computed in Python (``run_job_bench`` raises when one differs)."""
    from funke.bench.pyflink import job_summary, run_job_bench

    result = run_job_bench(2_000, 7, None, repeat=1)
    assert result.own_s is not None and result.funke_s > 0
    assert "compatibility layer cost" in job_summary(result) and "14 window results checked" in job_summary(result)


def test_a_processing_time_window_s_results_carry_its_last_millisecond(capsys):
    """Flink's timestamp of a processing-time window's results, read by a ProcessFunction downstream (funke gave
    them none: ``ctx.timestamp()`` was Long.MIN_VALUE). Each key's window of an hour: its count, and the timestamp
    less the window's end."""
    assert run_program(PROGRAMS / "processing_time.py", capsys) == Counter(["('a', 2, -1)", "('b', 1, -1)"])


def in_reading_order(values: list[tuple[str, int]], batch: bool, timed: bool) -> list[tuple[str, int]]:
    """The order an operator keyed on the first field reads ``values`` in: Flink's BATCH mode sorts a key's timed
    elements by timestamp (here the second field), stably; otherwise as they come."""
    return sorted(values, key=lambda v: v[1]) if batch and timed else list(values)


def batch_order_lines(values: list[tuple[str, int]], others: list[tuple[str, int]], batch: bool) -> Counter[str]:
    """What tests/pyflink_programs/batch_order.py prints, computed from its values: pairs of two per window (the
    keys joined, the numbers summed, stamped with the second's time), the state's text per element, a rolling
    reduce (BATCH mode: its last value per key), and in BATCH mode the state's text of both inputs merged."""
    out: list[str] = []

    def pairs(label: str, elements: list[tuple[str, int]], timed: bool) -> None:
        for first, second in zip(elements[::2], elements[1::2]):
            stamp = second[1] * 1000 if timed else -(2**63)
            out.append(f"{label} {(first[0] + second[0], first[1] + second[1])} @ {stamp}")

    timed_order, untimed_order = in_reading_order(values, batch, True), in_reading_order(values, batch, False)
    pairs("all", timed_order, True)
    keys = sorted({k for k, _ in values})
    for key in keys:
        pairs("keyed", [v for v in timed_order if v[0] == key], True)
        pairs("untimed keyed", [v for v in untimed_order if v[0] == key], False)
        for label, order in (("seen", timed_order), ("untimed seen", untimed_order)):
            digits = "".join(str(n) for k, n in order if k == key)
            out += [f"{label} {key} {digits[: i + 1]}" for i in range(len(digits))]
        rolled = []
        for _, n in (v for v in timed_order if v[0] == key):
            rolled.append(n if not rolled else rolled[-1] * 10 + n)
        out += [f"reduce {(key, r)}" for r in (rolled[-1:] if batch else rolled)]
        if batch:
            both = sorted([(n, "L") for k, n in values if k == key] + [(n, "R") for k, n in others if k == key])
            texts = [f"{side}{n}" for n, side in both]
            out += [f"both {key} {''.join(texts[: i + 1])}" for i in range(len(texts))]
    return Counter(out)


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_batch_mode_reads_a_key_s_elements_in_timestamp_order(capsys, mode):
    """Flink's BATCH execution sorts a keyed operator's input by key and timestamp, and merges a two-input one's
    inputs so; STREAMING reads them as they come (funke read both as they came, a two-input operator's first input
    whole first). PyFlink 2.3 printed these lines for both modes."""
    data = module_data(PROGRAMS / "batch_order.py")
    expected = batch_order_lines(data["VALUES"], data["OTHERS"], mode == "batch")
    assert "seen a 1345" in expected if mode == "batch" else "seen a 1534" in expected  # (the order differs)
    assert run_program(PROGRAMS / "batch_order.py", capsys, mode) == expected


def full_count_windows(elements: list, size: int, slide: int | None = None) -> list[tuple[int, list]]:
    """PyFlink's count windows over one key's ``elements``: window k holds elements slide*k .. slide*k+size-1 and
    fires when full (a tumbling window's slide is its size)."""
    slide = slide or size
    windows, k = [], 0
    while slide * k + size <= len(elements):
        windows.append((k, elements[slide * k : slide * k + size]))
        k += 1
    return windows


def test_count_windows_are_numbered_per_key_as_pyflink_numbers_them(capsys):
    """``CountWindow.id`` and its text (funke refused the id: its count windows are global windows with a count
    trigger, and each firing is the next window's). PyFlink 2.3 printed these lines."""
    values = module_data(PROGRAMS / "count_window_ids.py")["VALUES"]
    expected: list[str] = []
    for key in sorted({k for k, _ in values}):
        numbers = [n for k, n in values if k == key]
        for label, size, slide in (("tumbling", 2, None), ("sliding", 3, 2), ("gapped", 2, 3)):
            expected += [f"{label} {key} CountWindow(id={i}) id={i} {w}" for i, w in full_count_windows(numbers, size, slide)]
        expected += [f"apply {key} CountWindow(id={i}) {sum(w)}" for i, w in full_count_windows(numbers, 3)]
    expected += [f"all {i} {[n for _, n in w]}" for i, w in full_count_windows(values, 4)]
    expected += [f"apply all {i} {len(w)}" for i, w in full_count_windows(values, 4, 3)]
    assert "sliding a CountWindow(id=1) id=1 [4, 6, 7]" in expected
    assert run_program(PROGRAMS / "count_window_ids.py", capsys) == Counter(expected)
