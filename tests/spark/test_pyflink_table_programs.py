"""PyFlink 2.3's own Table API examples (as published in the ``apache-flink`` wheel, downloaded at run
time, never copied into funke) run unchanged on funke's ``pyflink.table`` translation, each program's
printed lines compared as a multiset with the lines computed here from its data (``N>`` prefixes aside).
Real PyFlink printed the same lines for each (``funke bench pyflink --examples`` runs them there too)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from funke.bench.pyflink import examples_dir
from funke.pyflink._hook import install
from tests.spark.test_pyflink_programs import module_data, run_program

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("spark")]

PEOPLE = [
    (1, {"name": "Flink", "tel": 123, "addr": {"country": "Germany", "city": "Berlin"}}),
    (2, {"name": "hello", "tel": 135, "addr": {"country": "China", "city": "Shanghai"}}),
    (3, {"name": "world", "tel": 124, "addr": {"country": "USA", "city": "NewYork"}}),
    (4, {"name": "PyFlink", "tel": 32, "addr": {"country": "China", "city": "Hangzhou"}}),
]


@pytest.fixture(scope="module")
def examples() -> Path:
    return examples_dir(kind="table")


def test_word_count_prints_every_change_of_each_word_s_count(examples, capsys):
    path = examples / "word_count.py"
    install()
    expected: Counter[str] = Counter(
        ["Executing word_count example with default input data set.", "Use --input to specify file input.",
         "Printing result to stdout. Use --output to specify output path."]
    )  # fmt: skip
    seen: Counter[str] = Counter()
    for line in module_data(path)["word_count_data"]:
        for word in line.split():  # (a group aggregation's changelog: +I the first count, then -U old, +U new)
            seen[word] += 1
            n = seen[word]
            expected.update([f"+I[{word}, 1]"] if n == 1 else [f"-U[{word}, {n - 1}]", f"+U[{word}, {n}]"])
    assert run_program(path, capsys) == expected


def test_process_json_data_takes_a_json_value_of_each_row(examples, capsys):
    expected = Counter(f"+I[{i}, {d['addr']['country']}]" for i, d in PEOPLE)
    assert run_program(examples / "process_json_data.py", capsys) == expected


def test_process_json_data_with_a_python_udf(examples, capsys):
    expected = Counter(f"+I[{i}, {json.dumps({**d, 'tel': d['tel'] + 1})}]" for i, d in PEOPLE)
    assert run_program(examples / "process_json_data_with_udf.py", capsys) == expected


def test_multi_sink_runs_two_inserts_as_one_statement_set(examples, capsys):
    rows = [(1, "Hello"), (2, "World"), (3, "Flink"), (4, "PyFlink")]
    expected = Counter([f"+I[{i}, {d}]" for i, d in rows if i <= 3] + [f"+I[{i}, {d}]" for i, d in rows if "Flink" in d])
    assert run_program(examples / "multi_sink.py", capsys) == expected
