"""with_idleness is never accepted and then ignored: where it changes nothing (one input) explain()
says so, and where funke cannot honour it (several watermarked inputs of one query) it is refused."""

from __future__ import annotations

import pytest

import funke as fk
from funke.errors import UnsupportedError
from funke.plan.capabilities import check_idleness

SCHEMA = "k string, ts timestamp"


def _wm(idle: bool) -> fk.WatermarkStrategy:
    s = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
    return s.with_idleness(fk.seconds(30)) if idle else s


def test_one_input_with_idleness_is_explained():
    env = fk.StreamEnvironment(app="idle")
    env.from_collection([], SCHEMA, watermarks=_wm(True)).print()
    check_idleness(env.sinks)
    assert "idleness 30000 ms: no effect with this one input, as in Flink" in env.explain()


def test_two_watermarked_inputs_with_idleness_are_refused_before_anything_runs():
    env = fk.StreamEnvironment(app="idle")
    a = env.from_collection([], SCHEMA, watermarks=_wm(True))
    b = env.from_collection([("x", None)], SCHEMA, watermarks=_wm(False))
    a.union(b).print()
    with pytest.raises(UnsupportedError) as e:
        check_idleness(env.sinks)
    assert "with_idleness(30000 ms) on one of 2 watermarked inputs" in str(e.value)
    assert "union first, then assign_timestamps_and_watermarks" in str(e.value)


def test_two_inputs_without_idleness_pass():
    env = fk.StreamEnvironment(app="idle")
    a = env.from_collection([], SCHEMA, watermarks=_wm(False))
    b = env.from_collection([("x", None)], SCHEMA, watermarks=_wm(False))
    a.union(b).print()
    check_idleness(env.sinks)
