"""``funke bench pyflink``: PyFlink programs on funke and on real PyFlink, side by side, outputs checked.

**The job** (:data:`JOB`, a PyFlink program written out and run unchanged by both): ``events`` tuples
(key, value, event time) from a collection, a ``KeyedProcessFunction`` keeping each key's running count
in value state and passing on every element whose value is a multiple of 10 with that count, then a
10-second tumbling event-time window per key counting them and summing the counts (an
``AggregateFunction``). Run on real PyFlink (``apache-flink`` in a side environment: ``--pyflink-python``
or ``$FUNKE_PYFLINK_PYTHON``, optional) and on funke (``python -m funke.pyflink``); both print the
window results, compared as multisets. funke also runs the same job written in its own API
(:data:`OWN_JOB`): the compatibility layer's cost is the PyFlink run's time over that one's. Each side
runs as a script in a fresh process and its time is the job's ``execute()`` (the script reports it): the
Spark session starts inside it on funke's two sides, not the start of Python or PyFlink's JVM.

**The examples** (``--examples``): PyFlink 2.3's own DataStream examples, read from the
``apache-flink`` wheel on PyPI (downloaded into a cache, never copied into funke), and funke's
constructs program (``tests/pyflink_programs/constructs.py``), each run on both; lines compared as
multisets, with ``N>`` prefixes (which parallel instance printed: not fixed in Flink either) and
PyFlink's own log lines (its examples send the root logger to stdout) left out.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

WHEEL = "apache-flink==2.3.0"
#: PyFlink 2.3's DataStream examples that run without Kafka, Pulsar, Elasticsearch or a remote model
#: (streaming_word_count and the asyncio one read an endless datagen table: not runnable to an end).
EXAMPLES = (
    "word_count.py", "basic_operations.py", "state_access.py", "event_time_timer.py", "process_json_data.py",
    "windowing/tumbling_time_window.py", "windowing/sliding_time_window.py", "windowing/session_with_gap_window.py",
    "windowing/session_with_dynamic_gap_window.py", "windowing/tumbling_count_window.py",
)  # fmt: skip
#: Lines PyFlink's runtime logs to stdout when a script sends the root logger there (not the script's output).
PYFLINK_LOG_LINES = ("Using Any for unsupported type", "No module named google.cloud.bigquery_storage_v1", "PYFLINK_CYTHON_ENABLED")
_PREFIX = re.compile(r"^\d+> ")


def _cache(cache: str | Path | None) -> Path:
    return Path(cache or os.environ.get("FUNKE_PYFLINK_CACHE") or Path.home() / ".cache" / "funke" / "pyflink")


def _wheel(root: Path) -> Path:
    """The ``apache-flink`` wheel in ``root`` (``pip download``ed there once)."""
    root.mkdir(parents=True, exist_ok=True)
    wheels = sorted(root.glob("apache_flink-2.3.0-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", WHEEL, "--no-deps", "--only-binary", ":all:", "-d", str(root), "-q"], check=True)
        wheels = sorted(root.glob("apache_flink-2.3.0-*.whl"))
    return wheels[0]


def pyflink_source(path: str, cache: str | Path | None = None) -> str:
    """The text of one file of PyFlink 2.3 as published in its wheel (``pyflink/table/expressions.py``): read at
    run time to compare funke's translation with it, never copied into funke."""
    with zipfile.ZipFile(_wheel(_cache(cache))) as wheel:
        return wheel.read(path).decode()


def examples_dir(cache: str | Path | None = None, kind: str = "datastream") -> Path:
    """PyFlink 2.3's examples of ``kind`` (``datastream`` or ``table``) as published in the ``apache-flink``
    wheel (``pip download``ed into ``cache``, default ``~/.cache/funke/pyflink``, once)."""
    root = _cache(cache)
    target = root / "examples" / kind
    if (target / "word_count.py").exists():
        return target
    with zipfile.ZipFile(_wheel(root)) as wheel:
        for name in wheel.namelist():
            if name.startswith(("pyflink/examples/datastream/", "pyflink/examples/table/")) and name.endswith(".py"):
                out = root / "examples" / name.removeprefix("pyflink/examples/")
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(wheel.read(name))
    return target


def lines(text: str) -> Counter[str]:
    """Printed lines as a multiset: ``N>`` prefixes and PyFlink's own log lines left out."""
    return Counter(_PREFIX.sub("", line) for line in text.splitlines() if line and not line.startswith(PYFLINK_LOG_LINES))


def difference(funke: Counter[str], pyflink: Counter[str]) -> str:
    """What differs between two outputs (empty: none)."""
    only_f, only_p = funke - pyflink, pyflink - funke
    if not only_f and not only_p:
        return ""
    show = lambda c: "; ".join(f"{k!r} x{v}" for k, v in list(c.items())[:5])
    return f"only funke: {show(only_f) or '-'} | only PyFlink: {show(only_p) or '-'}"


