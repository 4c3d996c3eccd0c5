"""A PyFlink program whose output depends on the order a key's elements are read in (run unchanged on funke:
tests/spark/test_pyflink_programs.py). In BATCH mode Flink sorts a keyed operator's input by key and timestamp
(window_all's too: PyFlink keys it by a constant), so a state that concatenates, a rolling reduce and a count
trigger over a global window see each key's elements in timestamp order; untimed elements keep their order. In
STREAMING mode each reads them as they come. A keyed two-input function in BATCH mode reads both inputs merged by
timestamp (its STREAMING order between the inputs is not fixed, so it runs in BATCH mode only; so are ties: no
timestamp of a key is in both inputs). ``python batch_order.py batch`` or ``streaming``."""

import sys

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import (
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ProcessFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
)
from pyflink.datastream.state import ValueStateDescriptor
from pyflink.datastream.window import CountTrigger, GlobalWindows, PurgingTrigger

PAIR = Types.TUPLE([Types.STRING(), Types.INT()])
VALUES = [("a", 1), ("a", 5), ("a", 3), ("b", 2), ("a", 4), ("b", 1)]
OTHERS = [("a", 6), ("b", 3), ("a", 2)]


class Seconds(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1] * 1000


class Stamp(ProcessFunction):
    def __init__(self, label):
        self.label = label

    def process_element(self, value, ctx):
        yield f"{self.label} {value} @ {ctx.timestamp()}"


class Seen(KeyedProcessFunction):
    def __init__(self, label):
        self.label = label

    def open(self, runtime_context):
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.STRING()))

    def process_element(self, value, ctx):
        self.seen.update((self.seen.value() or "") + str(value[1]))
        yield f"{self.label} {value[0]} {self.seen.value()}"


class SeenBoth(KeyedCoProcessFunction):
    def open(self, runtime_context):
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.STRING()))

    def process_element1(self, value, ctx):
        self.seen.update((self.seen.value() or "") + f"L{value[1]}")
        yield f"both {value[0]} {self.seen.value()}"

    def process_element2(self, value, ctx):
        self.seen.update((self.seen.value() or "") + f"R{value[1]}")
        yield f"both {value[0]} {self.seen.value()}"


def pairs_of_two(stream):
    return stream.trigger(PurgingTrigger.of(CountTrigger.of(2))).reduce(lambda a, b: (a[0] + b[0], a[1] + b[1]), output_type=PAIR)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    batch = sys.argv[1:] == ["batch"]
    env.set_runtime_mode(RuntimeExecutionMode.BATCH if batch else RuntimeExecutionMode.STREAMING)
    env.set_parallelism(1)
    untimed = env.from_collection(VALUES, type_info=PAIR)
    timed = untimed.assign_timestamps_and_watermarks(WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Seconds()))
    pairs_of_two(timed.window_all(GlobalWindows.create())).process(Stamp("all"), Types.STRING()).print()
    pairs_of_two(timed.key_by(lambda v: v[0]).window(GlobalWindows.create())).process(Stamp("keyed"), Types.STRING()).print()
    pairs_of_two(untimed.key_by(lambda v: v[0]).window(GlobalWindows.create())).process(Stamp("untimed keyed"), Types.STRING()).print()
    timed.key_by(lambda v: v[0]).process(Seen("seen"), Types.STRING()).print()
    untimed.key_by(lambda v: v[0]).process(Seen("untimed seen"), Types.STRING()).print()
    timed.key_by(lambda v: v[0]).reduce(lambda a, b: (a[0], a[1] * 10 + b[1])).map(lambda v: f"reduce {v}", Types.STRING()).print()
    if batch:
        others = env.from_collection(OTHERS, type_info=PAIR).assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Seconds())
        )
        timed.connect(others).key_by(lambda v: v[0], lambda v: v[0]).process(SeenBoth(), Types.STRING()).print()
    env.execute("batch order")


if __name__ == "__main__":
    main()
