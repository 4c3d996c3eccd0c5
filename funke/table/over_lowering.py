"""The lowering of Flink SQL's OVER aggregations (``funke.table.over``): ``OverLowering``, the methods
of ``funke.table.planner.Planner`` that lower them.

``SELECT ..., agg(x) OVER (PARTITION BY keys ORDER BY ts [frame]) ... FROM v [WHERE ...]``: in streaming mode
every OVER of the query must have the same window, as in Flink (in batch mode each window is an operator); the frame ``ROWS`` or ``RANGE BETWEEN ...
PRECEDING AND CURRENT ROW`` (without a frame: ``RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW``, SQL's
default). The view must be insert-only. The aggregates are COUNT, SUM, MIN, MAX, AVG, the variances, FIRST_VALUE,
LAST_VALUE, LISTAGG, ARRAY_AGG, PERCENTILE (an integer SUM, AVG or variance keeps its type, as in a GROUP BY), and
``LAG(x [, offset [, default]])`` over the default frame.

* **Streaming mode** (``OverAggregate``): ``ORDER BY`` the view's event-time attribute or its ``PROCTIME()`` one,
  ascending; LAG is Flink's streaming one (the rows of one time share the value the last of them sees). LEAD,
  NTILE, CUME_DIST and PERCENT_RANK are refused, as Flink refuses them ("... Function is not supported in stream
  mode"), and ROW_NUMBER, RANK and DENSE_RANK run in a Top-N only.
* **Batch mode** (``OverAtEnd``): each partition whole at the end of the input, ``ORDER BY`` any columns (or none),
  ascending or descending, ties in arrival order, peers (rows equal in every ``ORDER BY`` column) as Flink's;
  ``RANGE n PRECEDING`` over one numeric (or, with an INTERVAL, time) column. LAG reads the rows before each row;
  also ``LEAD(x [, offset [, default]])``, ``NTILE(n)`` (a BIGINT), ``CUME_DIST()`` and ``PERCENT_RANK()`` (DOUBLEs),
  and ``ROW_NUMBER()``, ``RANK()``, ``DENSE_RANK()`` (BIGINTs) outside a Top-N (a query whose outer WHERE reads
  the rank is a Top-N, ``funke.table.sort``); the ranking functions take no frame and need an ``ORDER BY``
  (NTILE neither), as Flink's validator says.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from funke.dialect.syntax import JsonArrayAgg
from funke.errors import PlanError
from funke.plan.expr import Sql
from funke.plan.types import Field, Schema, is_numeric
from funke.table.aggregate import AggregateCall
from funke.table.aggregate_lowering import NULL_TREATMENTS, argument_not_null, exact_decimal_averages
from funke.table.lowering import select_item
from funke.table.over import WINDOW_FUNCTIONS, Frame, OverAggregate, OverAtEnd
from funke.table.rank import Order
from funke.table.sql_types import INTEGRAL, type_of


class OverLowering:
    """The OVER aggregation's lowering (a mixin of ``Planner``: it uses the planner's ``refuse``,
    ``_hide``, ``_aggregate_call``, ``_result_type``, ``_typed``, ``_insert_only``, ``_interval_ms``,
    ``typed_sql`` and ``at``)."""

    def _over_aggregate(self: Any, query: exp.Select, stream: Any, source: exp.Expression) -> Any:
        """The query's rows, each with its OVER aggregates (an insert-only result), then its SELECT list."""
        for arg in ("group", "having"):
            if query.args.get(arg):
                raise self.refuse(query.args[arg], "an OVER aggregation in a query with GROUP BY", "aggregate in a subquery of its FROM")
        query = exact_decimal_averages(query, stream.schema, self.refuse, over=True)
        overs = list(query.find_all(exp.Window))
        windows: dict[str, list[exp.Window]] = {}  # (the OVERs by window; Flink's batch mode takes several)
        for w in overs:
            windows.setdefault(_shape(w), []).append(w)
        if len(windows) > 1 and not self.batch:
            shape, other = next(iter(windows)), list(windows.values())[1][0]
            raise self.refuse(other, "OVER windows that differ in one SELECT", f"Flink takes one window per SELECT in streaming mode: OVER ({shape})")
        for w in overs:
            if isinstance(w.this, tuple(_BATCH_ONLY)) and not self.batch:
                name = _BATCH_ONLY[type(w.this)]
                raise self.refuse(w, f"{w.this.sql()} OVER (...)", f"Flink runs no {name} in streaming mode (\"{name} Function is not supported in stream mode\"): run it in batch mode")
            over_null_treatment(w, self.refuse)
            if self._ranking(w):
                raise self.refuse(w, f"{w.this.sql()} OVER (...) outside a Top-N", "ROW_NUMBER() runs in a Top-N: WHERE rownum <= N outside its subquery")
        self._insert_only(stream, source, "an OVER aggregation")
        schema = stream.schema
        columns: dict[int, exp.Expression] = {}
        out = stream
        for same in windows.values():  # (one operator per window, each adding its columns)
            out = self._over_window(same, out, columns)

        def swap(n: exp.Expression) -> exp.Expression:
            return columns[id(n)].copy() if id(n) in columns else n

        selected = []
        for i, e in enumerate(query.expressions):
            if isinstance(e, exp.Star):
                selected += [exp.column(f.name, quoted=True) for f in schema.fields]
                continue
            body = (e.this if isinstance(e, exp.Alias) else e).transform(swap, copy=False)  # (in place: ``columns`` knows its nodes)
            selected.append(select_item(e, i, body))
        return out.select(*(self.typed_sql(x, out.schema) for x in selected))

    def _over_window(self: Any, overs: list[exp.Window], stream: Any, columns: dict[int, exp.Expression]) -> Any:
        """The stream with the columns of the OVERs of one window (each's column in ``columns``, by its node)."""
        first = overs[0]
        attributes = [t for t in (stream.node.event_time, stream.node.proc_time) if t is not None]
        order = first.args.get("order")
        items = order.expressions if order is not None else []
        time = items[0].this.name if len(items) == 1 and isinstance(items[0].this, exp.Column) else None
        orders = self._over_order(items, stream) if self.batch else []
        if not self.batch and (time not in attributes or items[0].args.get("desc")):
            raise PlanError(
                f"Flink SQL: the OVER window at {self.at(first)} must be ORDER BY a time attribute of the view, ascending "
                f"({' or '.join(attributes) or 'the view has none: create it from a stream with watermarks, or add PROCTIME()'})"
            )
        processing = time != stream.node.event_time
        frame = self._frame(first, stream, orders)
        keys = []
        for c in first.args.get("partition_by") or []:
            if not isinstance(c, exp.Column) or c.table:
                raise self.refuse(c, f"PARTITION BY {c.sql()} in an OVER window", "partition by columns")
            stream.schema.field(c.name, node=f"PARTITION BY at {self.at(c)}")
            keys.append(c.name)
        calls: list[AggregateCall] = []
        for w in overs:
            function = w.this.this if isinstance(w.this, exp.Filter) else w.this
            if isinstance(function, (JsonArrayAgg, exp.JSONObjectAgg)):
                name = "JSON_ARRAYAGG" if isinstance(function, JsonArrayAgg) else "JSON_OBJECTAGG"
                raise self.refuse(w, f"{name}(...) OVER (...)", f"Flink's parser takes no OVER after {name}: it runs in GROUP BY and window aggregations")
            if function.args.get("distinct") or isinstance(function.this, exp.Distinct):
                raise self.refuse(w, "DISTINCT in an OVER aggregate")
            if isinstance(function, (exp.Lag, exp.Lead)):
                call, stream = self._lag_call(w, stream)
            elif isinstance(function, tuple(_WINDOW_FUNCTIONS)):
                call, stream = self._window_call(w, stream)
            else:
                call, stream = self._aggregate_call(w.this, stream)
            calls.append(call)
            columns[id(w)] = self._typed(exp.column(call.alias, quoted=True), call.name, w.this, stream.schema)
        schema = stream.schema
        if not keys:
            keys = [self._hide()]
            stream = stream.with_column(keys[0], Sql("0", declared="int"))
        fields = [*schema.fields, *(Field(c.alias, self._over_type(c, schema)) for c in calls)]
        if self.batch:
            function: OverAggregate = OverAtEnd(orders, frame, calls)
        else:
            function = OverAggregate(time, frame, calls, processing=processing)
        return stream.key_by(keys, nulls=True).process(function, output_schema=Schema(tuple(fields)), name="OverAggregate")

    def _lag_call(self: Any, window: exp.Window, stream: Any) -> tuple[AggregateCall, Any]:
        """``LAG(x [, offset [, default]]) OVER w`` as a call of ``funke.table.builtin_aggregates.Lag`` over x, the
        offset (a positive integer literal) and the default (NULL, or a value of x's type), each a column; LEAD
        (batch mode) likewise, a call of ``funke.table.over.window_value`` (its offset any integer, as Flink's)."""
        lag = window.this
        name = "LEAD" if isinstance(lag, exp.Lead) else "LAG"
        if window.args.get("spec") is not None:
            raise self.refuse(window.args["spec"], f"a frame for {lag.sql()}", f"Flink takes {name} over the default frame: leave out ROWS/RANGE")
        offset, default = lag.args.get("offset") or exp.Literal.number(1), lag.args.get("default") or exp.Null()
        number = offset.this if name == "LEAD" and isinstance(offset, exp.Neg) else offset  # (LEAD(x, -1): LAG(x, 1))
        if not (isinstance(number, exp.Literal) and not number.is_string and number.name.isdigit() and (name == "LEAD" or int(number.name) >= 1)):
            raise self.refuse(offset, f"{name}'s offset {offset.sql()}", "an integer literal" if name == "LEAD" else "an integer of at least 1")
        value_type, default_type = type_of(lag.this, stream.schema), type_of(default, stream.schema)
        widened = value_type in INTEGRAL and default_type in INTEGRAL  # (LAG(big, 1, -1): the default a BIGINT)
        if not isinstance(default, exp.Null) and (value_type is None or default_type != value_type) and not widened:
            what = default_type.upper() if default_type else "a type funke cannot tell"
            raise self.refuse(default, f"{name}'s default {default.sql()} of {what} for a value of {(value_type or 'a type funke cannot tell').upper()}", "CAST it to the value's type")
        alias = self._hide()
        args = []
        if isinstance(default, exp.Null) or widened:
            default = exp.Cast(this=default, to=exp.DataType.build(value_type or "string", dialect="spark"))
        for part, declared in ((lag.this, value_type), (offset, "int"), (default, value_type)):
            column = self._hide()
            stream = stream.with_column(column, Sql(self.spark_sql(part, stream.schema), declared=declared))
            args.append(column)
        return AggregateCall(alias, name.lower(), tuple(args)), stream

    def _window_call(self: Any, window: exp.Window, stream: Any) -> tuple[AggregateCall, Any]:
        """A batch-mode window function of the whole partition (``funke.table.over.WINDOW_FUNCTIONS``) as a call:
        NTILE's number of buckets (a positive integer literal) a column; refused as Flink refuses them (a frame
        or no ORDER BY; NTILE takes both)."""
        function = window.this
        name = _WINDOW_FUNCTIONS[type(function)]
        if name != "ntile" and window.args.get("spec") is not None:
            raise self.refuse(window.args["spec"], f"a frame for {function.sql()}", "Flink takes no ROWS/RANGE with it (\"ROW/RANGE not allowed\"): leave it out")
        if name != "ntile" and window.args.get("order") is None:
            raise self.refuse(window, f"{function.sql()} OVER (...) without ORDER BY", "Flink's ranking functions require an ORDER BY")
        args = []
        if name == "ntile":
            n = function.this
            if not (isinstance(n, exp.Literal) and n.is_int and int(n.name) >= 1):
                raise self.refuse(n, f"NTILE's argument {n.sql()}", "a positive integer literal, as Flink takes")
            args.append(self._hide())
            stream = stream.with_column(args[0], Sql(n.name, declared="int"))
        return AggregateCall(self._hide(), name, tuple(args)), stream

    def _over_type(self: Any, call: AggregateCall, schema: Schema) -> str | None:
        """The type of an OVER call's column: LEAD's its value's; NTILE and the ranks a BIGINT, CUME_DIST and
        PERCENT_RANK a DOUBLE, as Flink's; an aggregate's as in a GROUP BY."""
        if call.name == "lead":
            return schema.field(call.args[0], node="LEAD").dtype
        return WINDOW_FUNCTIONS[call.name] if call.name in WINDOW_FUNCTIONS else self._result_type(call, schema)

    def _over_order(self: Any, items: list[exp.Ordered], stream: Any) -> list[Order]:
        """A batch-mode OVER window's ORDER BY: columns, each ascending or descending, NULLs as Flink puts them."""
        orders = []
        for o in items:
            if not isinstance(o.this, exp.Column) or o.this.table:
                raise self.refuse(o, f"ORDER BY {o.this.sql()} in an OVER window", "order by columns: name the expression in a subquery")
            stream.schema.field(o.this.name, node=f"ORDER BY at {self.at(o)}")
            orders.append(Order(o.this.name, bool(o.args.get("desc")), bool(o.args.get("nulls_first"))))
        return orders

    def _ranking(self: Any, window: exp.Window) -> bool:
        """Whether an OVER window's function ranks rows or reads other rows (ROW_NUMBER, RANK, LAG, ...: a
        Top-N's, or refused), not an aggregate over the frame. NTILE, CUME_DIST and PERCENT_RANK are not (an OVER
        aggregation runs them in batch mode, refuses them in a stream) but in a stream's Top-N, nor in batch mode
        ROW_NUMBER, RANK and DENSE_RANK but in a Top-N's query (one whose outer WHERE reads them)."""
        function = window.this
        while isinstance(function, (exp.Filter, exp.IgnoreNulls, exp.RespectNulls)):  # (``over_null_treatment`` reads these)
            function = function.this
        if isinstance(function, (exp.Ntile, exp.CumeDist, exp.PercentRank)):
            return not self.batch and _top_n_rank(window)  # (in a stream's Top-N: the Top-N refuses it)
        if self.batch and isinstance(function, (exp.RowNumber, exp.Rank, exp.DenseRank)) and not _top_n_rank(window):
            return False
        return isinstance(function, _RANKING) or not self._is_aggregate_call(function)

    def _frame(self: Any, window: exp.Window, stream: Any = None, orders: list[Order] | None = None) -> Frame:
        spec = window.args.get("spec")
        if spec is None:
            return Frame("RANGE")
        kind, start, end = spec.args.get("kind"), spec.args.get("start"), spec.args.get("end")
        if str(end).upper() != "CURRENT ROW" or spec.args.get("end_side"):
            raise self.refuse(spec, f"the frame {spec.sql()}", "Flink's OVER frames end at CURRENT ROW")
        if str(start).upper() == "UNBOUNDED":
            return Frame(str(kind).upper())
        if str(spec.args.get("start_side") or "").upper() != "PRECEDING":
            raise self.refuse(spec, f"the frame {spec.sql()}", "write ... PRECEDING AND CURRENT ROW")
        if str(kind).upper() == "ROWS":
            if not (isinstance(start, exp.Literal) and not start.is_string and int(start.this) >= 0):
                raise self.refuse(start, f"ROWS BETWEEN {start.sql()} PRECEDING", "ROWS takes a number of rows")
            return Frame("ROWS", int(start.this))
        if not self.batch:
            return Frame("RANGE", self._interval_ms(start))
        if len(orders or []) != 1:
            raise self.refuse(spec, f"the frame {spec.sql()}", "a RANGE with an offset takes one ORDER BY column")
        dtype = stream.schema.field(orders[0].column, node="ORDER BY").dtype or ""  # type: ignore[index]
        if isinstance(start, exp.Literal) and start.is_int and is_numeric(dtype):
            return Frame("RANGE", int(start.name))
        if not is_numeric(dtype):
            return Frame("RANGE", self._interval_ms(start))
        raise self.refuse(start, f"RANGE BETWEEN {start.sql()} PRECEDING over ORDER BY {orders[0].column} of {dtype.upper()}", "an integer literal")  # type: ignore[index]