def pyflink_python(given: str | None = None) -> str | None:
    """The Python of a side environment with real PyFlink (``apache-flink``), if there is one."""
    for candidate in (given, os.environ.get("FUNKE_PYFLINK_PYTHON"), "/work/venv-pyflink/bin/python"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def run(python: str, script: str | Path, args: list[str], *, funke: bool, timeout: float = 3600) -> tuple[str, str, float]:
    """Run a PyFlink script (on funke: ``python -m funke.pyflink``); its stdout, stderr and wall seconds."""
    env = dict(os.environ)
    if not funke:  # PyFlink's workers run ``python`` from PATH: the side environment's
        env["PATH"] = str(Path(python).parent) + os.pathsep + env.get("PATH", "")
    cmd = [python, "-m", "funke.pyflink", str(script), *args] if funke else [python, str(script), *args]
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    seconds = time.monotonic() - t0
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{tail}")
    return done.stdout, done.stderr, seconds


@dataclass
class ExampleRun:
    name: str
    funke_lines: int
    pyflink_lines: int | None
    diff: str
    funke_s: float
    pyflink_s: float | None


def compare_examples(programs: list[tuple[str, Path, list[str]]], pyflink: str | None, on_step: Callable[[str], None] = lambda s: None) -> list[ExampleRun]:
    """Each program on funke and (when ``pyflink`` is a Python with it) on real PyFlink."""
    out = []
    for name, path, args in programs:
        on_step(f"{name}: funke")
        f_out, _, f_s = run(sys.executable, path, args, funke=True)
        p_out, p_s = None, None
        if pyflink is not None:
            on_step(f"{name}: PyFlink")
            p_out, _, p_s = run(pyflink, path, args, funke=False)
        f_lines = lines(f_out)
        diff = difference(f_lines, lines(p_out)) if p_out is not None else ""
        out.append(ExampleRun(name, sum(f_lines.values()), sum(lines(p_out).values()) if p_out is not None else None, diff, f_s, p_s))
    return out


def examples_summary(runs: list[ExampleRun]) -> str:
    same = [r for r in runs if r.pyflink_lines is not None and not r.diff]
    compared = [r for r in runs if r.pyflink_lines is not None]
    parts = [f"{r.name}: {r.funke_lines} lines" + ("" if r.pyflink_lines is None else (" same" if not r.diff else f" DIFFERENT ({r.diff})")) for r in runs]
    head = f"{len(same)}/{len(compared)} programs print what PyFlink prints" if compared else "PyFlink not installed: funke's output only"
    return head + "; " + ", ".join(parts)


# -- the throughput job ---------------------------------------------------------------------------

#: The PyFlink program both systems run (``--events N --keys K``); prints window results, and its
#: ``execute()`` time as ``elapsed_ms`` on stderr.
JOB = '''
import argparse, json, sys, time

from pyflink.common import Duration, Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import AggregateFunction, KeyedProcessFunction, StreamExecutionEnvironment
from pyflink.datastream.state import ValueStateDescriptor
from pyflink.datastream.window import TumblingEventTimeWindows

parser = argparse.ArgumentParser()
parser.add_argument("--events", type=int, default=100_000)
parser.add_argument("--keys", type=int, default=100)
args = parser.parse_args()


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


class RunningCount(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        if value[1] % 10 == 0:
            yield value[0], value[1], n


class CountAndSum(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + 1, accumulator[1] + value[2]

    def get_result(self, accumulator):
        return accumulator

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
events = [("k%d" % (i % args.keys), i % 100, i * 10) for i in range(args.events)]
stream = env.from_collection(events, type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()]))
stream = stream.assign_timestamps_and_watermarks(WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(EventTime()))
marked = stream.key_by(lambda v: v[0], key_type=Types.STRING()).process(RunningCount(), Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()]))
windows = marked.key_by(lambda v: v[0], key_type=Types.STRING()).window(TumblingEventTimeWindows.of(Time.seconds(10)))
counts = windows.aggregate(CountAndSum(), output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
counts.print()
t0 = time.monotonic()
env.execute("pyflink-bench")
print(json.dumps({"elapsed_ms": int((time.monotonic() - t0) * 1000)}), file=sys.stderr)
'''


def expected(events: int, keys: int) -> Counter[str]:
    """The job's window results, computed here in plain Python: per key and 10 s window of event time,
    the number of passed-on elements and the sum of their running counts, printed as Java prints a
    Tuple2 of longs."""
    counts: dict[str, int] = {}
    windows: dict[tuple[str, int], list[int]] = {}
    for i in range(events):
        key, value, ts = f"k{i % keys}", i % 100, i * 10
        counts[key] = counts.get(key, 0) + 1
        if value % 10 == 0:
            acc = windows.setdefault((key, ts // 10_000), [0, 0])
            acc[0] += 1
            acc[1] += counts[key]
    return Counter(f"({n},{total})" for n, total in windows.values())


def _elapsed(stderr: str) -> float:
    for line in reversed(stderr.splitlines()):
        if line.startswith('{"elapsed_ms"'):
            return json.loads(line)["elapsed_ms"] / 1000
    raise RuntimeError("the job did not report its execute() time")


#: The same job in funke's own API (dict rows, typed columns), run as its own script as the PyFlink one is:
#: each side's ``execute()`` in a fresh process (the Spark session starts inside it on both), results printed
#: as the PyFlink job prints them.
OWN_JOB = '''
import argparse, json, sys, time

import funke as fk
from funke.functions import AggregateFunction, KeyedProcessFunction
from funke.state import ValueStateDescriptor
from funke.windows import TumblingEventTimeWindows

parser = argparse.ArgumentParser()
parser.add_argument("--events", type=int, default=100_000)
parser.add_argument("--keys", type=int, default=100)
args = parser.parse_args()


class RunningCount(KeyedProcessFunction):
    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count", int))

    def process_element(self, row, ctx):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        if row["value"] % 10 == 0:
            yield {"key": row["key"], "value": row["value"], "n": n, "ts": row["ts"]}


class CountAndSum(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, row, acc):
        return acc[0] + 1, acc[1] + row["n"]

    def get_result(self, acc):
        return {"n": acc[0], "total": acc[1]}

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


env = fk.StreamEnvironment(app="pyflink-bench-own")
wm = fk.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts", unit="ms")
rows = [("k%d" % (i % args.keys), i % 100, i * 10) for i in range(args.events)]
source = env.from_collection(rows, schema="key string, value bigint, ts bigint", watermarks=wm)
marked = source.key_by("key").process(RunningCount(), output_schema="key string, value bigint, n bigint, ts timestamp")
marked = marked.assign_timestamps_and_watermarks(fk.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts"))
counts = marked.key_by("key").window(TumblingEventTimeWindows.of(fk.seconds(10))).aggregate(CountAndSum(), output_schema="n bigint, total bigint")
sink = counts.collect()
t0 = time.monotonic()
env.execute(bounded=True, name="pyflink-bench-own", fresh=True).wait()
print(json.dumps({"elapsed_ms": int((time.monotonic() - t0) * 1000)}), file=sys.stderr)
print("\\n".join("(%d,%d)" % (r["n"], r["total"]) for r in sink.rows))
'''


@dataclass
class JobRun:
    events: int
    funke_s: float
    own_s: float | None
    pyflink_s: float | None
    checked: str
    repeat: int = 1


def run_job_bench(
    events: int, keys: int, pyflink: str | None, *, own_api: bool = True, repeat: int = 3, on_step: Callable[[str], None] = lambda s: None
) -> JobRun:  # fmt: skip
    """The job on funke (PyFlink's API), in funke's own API (``own_api``) and on PyFlink; every output checked.
    The funke sides run ``repeat`` times each, taking turns (this machine is noisy), and keep their median."""
    want = expected(events, keys)
    funke_runs: list[float] = []
    own_runs: list[float] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="funke-pyflink-bench-") as tmp:
        script, own_script = Path(tmp) / "pyflink_bench_job.py", Path(tmp) / "own_api_job.py"
        script.write_text(JOB)
        own_script.write_text(OWN_JOB)
        args = ["--events", str(events), "--keys", str(keys)]
        for i in range(repeat):
            on_step(f"funke (python -m funke.pyflink): {events:,} events, {keys} keys, run {i + 1} of {repeat}")
            out, err, _ = run(sys.executable, script, args, funke=True)
            funke_runs.append(_elapsed(err))
            problems += [f"funke: {d}" for d in [difference(lines(out), want)] if d]
            if own_api:
                on_step(f"funke's own API: the same job, run {i + 1} of {repeat}")
                out, err, _ = run(sys.executable, own_script, args, funke=False)
                own_runs.append(_elapsed(err))
                problems += [f"own API: {d}" for d in [difference(lines(out), want)] if d]
        pyflink_s = None
        if pyflink is not None:
            on_step(f"PyFlink ({pyflink})")
            out, err, _ = run(pyflink, script, args, funke=False)
            pyflink_s = _elapsed(err)
            problems += [f"PyFlink: {d}" for d in [difference(lines(out), want)] if d]
    if problems:
        raise RuntimeError("outputs differ from the expected window results: " + " / ".join(sorted(set(problems))))
    own_s = statistics.median(own_runs) if own_runs else None
    return JobRun(events, statistics.median(funke_runs), own_s, pyflink_s, f"{sum(want.values()):,} window results checked", repeat)


def job_summary(r: JobRun) -> str:
    parts = [f"funke (PyFlink API) {r.events / r.funke_s:,.0f} events/s ({r.funke_s:.1f} s, median of {r.repeat})"]
    if r.own_s is not None:
        parts.append(f"funke own API {r.events / r.own_s:,.0f} events/s ({r.own_s:.1f} s); compatibility layer cost {r.funke_s / r.own_s - 1:+.0%}")
    if r.pyflink_s is not None:
        parts.append(f"PyFlink {r.events / r.pyflink_s:,.0f} events/s ({r.pyflink_s:.1f} s); funke / PyFlink {r.pyflink_s / r.funke_s:.1f}x")
    else:
        parts.append("PyFlink not run (no side environment with apache-flink)")
    return f"{r.events:,} events: " + "; ".join(parts) + f"; {r.checked}"
