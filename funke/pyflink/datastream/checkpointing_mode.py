"""PyFlink's ``CheckpointingMode``. funke's checkpoints are Spark's (one per micro-batch, exactly once into
funke's exactly-once sinks); ``AT_LEAST_ONCE`` asks for less than that, and gets exactly once."""

import enum

__all__ = ["CheckpointingMode"]


class CheckpointingMode(enum.Enum):
    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
