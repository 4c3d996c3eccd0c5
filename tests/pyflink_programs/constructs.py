"""A PyFlink program using each DataStream construct funke translates (run unchanged on funke and on
real PyFlink: tests/spark/test_pyflink_programs.py, funke bench pyflink --examples). Each job prints
lines tagged with the construct; every line's value follows from the data by hand."""

import asyncio
import sys

from pyflink.common import Duration, Row, Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import (
    AggregateFunction,
    AsyncDataStream,
    AsyncFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    OutputTag,
    ProcessFunction,
    ProcessWindowFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
    WindowFunction,
)
from pyflink.datastream.functions import ProcessAllWindowFunction
from pyflink.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from pyflink.datastream.window import CountWindow, SlidingEventTimeWindows, TumblingEventTimeWindows

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)

EVENTS = [("a", 1, 1000), ("b", 2, 1500), ("a", 3, 2500), ("c", 4, 6000), ("a", 5, 7000), ("b", 6, 11000)]
TYPE = Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])
def big():
    """The side output of large values (a new tag each time: PyFlink cannot pickle a tag it has used)."""
    return OutputTag("big", Types.TUPLE([Types.STRING(), Types.INT()]))


class Stamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


def events():
    return env.from_collection(EVENTS, type_info=TYPE)


def timed():
    return events().assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(500)).with_timestamp_assigner(Stamp())
    )


class Scale(MapFunction):
    def open(self, runtime_context: RuntimeContext):
        self.factor = 10

    def map(self, value):
        return value[0], value[1] * self.factor


class Twice(FlatMapFunction):
    def flat_map(self, value):
        yield value
        yield value[0].upper(), value[1]


class Odd(FilterFunction):
    def filter(self, value):
        return value[1] % 20 == 10  # (the odd numbers, scaled)


class First(KeySelector):
    def get_key(self, value):
        return value[0]


class States(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        ttl = StateTtlConfig.new_builder(Time.seconds(60)).set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite).build()
        value = ValueStateDescriptor("count", Types.INT())
        value.enable_time_to_live(ttl)
        self.count = runtime_context.get_state(value)
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.INT()))
        self.per = runtime_context.get_map_state(MapStateDescriptor("per", Types.INT(), Types.INT()))
        self.total = runtime_context.get_reducing_state(ReducingStateDescriptor("total", lambda x, y: x + y, Types.INT()))
        self.most = runtime_context.get_aggregating_state(AggregatingStateDescriptor("most", Max(), Types.INT()))

    def process_element(self, value, ctx: "KeyedProcessFunction.Context"):
        self.count.update((self.count.value() or 0) + 1)
        self.seen.add(value[1])
        self.per.put(value[1], value[1] * value[1])
        self.total.add(value[1])
        self.most.add(value[1])
        if value[1] >= 5:
            yield big(), (ctx.get_current_key(), value[1])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)

    def on_timer(self, timestamp, ctx: "KeyedProcessFunction.OnTimerContext"):
        yield "timer", ctx.get_current_key(), timestamp, self.count.value(), sorted(self.seen.get()), sorted(self.per.values()), self.total.get(), self.most.get()


class Max(AggregateFunction):
    def create_accumulator(self):
        return 0

    def add(self, value, accumulator):
        return max(value, accumulator)

    def get_result(self, accumulator):
        return accumulator

    def merge(self, a, b):
        return max(a, b)


class Mean(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value[1], accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


class Label(ProcessWindowFunction):
    def process(self, key, context: ProcessWindowFunction.Context, elements):
        yield key, context.window().start, context.window().end, list(elements)


class CountAll(ProcessAllWindowFunction):
    def process(self, context, elements):
        yield "all", context.window().start, len(list(elements))


class Pairs(WindowFunction):
    def apply(self, key, window: CountWindow, inputs):
        yield key, [v[1] for v in inputs]


class When(ProcessFunction):
    def process_element(self, value, ctx):
        yield value, ctx.timestamp()


class Split(ProcessFunction):
    def process_element(self, value, ctx: "ProcessFunction.Context"):
        if value[1] > 4:
            yield big(), (value[0], value[1])
        else:
            yield value[0], value[1], ctx.timestamp()


class Both(CoMapFunction):
    def map1(self, value):
        return "left", value[0]

    def map2(self, value):
        return "right", value


class Join(KeyedCoProcessFunction):
    """Both inputs' elements of a key meet in one keyed state (which input comes first is not fixed)."""

    def open(self, runtime_context):
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.STRING()))

    def process_element1(self, value, ctx):
        self.seen.add(str(value[1]))
        yield "first", ctx.get_current_key(), value[1]

    def process_element2(self, value, ctx):
        self.seen.add(value[1])
        yield "second", ctx.get_current_key(), value[1]


class Unkeyed(CoProcessFunction):
    def process_element1(self, value, ctx):
        yield "first", value[1]

    def process_element2(self, value, ctx):
        yield "second", value


def rules():
    return MapStateDescriptor("rules", Types.STRING(), Types.INT())


class Rules(KeyedBroadcastProcessFunction):
    def process_element(self, value, ctx):
        limit = ctx.get_broadcast_state(rules()).get("limit")
        yield "rule", value[0], value[1], limit is not None and value[1] > limit

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(rules()).put("limit", value)


class Lookup(AsyncFunction):
    async def async_invoke(self, value):
        await asyncio.sleep(0)
        return [(value[0], value[1] * 100)] if value[1] != 3 else []

    def timeout(self, value):
        return []


