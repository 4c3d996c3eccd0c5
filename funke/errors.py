"""One root exception; each subclass is also the builtin a Python user would catch."""

from __future__ import annotations


class FunkeError(Exception):
    """Root of every error funke raises on purpose."""


class PlanError(FunkeError, ValueError):
    """The pipeline cannot be planned: raised while building or compiling, before Spark runs a query."""


class SchemaError(PlanError):
    """A column is missing, has the wrong type, or a function's output does not fit its schema."""


class UnsupportedError(PlanError, NotImplementedError):
    """A plan node has no rule on the path it needs."""


class EnvironmentSetupError(FunkeError, RuntimeError):
    """The machine cannot run Spark as asked (Java missing or too old, bad master URL, ...)."""


class JobFailedError(FunkeError, RuntimeError):
    """A running job stopped with an error; the cause carries the user's traceback."""


class CheckpointTimeoutError(FunkeError, RuntimeError):
    """A query's micro-batch (its checkpoint) did not commit within the checkpoint timeout, again after
    each restart from its checkpoint (``funke.runtime.watchdog``)."""


def did_you_mean(name: str, available: list[str] | tuple[str, ...], what: str = "columns") -> str:
    """``" (did you mean 'b'?); available columns: a, b, c"``: a close match when there is one, then ``what`` there is."""
    import difflib

    close = difflib.get_close_matches(name, list(available), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"{hint}; available {what}: {', '.join(available) or '(none)'}"


class SinkError(FunkeError, RuntimeError):
    """An external sink cannot be reached or does not fit the results (names the server and address)."""


class SourceError(FunkeError, RuntimeError):
    """An external source cannot be reached or its data cannot be read (names the server and address)."""


class UserFunctionError(FunkeError, RuntimeError):
    """A user's function (a process function on a Spark worker, a Python UDF of Flink SQL) raised, or
    returned a value that does not fit its declared type, while the job ran: the message's first line
    names the function and its operator or row; the lines after it are the function's frames."""