#: The mark on the FILTER ``over_null_treatment`` makes of ``ARRAY_AGG(x IGNORE NULLS)`` (a user's FILTER is refused).
_IGNORES_NULLS = "funke_ignores_nulls"


def over_null_treatment(window: exp.Window, refuse: Any) -> None:
    """``ARRAY_AGG(x IGNORE NULLS) OVER w`` as ``ARRAY_AGG(x)`` over the rows whose x is not NULL (a FILTER
    only funke makes), ``RESPECT NULLS`` as the default, in place; a FILTER of the user's is refused, as Flink
    refuses it ("OVER must be applied to aggregate function"), and IGNORE/RESPECT NULLS of another call."""
    function = window.this
    if isinstance(function, exp.Filter) and not function.meta.get(_IGNORES_NULLS):
        raise refuse(function, f"{function.sql()} OVER (...)", "Flink takes no FILTER in an OVER aggregation: aggregate CASE WHEN ... THEN x END")
    if not isinstance(function, (exp.IgnoreNulls, exp.RespectNulls)):
        return
    if not isinstance(function.this, exp.ArrayAgg):
        raise refuse(function, function.sql(), NULL_TREATMENTS)
    call = function.this
    if isinstance(function, exp.IgnoreNulls):
        call = exp.Filter(this=call, expression=exp.Where(this=argument_not_null(call)))
        call.meta[_IGNORES_NULLS] = True
    window.set("this", call)


