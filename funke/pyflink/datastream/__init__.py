"""PyFlink's DataStream API (``pyflink.datastream``) on funke: the same names, run on Spark.

Under ``python -m funke.pyflink script.py`` the script's ``pyflink.datastream`` is this module.
"""

from funke.pyflink.datastream import window  # (first: the adapters use it)
from funke.pyflink.datastream.async_data_stream import AsyncDataStream
from funke.pyflink.datastream.checkpoint_config import CheckpointConfig
from funke.pyflink.datastream.checkpointing_mode import CheckpointingMode
from funke.pyflink.datastream.connected import BroadcastConnectedStream, BroadcastStream, ConnectedStreams
from funke.pyflink.datastream.data_stream import CloseableIterator, DataStream, DataStreamSink, KeyedStream
from funke.pyflink.datastream.execution_mode import RuntimeExecutionMode
from funke.pyflink.datastream.functions import (
    AggregateFunction,
    AllWindowFunction,
    AsyncFunction,
    AsyncRetryPredicate,
    AsyncRetryStrategy,
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    Partitioner,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    SourceFunction,
    WindowFunction,
)
from funke.pyflink.datastream.output_tag import OutputTag
from funke.pyflink.datastream.stream_execution_environment import JobClient, JobExecutionResult, StreamExecutionEnvironment
from funke.pyflink.datastream.time_domain import TimeDomain
from funke.pyflink.datastream.timerservice import TimerService
from funke.pyflink.datastream.window import (
    CountWindow,
    GlobalWindow,
    MergingWindowAssigner,
    TimeWindow,
    Trigger,
    TriggerResult,
    Window,
    WindowAssigner,
)
from funke.pyflink.datastream.windowed import AllWindowedStream, WindowedStream

__all__ = [
    "AggregateFunction", "AllWindowFunction", "AllWindowedStream", "AsyncDataStream", "AsyncFunction", "AsyncRetryPredicate",
    "AsyncRetryStrategy", "BroadcastConnectedStream", "BroadcastProcessFunction", "BroadcastStream", "CheckpointConfig",
    "CheckpointingMode", "CloseableIterator", "CoFlatMapFunction", "CoMapFunction", "CoProcessFunction", "ConnectedStreams",
    "CountWindow", "DataStream", "DataStreamSink", "FilterFunction", "FlatMapFunction", "GlobalWindow", "JobClient",
    "JobExecutionResult", "KeySelector", "KeyedBroadcastProcessFunction", "KeyedCoProcessFunction", "KeyedProcessFunction",
    "KeyedStream", "MapFunction", "MergingWindowAssigner", "OutputTag", "Partitioner", "ProcessAllWindowFunction",
    "ProcessFunction", "ProcessWindowFunction", "ReduceFunction", "RuntimeContext", "RuntimeExecutionMode", "SinkFunction",
    "SourceFunction", "StreamExecutionEnvironment", "TimeDomain", "TimeWindow", "TimerService", "Trigger", "TriggerResult",
    "Window", "WindowAssigner", "WindowFunction", "WindowedStream", "window",
]  # fmt: skip