def show(name, stream):
    stream.map(lambda v, name=name: f"{name}: {v}", Types.STRING()).print()


job = sys.argv[1] if len(sys.argv) > 1 else "all"

if job in ("all", "functions"):
    show("classes", events().map(Scale()).flat_map(Twice()).filter(Odd()).key_by(First()).sum(1))
    env.from_collection([Row(name="x", v=1.1)], type_info=Types.ROW_NAMED(["name", "v"], [Types.STRING(), Types.FLOAT()])).print()
    env.from_collection([("t", 2.5)], type_info=Types.TUPLE([Types.STRING(), Types.DOUBLE()])).print()
    show("collected", env.from_collection([3, 1, 2]).union(env.from_collection([9])))
    env.execute("functions")

if job in ("all", "state"):
    processed = timed().key_by(lambda v: v[0], key_type=Types.STRING()).process(States())
    show("state", processed)
    show("big", processed.get_side_output(big()))
    env.execute("state")

if job in ("all", "windows"):
    stream = timed().key_by(lambda v: v[0])
    show("tumbling", stream.window(TumblingEventTimeWindows.of(Time.seconds(5))).process(Label()))
    show("mean", timed().key_by(lambda v: v[0]).window(SlidingEventTimeWindows.of(Time.seconds(4), Time.seconds(2))).aggregate(Mean()))
    show("reduce", timed().key_by(lambda v: v[0]).window(TumblingEventTimeWindows.of(Time.seconds(5))).reduce(lambda x, y: (x[0], x[1] + y[1], y[2])))
    show("all", timed().window_all(TumblingEventTimeWindows.of(Time.seconds(5))).process(CountAll()))
    show("count", events().key_by(lambda v: v[0]).count_window(2).apply(Pairs()))
    # cascading windows: a window's results have its last millisecond as their timestamp
    sums = timed().key_by(lambda v: v[0]).window(TumblingEventTimeWindows.of(Time.seconds(5))).reduce(lambda x, y: (x[0], x[1] + y[1], y[2]))
    show("cascade", sums.key_by(lambda v: v[0]).window(TumblingEventTimeWindows.of(Time.seconds(10))).reduce(lambda x, y: (x[0], x[1] + y[1], y[2])))
    show("cascade-all", sums.window_all(TumblingEventTimeWindows.of(Time.seconds(10))).process(CountAll()))
    show("cascade-when", sums.process(When()))
    show("untimed", env.from_collection([("z", 0, 0)], type_info=TYPE).process(When()))
    # a count window's results have the time of the element that fired it; a sliding one fires from its size on
    counted = timed().key_by(lambda v: v[0]).count_window(2).reduce(lambda x, y: (x[0], x[1] + y[1], y[2]))
    show("count-when", counted.process(When()))
    show("count-cascade", counted.window_all(TumblingEventTimeWindows.of(Time.seconds(10))).process(CountAll()))
    show("slide-when", timed().key_by(lambda v: v[0]).count_window(2, 1).apply(Pairs()).process(When()))
    show("mean-when", timed().key_by(lambda v: v[0]).window(SlidingEventTimeWindows.of(Time.seconds(4), Time.seconds(2))).aggregate(Mean()).process(When()))
    env.execute("windows")

if job in ("all", "connect"):
    split = timed().process(Split())
    show("split", split)
    show("split-big", split.get_side_output(big()))
    show("comap", events().connect(env.from_collection([7, 8])).map(Both()))
    show("coprocess", events().connect(env.from_collection(["z"])).process(Unkeyed()))
    keyed = events().connect(env.from_collection([("a", "x"), ("b", "y")])).key_by(lambda v: v[0], lambda v: v[0])
    show("keyed", keyed.process(Join()))
    show("broadcast", events().key_by(lambda v: v[0]).connect(env.from_collection([4]).broadcast(rules())).process(Rules()))
    env.execute("connect")

if job in ("all", "async"):
    show("ordered", AsyncDataStream.ordered_wait(events(), Lookup(), Time.seconds(30), 2, Types.TUPLE([Types.STRING(), Types.INT()])))
    show("unordered", AsyncDataStream.unordered_wait(events(), Lookup(), Time.seconds(30)))
    env.execute("async")

if job in ("all", "collect"):
    print("collect:", sorted(env.from_collection(EVENTS, type_info=TYPE).map(lambda v: v[1], Types.INT()).execute_and_collect()))

if job in ("all", "table"):
    from pyflink.table import ChangelogMode, EnvironmentSettings, StreamTableEnvironment, TableEnvironment
    from pyflink.table.expressions import col

    t_env = StreamTableEnvironment.create(env)
    sums = t_env.from_data_stream(events()).group_by(col("f0")).select(col("f0").alias("k"), col("f1").sum.alias("total"))
    show("changelog", t_env.to_changelog_stream(sums).map(lambda r: (str(r.get_row_kind()), r["k"], r["total"])))
    # (PyFlink passes a changelog mode on only with a target schema: every kind here too)
    show("upsert", t_env.to_changelog_stream(sums, changelog_mode=ChangelogMode.upsert()).map(lambda r: (str(r.get_row_kind()), r[0], r[1])))
    t_env.to_changelog_stream(sums).print()
    env.execute("table")
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    values = batch.from_elements([(k, v) for k, v, _ in EVENTS], ["k", "v"])
    print("sorted:", [tuple(r) for r in values.order_by(col("k"), col("v").desc).execute().collect()])
    print("paged:", [tuple(r) for r in values.order_by(col("v").desc).offset(1).fetch(3).execute().collect()])
