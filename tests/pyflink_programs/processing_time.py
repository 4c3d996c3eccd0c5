"""A PyFlink program reading a processing-time window's results' timestamp (run unchanged on funke:
tests/spark/test_pyflink_programs.py). Flink stamps them with the window's last millisecond, so each line
prints -1: the timestamp less the window's end. Real PyFlink prints nothing for so short an input: its
streaming mode drops the windows still open when a bounded input ends, where funke's bounded run fires them."""

from pyflink.common import Time, Types
from pyflink.datastream import ProcessFunction, ProcessWindowFunction, StreamExecutionEnvironment
from pyflink.datastream.window import TumblingProcessingTimeWindows


class Ends(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield key, context.window().end, len(list(elements))


class Stamp(ProcessFunction):
    def process_element(self, value, ctx):
        yield value[0], value[2], ctx.timestamp() - value[1]


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
values = env.from_collection([("a", 1), ("b", 2), ("a", 3)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
windows = values.key_by(lambda v: v[0], key_type=Types.STRING()).window(TumblingProcessingTimeWindows.of(Time.hours(1)))
windows.process(Ends(), Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])).process(Stamp()).print()
env.execute("processing time")