#: The window functions only Flink's batch mode runs, by name.
_BATCH_ONLY = {exp.Lead: "LEAD", exp.Ntile: "NTILE", exp.CumeDist: "CUME_DIST", exp.PercentRank: "PERCENT_RANK"}

#: The window functions of the whole partition a batch-mode OVER aggregation runs (``funke.table.over.OverAtEnd``).
_WINDOW_FUNCTIONS = {
    exp.Ntile: "ntile", exp.CumeDist: "cume_dist", exp.PercentRank: "percent_rank", exp.Rank: "rank", exp.DenseRank: "dense_rank",
    exp.RowNumber: "row_number",
}  # fmt: skip


def _top_n_rank(window: exp.Window) -> bool:
    """Whether a ranking window is a Top-N's: named in the SELECT list of a FROM subquery whose outer query's
    WHERE reads that name."""
    item, select = window.parent, window.find_ancestor(exp.Select)
    subquery = select.parent if select is not None else None
    if not isinstance(item, exp.Alias) or not isinstance(subquery, exp.Subquery) or not isinstance(subquery.parent, exp.From):
        return False
    outer = subquery.parent.parent
    where = outer.args.get("where") if isinstance(outer, exp.Select) else None
    return where is not None and any(c.name == item.alias for c in where.find_all(exp.Column))


