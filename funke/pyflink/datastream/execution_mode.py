"""PyFlink's ``RuntimeExecutionMode``: ``STREAMING`` (each keyed reduce emits after every element),
``BATCH`` (bounded input; a keyed reduce emits once per key, at the end) or ``AUTOMATIC`` (BATCH
when every source is bounded)."""

import enum

__all__ = ["RuntimeExecutionMode"]


class RuntimeExecutionMode(enum.Enum):
    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2
