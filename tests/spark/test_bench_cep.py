"""``funke bench cep`` in small: the three-step pattern over generated events on the general path,
its matches equal to the pure-Python automaton per key (itself equal to a plain scan). A wrong result
keeping no figures is ``funke.bench.cep.check``'s doctest."""

from __future__ import annotations

import pytest

from funke.bench import cep

pytestmark = pytest.mark.spark

EVENTS, KEYS = 3_000, 40


@pytest.mark.parametrize("latency_mode", ["micro-batch", "latency-first"])
def test_the_bench_runs_and_its_matches_equal_the_reference(spark, latency_mode):
    run = cep.run_cep_bench(spark, EVENTS, KEYS, rows_per_batch=1_500, latency_mode=latency_mode)
    amounts = cep.event_amounts(spark, EVENTS, KEYS)
    want = cep.reference_matches(amounts, KEYS)
    assert want == cep.scan_matches(amounts, KEYS)
    assert run.matches == len(want) > 10  # the pattern matches often enough to check something
    assert run.events == EVENTS and run.batches >= 2
    assert "matches equal to the pure-Python automaton per key" in cep.summary(run)
    assert f"{latency_mode} mode" in cep.summary(run)


def test_a_wrong_result_keeps_no_figures(spark, monkeypatch):
    real = cep.reference_matches
    monkeypatch.setattr(cep, "reference_matches", lambda amounts, keys: real(amounts, keys) | {(0, 0, 1, 2)})
    with pytest.raises(cep.BenchMismatchError, match="1 matches missing"):
        cep.run_cep_bench(spark, 400, KEYS, rows_per_batch=400)
