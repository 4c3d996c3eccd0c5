"""Flink's ``TableConfig``: the options a table environment plans its queries with."""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp

from funke.dialect.syntax import position
from funke.errors import PlanError, UnsupportedError
from funke.table.connectors import interval_text_ms


class TableConfig:
    """Flink's ``TableConfig``: options read when a query is planned (later queries see a change).

    Taken: ``table.exec.state.ttl``, how long a group aggregation, a deduplication or a regular join
    keeps a key's state after its last write (processing time; Flink's units: ``'1 h'``, ``'10 s'``;
    ``'0'``: for ever, the default); ``execution.latency-mode``, the environment's latency mode
    (``StreamEnvironment.set_latency_mode``: ``micro-batch``, ``latency-first``, ``realtime``: Spark's
    real-time trigger for a plan of Kafka, expressions, unions and lookup joins), also
    ``SET 'execution.latency-mode' = 'realtime'`` in ``execute_sql`` and scripts;
    ``pipeline.global-job-parameters`` (``'key:value,key:value'``), what a Python function's
    ``FunctionContext.get_job_parameter`` reads; ``table.local-time-zone`` as ``UTC`` (funke's session time
    zone; any other zone is refused); ``execution.runtime-mode``, the environment's runtime mode
    (``StreamEnvironment.set_runtime_mode``: ``streaming``, ``batch``), before the first INSERT, as a Flink SQL
    client script sets it. Any other option is refused: nothing is accepted and ignored. ``RESET 'key'``
    (``reset``) gives an option back its value from before any SET, ``RESET`` every option.

    >>> config = TableConfig().set("table.exec.state.ttl", "90 s")
    >>> config.get("table.exec.state.ttl"), config.state_ttl_ms
    ('90 s', 90000)
    """

    OPTIONS = ("table.exec.state.ttl", "execution.latency-mode", "pipeline.global-job-parameters", "table.local-time-zone", "execution.runtime-mode")
    #: The options that are the environment's: its setter and attribute.
    _ENVIRONMENT: ClassVar[dict[str, tuple[str, str]]] = {"execution.latency-mode": ("set_latency_mode", "latency_mode"), "execution.runtime-mode": ("set_runtime_mode", "runtime_mode")}
    #: The spellings of UTC ``table.local-time-zone`` takes (funke computes in UTC).
    UTC = ("UTC", "Etc/UTC", "GMT", "Z", "+00:00", "UTC+00:00", "GMT+00:00")

    def __init__(self, env: Any = None) -> None:
        self._options: dict[str, str] = {}
        self._env = env
        #: The environment's own values of its options before their first SET, for RESET.
        self._initial: dict[str, str] = {}

    def set(self, key: str, value: str) -> TableConfig:
        if key not in self.OPTIONS:
            raise UnsupportedError(f"Flink SQL: the option {key!r} is not supported by funke; it takes {', '.join(self.OPTIONS)}")
        if key in self._ENVIRONMENT:
            if self._env is None:
                raise PlanError(f"Flink SQL: {key} is the environment's: set it on a StreamTableEnvironment's config")
            setter, attribute = self._ENVIRONMENT[key]
            before = getattr(self._env, attribute)
            getattr(self._env, setter)(str(value))  # (refused there when it is not a mode)
            self._initial.setdefault(key, before)
        elif key == "pipeline.global-job-parameters":
            _key_values(str(value), key)
        elif key == "table.local-time-zone":
            if str(value) not in self.UTC:
                raise UnsupportedError(
                    f"Flink SQL: table.local-time-zone {value!r}: funke's session time zone is UTC (TIMESTAMP_LTZ values are "
                    "shown and cast in UTC); other zones are not supported yet"
                )
        else:
            interval_text_ms(str(value), f"option {key}")  # (refused now if it is not a duration)
        self._options[key] = str(value)
        return self

    def set_statement(self, statement: exp.Set, sql: str) -> None:
        """``SET 'key' = 'value'`` (Flink SQL's client syntax)."""
        items = statement.expressions
        pair = items[0].this if len(items) == 1 else None
        if not isinstance(pair, exp.EQ) or not all(isinstance(x, exp.Literal) for x in (pair.this, pair.expression)):
            raise PlanError(f"Flink SQL: SET takes one 'key' = 'value' (at {position(statement, sql)})")
        self.set(pair.this.this, pair.expression.this)

    def reset(self, key: str | None = None) -> TableConfig:
        """Flink SQL's ``RESET 'key'``: the option as before any SET (the environment's own mode for its options);
        ``RESET``: every option."""
        if key is not None and key not in self.OPTIONS:
            raise UnsupportedError(f"Flink SQL: the option {key!r} is not supported by funke; it takes {', '.join(self.OPTIONS)}")
        for name in [key] if key is not None else list(self._options):
            if name in self._ENVIRONMENT and name in self._options:
                getattr(self._env, self._ENVIRONMENT[name][0])(self._initial[name])
            self._options.pop(name, None)
        return self

    def reset_statement(self, statement: exp.Command, sql: str) -> None:
        """``RESET`` or ``RESET 'key'`` (Flink SQL's client syntax)."""
        text = statement.expression.name.strip() if isinstance(statement.expression, exp.Literal) else str(statement.expression or "").strip()
        if text and not (len(text) > 1 and text[0] == text[-1] == "'"):
            raise PlanError(f"Flink SQL: RESET takes nothing or one 'key' (at {position(statement, sql)})")
        self.reset(text[1:-1] if text else None)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._options.get(key, default)

    @property
    def job_parameters(self) -> dict[str, str]:
        return _key_values(self._options.get("pipeline.global-job-parameters", ""), "pipeline.global-job-parameters")

    @property
    def state_ttl_ms(self) -> int | None:
        ttl = self._options.get("table.exec.state.ttl")
        return (interval_text_ms(ttl, "option table.exec.state.ttl") or None) if ttl is not None else None


def _key_values(text: str, option: str) -> dict[str, str]:
    """``'k1:v1,k2:v2'`` (Flink's map option format) as a dict."""
    out = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition(":")
        if not sep or not key.strip():
            raise PlanError(f"option {option}: {part!r} is not key:value (write 'key:value,other:value')")
        out[key.strip()] = value.strip()
    return out
