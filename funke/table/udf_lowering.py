"""Python functions in a Flink SQL query, lowered (the methods of ``Planner`` that ``funke.table.planner``
calls for them; the functions themselves are ``funke.table.udf``'s, found by name in the table
environment's ``FunctionCatalog``).

* A scalar function call becomes a call of its Spark name (``funke.plan.functions.PythonScalar``) in the
  Spark SQL of the expression around it: Spark runs it as an Arrow UDF, the rest in the JVM.
* An aggregate function call becomes an ``exp.AnonymousAggFunc`` (an aggregate to the planner), and its
  aggregate a ``PythonAggregate`` (``funke.table.udf_runtime``) in an ``AggregateCall`` beside the built-in
  ones (``funke.table.aggregate_lowering`` lowers them: the group aggregation's ``GroupAggregate``, a window
  aggregation's ``WindowAggregates`` on funke's window operator).
* ``FROM v, LATERAL TABLE(f(x)) AS T(a, b)`` (also ``[CROSS] JOIN LATERAL TABLE(...) [ON TRUE]``, ``LEFT JOIN
  LATERAL TABLE(...) ON TRUE``) is a ``LateralTable`` node: Spark's lateral join with the function as an
  Arrow UDTF. ``CROSS JOIN UNNEST(arr) AS t(x)`` (``[WITH ORDINALITY]``, an ARRAY or a MAP, ``LEFT JOIN
  UNNEST ... ON TRUE``) is Spark's ``explode`` in the JVM.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from funke.errors import PlanError
from funke.plan.expr import Sql
from funke.plan.functions import LateralTable, PythonScalar
from funke.plan.types import Field, Schema, is_numeric, struct_fields
from funke.table.udf import FunctionContext, UserDefinedFunctionWrapper, describe_type
from funke.table.udf_runtime import PythonAggregate, TableFunctionRows


class PythonFunctionLowering:
    """Mixed into ``Planner``: what it needs of it is declared here."""

    functions: Any  # funke.table.catalog.FunctionCatalog | None
    views: Any
    sql: str
    at: Callable[[exp.Expression], str]
    refuse: Callable[..., Exception]
    _source: Callable[..., Any]
    _hide: Callable[[], str]
    typed_sql: Callable[[exp.Expression, Schema | None], Sql]

    # -- lookups ------------------------------------------------------------------------------------
    def _function(self, name: str) -> UserDefinedFunctionWrapper | None:
        return self.functions.resolve(name) if self.functions is not None else None

    def _context(self) -> FunctionContext:
        return FunctionContext(self.functions.job_parameters if self.functions is not None else {})

    def _check_arguments(self, fn: UserDefinedFunctionWrapper, call: exp.Expression, args: list[exp.Expression]) -> None:
        for a in args:
            if isinstance(a, (exp.Distinct, exp.Star)):
                raise self.refuse(call, f"{a.sql()} as an argument of the Python function {call.name.lower()}")
        if fn.arity is not None and len(args) != fn.arity:
            raise PlanError(
                f"Flink SQL: {call.sql()} at {self.at(call)} passes {len(args)} argument(s), but the Python function {call.name.lower()} "
                f"takes {fn.arity}"
            )

    def _typed_argument(
        self, fn: UserDefinedFunctionWrapper, i: int, arg: exp.Expression, schema: Schema | None, call: exp.Expression
    ) -> exp.Expression:
        """``arg``, cast to the function's declared input type where it is another (refused where no cast fits)."""
        declared = fn.input_spark_types
        if declared is None:
            return arg
        want = declared[i]
        have = self.typed_sql(arg, schema).declared
        if have == want:
            return arg
        if have is not None and not _castable(have, want):
            raise PlanError(
                f"Flink SQL: argument {i + 1} of {call.sql()} at {self.at(call)} is {describe_type(have)}, but the Python function "
                f"{call.name.lower()} takes {describe_type(want)} there (input_types): CAST it"
            )
        return exp.Cast(this=arg, to=exp.DataType.build(want, dialect="spark"))

    def _argument_columns(
        self, fn: UserDefinedFunctionWrapper, call: exp.Expression, args: list[exp.Expression], stream: Any
    ) -> tuple[list[str], Any]:
        """The columns holding a Python function's arguments: an input column itself, anything else computed
        into a hidden column (in the JVM) first; and the stream with those."""
        columns = []
        for i, a in enumerate(args):
            typed = self._typed_argument(fn, i, a, stream.schema, call)
            if isinstance(typed, exp.Column) and not typed.table:
                stream.schema.field(typed.name, node=f"{call.sql()} at {self.at(call)}")
                columns.append(typed.name)
            else:
                hidden = self._hide()
                stream = stream.with_column(hidden, self.typed_sql(typed, stream.schema))
                columns.append(hidden)
        return columns, stream

    # -- scalar functions --------------------------------------------------------------------------
    def python_call(
        self, call: exp.Expression, schema: Schema | None, meaning: Callable[[exp.Expression], exp.Expression]
    ) -> exp.Expression | None:
        """A call of a Python scalar function as the call of its Spark name (arguments given Flink's
        meaning by ``meaning``); None when ``call`` is no such call."""
        if not isinstance(call, exp.Anonymous):
            return None
        fn = self._function(call.name)
        if fn is None:  # (a built-in: unknown names are refused before, funke.dialect.functions.check_calls)
            return None
        if fn.kind != "scalar":
            where = {"table": "in LATERAL TABLE(...) (or join_lateral)", "aggregate": "as an aggregate (GROUP BY or a window aggregation)",
                     "table_aggregate": "in the Table API's flat_aggregate (Flink SQL has no table aggregate functions)"}[fn.kind]  # fmt: skip
            raise PlanError(
                f"Flink SQL: {call.sql()} at {self.at(call)}: {call.name.lower()} is a {fn.kind.replace('_', ' ')} function; use it {where}"
            )
        args = list(call.expressions)
        self._check_arguments(fn, call, args)
        if not args and fn.func_type != "general":
            raise PlanError(
                f"Flink SQL: {call.sql()} at {self.at(call)}: a {fn.func_type} function takes at least one argument (one per column it reads)"
            )
        spark_args = [meaning(self._typed_argument(fn, i, a, schema, call)) for i, a in enumerate(args)] or [
            exp.Literal.number(0)
        ]
        owner = fn.function if hasattr(fn.function, "eval") else None
        spec = PythonScalar.of(
            call.name.lower(), getattr(fn.function, "eval", fn.function), kind=fn.func_type, result_type=fn.result_spark_type,
            arity=len(args), deterministic=fn.deterministic, owner=owner, context=self._context(), dummy_argument=not args,
            declared=str(fn.result_type),
        )  # fmt: skip
        return exp.Anonymous(this=spec.spark_name, expressions=spark_args)

    def python_type(self, e: exp.Expression) -> str | None:
        """The result type of a Python scalar function call (None for anything else)."""
        if isinstance(e, exp.Anonymous):
            fn = self._function(e.name)
            if fn is not None and fn.kind == "scalar":
                return fn.result_spark_type
        return None

    # -- aggregate functions ----------------------------------------------------------------------
    def mark_python_aggregates(self, query: exp.Expression) -> None:
        """Each call of a Python aggregate function in ``query`` as an aggregate call (in place)."""
        if self.functions is None:
            return
        for call in list(query.find_all(exp.Anonymous)):
            fn = self._function(call.name)
            if fn is not None and fn.kind == "aggregate":
                marked = exp.AnonymousAggFunc(this=call.name, expressions=[a.copy() for a in call.expressions])
                marked.meta.update(call.meta)
                call.replace(marked)

    def _aggregate_function(self, node: exp.Expression) -> tuple[str, Any]:
        """A Python aggregate function's call: its name and a ``PythonAggregate`` (``AggregateLowering``'s
        hook; built-in aggregates go on to it)."""
        if not isinstance(node, exp.AnonymousAggFunc):
            return super()._aggregate_function(node)  # type: ignore[misc]
        fn = self._function(node.name)
        if fn is None or fn.kind != "aggregate":
            raise self.refuse(
                node, f"the aggregate {node.sql()}", "COUNT, SUM, MIN, MAX, AVG, the variances and Python aggregate functions (udaf) run"
            )
        return node.name.lower(), PythonAggregate(fn, self._context(), name=node.name.lower())

    def _aggregate_arguments(self, node: exp.Expression, schema: Schema | None) -> tuple[list[exp.Expression], bool]:
        """A Python aggregate function's arguments, each cast to its declared input type (``AggregateLowering``'s hook)."""
        if not isinstance(node, exp.AnonymousAggFunc):
            return super()._aggregate_arguments(node, schema)  # type: ignore[misc]
        fn = self._function(node.name)
        args = list(node.expressions)
        self._check_arguments(fn, node, args)
        return [self._typed_argument(fn, i, a, schema, node) for i, a in enumerate(args)], False

    # -- LATERAL TABLE and UNNEST -------------------------------------------------------------------
    def lower_lateral(self, query: exp.Select) -> exp.Select | None:
        """A SELECT whose joins are lateral tables or UNNESTs, as the same SELECT over a hidden view of its
        FROM relation with them applied; None when it has none."""
        joins = query.args.get("joins") or []
        if not any(isinstance(j.this, (exp.Lateral, exp.Unnest)) for j in joins):
            return None
        for j in joins:
            if not isinstance(j.this, (exp.Lateral, exp.Unnest)):
                raise self.refuse(j, "a join together with a LATERAL TABLE or UNNEST in one SELECT", "join in a subquery first")
        source = query.args["from_"].this
        stream, tvf = self._source(source)
        if tvf is not None:
            raise self.refuse(joins[0], "LATERAL TABLE or UNNEST over a window TVF", "apply it in a subquery of the TVF's view")
        named = {source.alias_or_name} | {j.this.args["alias"].name for j in joins if j.this.args.get("alias") is not None}
        for column in query.find_all(exp.Column):  # (t.x and T.word: the hidden view's x and word)
            if column.table in named and column.find_ancestor(exp.Select) is query:
                column.set("table", None)
        for j in joins:
            stream = self._lateral_join(stream, j, query)
        name = self._hide()
        self.views = {**self.views, name: lambda: stream}
        outer = query.copy()
        outer.set("joins", None)
        outer.set("from_", exp.From(this=exp.Table(this=exp.to_identifier(name))))
        return outer

    def _lateral_join(self, stream: Any, join: exp.Join, query: exp.Select) -> Any:
        outer = join.side == "LEFT"
        if join.side not in (None, "", "LEFT") or join.args.get("using"):
            raise self.refuse(
                join,
                f"{join.side or ''} JOIN {'USING' if join.args.get('using') else ''} with a LATERAL TABLE or UNNEST",
                "LEFT JOIN ... ON TRUE or an inner one",
            )
        on = join.args.get("on")
        if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
            if outer:
                raise self.refuse(
                    on,
                    f"LEFT JOIN LATERAL ... ON {on.sql()}",
                    "Flink takes only ON TRUE for a left lateral join: filter in WHERE",
                )
            where = query.args.get("where")
            query.set("where", exp.Where(this=exp.and_(where.this, on) if where is not None else on))
        if isinstance(join.this, exp.Unnest):
            return self._unnest(stream, join.this, outer)
        call = join.this.this
        inner = (
            call.expressions[0]
            if isinstance(call, exp.Anonymous) and call.name.upper() == "TABLE" and len(call.expressions) == 1
            else None
        )
        if not isinstance(inner, exp.Anonymous):
            raise self.refuse(join.this, f"{join.this.sql()}", "write LATERAL TABLE(function(arguments))")
        return self._table_function(stream, inner, join.this.args.get("alias"), outer)

    def _table_function(self, stream: Any, call: exp.Anonymous, alias: exp.TableAlias | None, outer: bool) -> Any:
        fn = self._function(call.name)
        if fn is None:
            hint = self.functions.hint(call.name) if self.functions is not None else ""
            raise PlanError(
                f"Flink SQL: unknown table function {call.name} at {self.at(call)}{hint} (register a udtf with create_temporary_function)"
            )
        if fn.kind != "table":
            raise PlanError(
                f"Flink SQL: LATERAL TABLE({call.sql()}) at {self.at(call)}: {call.name.lower()} is a {fn.kind.replace('_', ' ')} function, not a table function (udtf)"
            )
        args = list(call.expressions)
        self._check_arguments(fn, call, args)
        columns, stream = self._argument_columns(fn, call, args, stream)
        names = [c.name for c in alias.columns] if alias is not None and alias.columns else list(fn.result_names)
        if len(names) != len(fn.result_spark_types):
            raise PlanError(
                f"Flink SQL: LATERAL TABLE({call.sql()}) at {self.at(call)} names {len(names)} column(s) ({', '.join(names)}), but {call.name.lower()} "
                f"gives {len(fn.result_spark_types)}"
            )
        result = Schema(tuple(Field(name, t) for name, t in zip(names, fn.result_spark_types, strict=True)))
        rows = TableFunctionRows(fn, result, outer, self._context(), name=call.name.lower())
        node = LateralTable(
            (stream.node,),
            function=rows,
            function_name=call.name.lower(),
            args=tuple(columns),
            result=result,
            outer=outer,
            deterministic=fn.deterministic,
        )
        return stream._then(node)

    def _unnest(self, stream: Any, node: exp.Unnest, outer: bool) -> Any:
        if len(node.expressions) != 1:
            raise self.refuse(node, "UNNEST of several arrays", "UNNEST each in its own CROSS JOIN")
        arg = node.expressions[0]
        typed = self.typed_sql(arg, stream.schema)
        t = typed.declared
        if t is None:
            raise PlanError(
                f"Flink SQL: funke cannot tell the type of {arg.sql()} in UNNEST at {self.at(node)}: CAST it (CAST(... AS ARRAY<STRING>))"
            )
        if t.startswith("array<"):
            element, items = t[6:-1], typed.text
        elif t.startswith("map<"):
            k, v = _map_types(t)
            element, items = f"struct<key:{k},value:{v}>", f"map_entries({typed.text})"
        else:
            raise PlanError(
                f"Flink SQL: UNNEST({arg.sql()}) at {self.at(node)} is of {describe_type(t)}: UNNEST takes an ARRAY or a MAP"
            )
        fields = struct_fields(element)
        types = list(fields.values()) or [element]
        alias = node.args.get("alias")
        names = [c.name for c in alias.columns] if alias is not None and alias.columns else list(fields)
        offset = node.args.get("offset")
        ordinality = offset.name if isinstance(offset, exp.Identifier) else ("ordinality" if offset else None)
        if len(names) != len(types):
            raise PlanError(
                f"Flink SQL: UNNEST({arg.sql()}) at {self.at(node)} gives {len(types)} column(s) of {describe_type(element)}; "
                f"name {'them' if len(types) > 1 else 'it'}: UNNEST(...) AS t({', '.join(f'c{i}' for i in range(len(types)))})"
            )
        for c in (*names, *([ordinality] if ordinality else [])):
            if c in stream.columns:
                raise PlanError(
                    f"Flink SQL: UNNEST at {self.at(node)} names a column {c!r} its input has already: name it otherwise (AS t(...))"
                )
        hidden, explode = self._hide(), "explode_outer" if outer else "explode"
        kept = [f"`{c}`" for c in stream.columns]
        if ordinality:
            items = f"transform({items}, (_fk_e, _fk_i) -> named_struct('e', _fk_e, 'o', _fk_i + 1))"
            element_at = f"`{hidden}`.e"
            declared = f"struct<e:{element},o:int>"
        else:
            element_at, declared = f"`{hidden}`", element
        exploded = stream.select(*kept, Sql(f"{explode}({items}) AS `{hidden}`", declared=declared))
        picked = [
            Sql(f"{element_at}.`{f}` AS `{n}`", declared=ty) for f, n, ty in zip(fields, names, types, strict=True)
        ] if fields else [Sql(f"{element_at} AS `{names[0]}`", declared=element)]  # fmt: skip
        if ordinality:
            picked.append(Sql(f"`{hidden}`.o AS `{ordinality}`", declared="int"))
        return exploded.select(*kept, *picked)


def _map_types(t: str) -> tuple[str, str]:
    from funke.plan.types import split_top_level

    k, v = split_top_level(t[4:-1])
    return k.strip(), v.strip()


def _castable(have: str, want: str) -> bool:
    """Whether Flink casts an argument of type ``have`` to a function's declared ``want`` implicitly."""
    if is_numeric(have) and is_numeric(want):
        return True
    return have.split("<")[0].split("(")[0] == want.split("<")[0].split("(")[0]