#: The window functions that are no aggregate of the frame (sqlglot counts most of them as aggregates).
_RANKING = (
    exp.RowNumber, exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile, exp.NthValue,
)  # fmt: skip


def named_windows(query: exp.Select, at: Any) -> exp.Select:
    """``... OVER w ... WINDOW w AS (PARTITION BY ... ORDER BY ... [frame])``: the query with each ``OVER w``
    (or ``OVER (w)``) written out as its window, as Flink reads the WINDOW clause. A name no WINDOW defines, a
    window defined twice, and a reference that adds to its window (``OVER (w ROWS ...)``) are refused."""
    defined: dict[str, exp.Window] = {}
    for w in query.args.get("windows") or []:
        name = w.this.name.lower()
        if name in defined:
            raise PlanError(f"Flink SQL: the window {w.this.name} at {at(w)} is defined twice in one WINDOW clause")
        defined[name] = w
    if not defined:
        return query
    out = query.copy()
    out.set("windows", None)
    for use in list(out.find_all(exp.Window)):
        reference = use.args.get("alias")
        if reference is None or use.find_ancestor(exp.Select) is not out:
            continue
        definition = defined.get(reference.name.lower())
        if definition is None:
            raise PlanError(f"Flink SQL: OVER {reference.name} at {at(use)}: no window of that name in the WINDOW clause ({', '.join(defined)})")
        if any(use.args.get(part) for part in ("partition_by", "order", "spec")):
            raise PlanError(f"Flink SQL: OVER ({reference.name} ...) at {at(use)}: write the whole window in the WINDOW clause or in the OVER")
        use.set("alias", None)
        for part in ("partition_by", "order", "spec"):
            if definition.args.get(part):
                use.set(part, definition.args[part].copy() if isinstance(definition.args[part], exp.Expression) else [p.copy() for p in definition.args[part]])
    return out


def _shape(window: exp.Window) -> str:
    """An OVER window's PARTITION BY, ORDER BY and frame, as SQL (two OVERs are the same window when equal)."""
    parts = [
        "PARTITION BY " + ", ".join(c.sql() for c in window.args.get("partition_by") or []),
        window.args["order"].sql() if window.args.get("order") is not None else "",
        window.args["spec"].sql() if window.args.get("spec") is not None else "",
    ]
    return " ".join(p for p in parts if p and p != "PARTITION BY ")
