"""What every source and sink description offers the planner (no pyspark here).

``SourceSpec`` and ``SinkSpec`` live in the plan (``funke.plan.specs``), which knows no connector."""

from __future__ import annotations

from typing import Any, ClassVar

from funke.errors import PlanError, UnsupportedError
from funke.plan.specs import SinkSpec, SourceSpec
from funke.plan.types import Schema, struct_fields

__all__ = ["TIMESTAMP_FORMATS", "BatchSink", "SinkSpec", "SourceSpec", "check_json_rules", "check_timestamp_format"]

#: Flink's ``json.timestamp-format.standard`` values: a TIMESTAMP's text ``2020-12-30 12:13:14`` or ``2020-12-30T12:13:14``.
TIMESTAMP_FORMATS = ("SQL", "ISO-8601")


def check_json_rules(what: str, fmt: str, ignore_parse_errors: bool, fail_on_missing_field: bool, declared: Schema) -> None:
    """A source's JSON (and csv) format options, checked as Flink checks them: each is the json format's (ignore_parse_errors
    the csv format's too), and not both at once
    (``fail_on_missing_field`` looks into ROW columns, not into a ROW inside an ARRAY or MAP: refused there)."""

    if ignore_parse_errors and fmt not in ("json", "csv"):
        raise PlanError(f"{what}(ignore_parse_errors=True) is for format='json' or 'csv', got format={fmt!r}")
    if fail_on_missing_field and fmt != "json":
        raise PlanError(f"{what}(fail_on_missing_field=True) is for format='json', got format={fmt!r}")
    if ignore_parse_errors and fail_on_missing_field:
        raise PlanError(f"{what}(): fail_on_missing_field and ignore_parse_errors shouldn't both be true (json.fail-on-missing-field, "
                        "json.ignore-parse-errors: Flink refuses the pair)")  # fmt: skip
    inside = [f.name for f in declared if _row_in_collection(f.dtype or "")]
    if fail_on_missing_field and inside:
        raise UnsupportedError(f"{what}(fail_on_missing_field=True) over a ROW inside an ARRAY or MAP (column {inside[0]}) is not supported by funke")


def check_timestamp_format(what: str, fmt: str, timestamp_format: str | None, instants: tuple[str, ...], declared: Schema) -> None:
    """``timestamp_format`` (Flink's ``json.timestamp-format.standard``) is the json format's and one of
    ``TIMESTAMP_FORMATS``; each of ``instants`` (the TIMESTAMP_LTZ columns) a declared TIMESTAMP column."""
    if timestamp_format is None:
        if instants:
            raise PlanError(f"{what}(instants=...) names the TIMESTAMP_LTZ columns Flink's timestamp_format reads: give timestamp_format too")
        return
    if fmt != "json":
        raise PlanError(f"{what}(timestamp_format=...) is for format='json', got format={fmt!r}")
    if timestamp_format not in TIMESTAMP_FORMATS:
        raise PlanError(f"{what}(timestamp_format=...) must be {' or '.join(map(repr, TIMESTAMP_FORMATS))} (json.timestamp-format.standard), got {timestamp_format!r}")
    for name in instants:
        if declared.get(name) is None or declared.get(name).dtype != "timestamp":
            raise PlanError(f"{what}(instants=...): {name!r} is not a TIMESTAMP column of the schema")


def _row_in_collection(dtype: str) -> bool:
    if dtype.startswith("struct<"):
        return any(_row_in_collection(t) for t in struct_fields(dtype).values())
    return dtype.startswith(("array<", "map<")) and "struct<" in dtype


class BatchSink(SinkSpec):
    """A sink that writes each micro-batch itself (``foreachBatch``), e.g. to an external store.

    ``check`` runs once when the job starts, before any Spark query: it connects and raises
    ``SinkError`` naming the server and address when it cannot. ``write_batch`` gets the
    batch's DataFrame, Spark's batch id (the same id again when Spark replays a batch after
    a restart) and the job name; an exactly-once sink writes the batch together with a
    ``(job, batch_id)`` marker and skips a batch whose marker is already there.
    """

    kind: ClassVar[str] = "batch-sink"
    #: A sink that does not skip replayed batches writes them again: declare "exactly-once"
    #: only when ``write_batch`` writes with a marker as above.
    guarantee: ClassVar[str] = "at-least-once"

    def check(self, job: str) -> None:
        """Connect once and fail early with a clear error (default: nothing to check)."""

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        raise NotImplementedError
