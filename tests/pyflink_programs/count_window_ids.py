"""A PyFlink program printing its count windows' numbers (run unchanged on funke: tests/spark/test_pyflink_programs.py).
PyFlink numbers a key's count windows from 0: a tumbling window of n holds its key's elements n*id .. n*id+n-1, a
sliding one of size s and slide d the elements d*id .. d*id+s-1, and each fires when full."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AllWindowFunction, ProcessAllWindowFunction, ProcessWindowFunction, WindowFunction
from pyflink.datastream.window import CountSlidingWindowAssigner, CountTumblingWindowAssigner

PAIR = Types.TUPLE([Types.STRING(), Types.INT()])
VALUES = [("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5), ("a", 6), ("a", 7), ("b", 8), ("a", 9)]


class Numbered(ProcessWindowFunction):
    def __init__(self, label):
        self.label = label

    def process(self, key, context, elements):
        yield f"{self.label} {key} {context.window()} id={context.window().id} {[v for _, v in elements]}"


class Applied(WindowFunction):
    def apply(self, key, window, inputs):
        yield f"apply {key} {window} {sum(v for _, v in inputs)}"


class NumberedAll(ProcessAllWindowFunction):
    def process(self, context, elements):
        yield f"all {context.window().id} {[v for _, v in elements]}"


class AppliedAll(AllWindowFunction):
    def apply(self, window, inputs):
        yield f"apply all {window.id} {len(inputs)}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    values = env.from_collection(VALUES, type_info=PAIR)
    keyed = values.key_by(lambda v: v[0], key_type=Types.STRING())
    keyed.count_window(2).process(Numbered("tumbling"), Types.STRING()).print()
    keyed.count_window(3, 2).process(Numbered("sliding"), Types.STRING()).print()
    keyed.count_window(2, 3).process(Numbered("gapped"), Types.STRING()).print()
    keyed.count_window(3).apply(Applied(), Types.STRING()).print()
    values.window_all(CountTumblingWindowAssigner.of(4)).process(NumberedAll(), Types.STRING()).print()
    values.window_all(CountSlidingWindowAssigner.of(4, 3)).apply(AppliedAll(), Types.STRING()).print()
    env.execute("count window ids")


if __name__ == "__main__":
    main()
