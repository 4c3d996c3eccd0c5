"""What goes wrong with savepoints (``funke.savepoints`` exports them)."""

from __future__ import annotations

from funke.errors import FunkeError


class SavepointError(FunkeError, RuntimeError):
    """A savepoint cannot be taken, read or restored; the message says why and what to do."""


class CheckpointChangedError(SavepointError):
    """A checkpoint file vanished while it was copied: Spark's cleanup removed it as the job went on committing."""
