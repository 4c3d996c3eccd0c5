"""The user-facing builders: StreamEnvironment and the stream types."""

from funke.api.environment import StreamEnvironment
from funke.api.streams import DataStream, KeyedStream, WindowedStream

__all__ = ["DataStream", "KeyedStream", "StreamEnvironment", "WindowedStream"]
