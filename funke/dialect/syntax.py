"""Flink SQL as sqlglot reads it: sqlglot's own parser, taught Flink's windowing table-valued functions.

sqlglot (no Flink dialect of its own) parses the standard SQL around them; what it lacks is
the argument forms of ``TUMBLE``, ``HOP``, ``CUMULATE`` and ``SESSION``: ``TABLE name`` (for
``SESSION`` with ``PARTITION BY`` keys) and ``DESCRIPTOR(column)``. This dialect parses those
into ``TableArg`` and ``Descriptor`` nodes, takes Flink's quoting (backticks for names, single
quotes for strings) and its ``ROW<name type, ...>`` type (sqlglot's ``STRUCT``), and turns parse errors into funke's, with the line and column.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
from collections.abc import Collection, Iterator
from typing import Any, ClassVar

import sqlglot
from sqlglot import exp, generator, parser, tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from funke.dialect.functions import rewritten_names
from funke.errors import PlanError

#: Flink's windowing table-valued functions.
WINDOW_TVFS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")


class TableArg(exp.Expression):
    """``TABLE name [PARTITION BY col | (col, ...)]`` as a table function's argument."""

    arg_types = {"this": True, "partition": False}


class Descriptor(exp.Expression):
    """``DESCRIPTOR(col, ...)``: the time attribute column a window TVF windows by."""

    arg_types = {"expressions": True}


class WindowTvf(exp.Expression):
    """``TUMBLE(...)``, ``HOP(...)``, ``CUMULATE(...)`` or ``SESSION(...)`` with its arguments in order."""

    arg_types = {"this": True, "expressions": True}


class ListAgg(exp.Expression, exp.AggFunc):
    """``LISTAGG(s [, separator])``: Flink's string aggregate (sqlglot reads it as a plain call)."""

    arg_types = {"this": True, "separator": False}
    _sql_names = ["LISTAGG"]


class Percentile(exp.Expression, exp.AggFunc):
    """``PERCENTILE(x, percentage [, frequency])``: Flink's exact percentile (sqlglot reads it as a plain call)."""

    arg_types = {"this": True, "percentage": True, "frequency": False}
    _sql_names = ["PERCENTILE"]


class Collect(exp.Expression, exp.AggFunc):
    """``COLLECT(x)``: Flink's MULTISET aggregate (sqlglot reads it as a plain call)."""

    arg_types = {"this": True}  # noqa: RUF012
    _sql_names = ["COLLECT"]  # noqa: RUF012


def _collect(args: list[exp.Expression]) -> exp.Expression:
    if len(args) != 1:
        return exp.Anonymous(this="COLLECT", expressions=args)  # (the planner names the wrong count)
    return Collect(this=args[0])


class MetadataColumn(exp.Expression, exp.ColumnConstraintKind):
    """A column's ``METADATA [FROM 'key'] [VIRTUAL]`` in CREATE TABLE: the connector's metadata ``key`` (None: the
    column's name), ``virtual`` when it is read only (left out of what INSERT INTO writes)."""

    arg_types = {"this": False, "virtual": False}  # noqa: RUF012


class JsonArrayAgg(exp.Expression, exp.AggFunc):
    """``JSON_ARRAYAGG(v [NULL | ABSENT] ON NULL)``: ``null_handling`` the choice when written (sqlglot has no node)."""

    arg_types = {"this": True, "null_handling": False}  # noqa: RUF012
    _sql_names = ["JSON_ARRAYAGG"]  # noqa: RUF012


def _percentile(args: list[exp.Expression]) -> exp.Expression:
    if len(args) not in (2, 3):
        return exp.Anonymous(this="PERCENTILE", expressions=args)  # (the planner names the wrong count)
    return Percentile(this=args[0], percentage=args[1], frequency=args[2] if len(args) == 3 else None)


def _listagg(args: list[exp.Expression]) -> exp.Expression:
    first = args[0] if len(args) == 1 else None
    if isinstance(first, exp.Distinct) and len(first.expressions) == 2:  # (LISTAGG(DISTINCT s, ','))
        return ListAgg(this=exp.Distinct(expressions=[first.expressions[0]]), separator=first.expressions[1])
    if not args or len(args) > 2:
        return exp.Anonymous(this="LISTAGG", expressions=args)  # (the planner names the wrong count)
    return ListAgg(this=args[0], separator=args[1] if len(args) > 1 else None)


#: Other databases' functions sqlglot reads into nodes of its own, kept as written (their names in funke's
#: "unknown function" message; ``funke.dialect.functions.INSTEAD`` says Flink's).
_NOT_FLINK = ("STRING_AGG", "GROUP_CONCAT")


def _as_written(name: str) -> Any:
    """A parser's builder of a call of ``name`` kept as written: its arguments in order."""
    return lambda args: exp.Anonymous(this=name, expressions=args)


def _returning(kind: exp.Expression | None) -> str:
    """JSON_QUERY's ``RETURNING`` type as funke names it: ``STRING`` (a VARCHAR of no length, or Flink's largest),
    ``ARRAY<STRING>``, or the type as written, which the rewrite refuses."""

    def string(t: exp.Expression | None) -> bool:
        size = t.find(exp.DataTypeParam) if isinstance(t, exp.DataType) else None
        text = isinstance(t, exp.DataType) and t.this in (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR)
        return text and (size is None or size.name == "2147483647")

    if string(kind):
        return "STRING"
    if isinstance(kind, exp.DataType) and kind.this == exp.DataType.Type.ARRAY and len(kind.expressions) == 1 and string(kind.expressions[0]):
        return "ARRAY<STRING>"
    return kind.sql() if kind is not None else "?"


def is_multiset(kind: exp.Expression) -> bool:
    """Whether ``kind`` is a column's type ``MULTISET<type>`` as the Flink dialect reads it.

    >>> kind = sqlglot.parse_one("CREATE TABLE t (a MULTISET<INT>)", dialect=Flink).find(exp.ColumnDef).args["kind"]
    >>> is_multiset(kind), is_multiset(kind.expressions[0])
    (True, False)
    """
    return isinstance(kind, exp.DataType) and kind.this == exp.DataType.Type.USERDEFINED and kind.args.get("kind") == "MULTISET"


def _placed(node: exp.Expression, token: Any) -> exp.Expression:
    """``node`` placed at ``token`` (a call's name: its errors point there), as sqlglot places a node it reads."""
    node.meta.update(line=token.line, col=token.col, start=token.start, end=token.end)
    return node


class Flink(Dialect):
    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ["`"]
        QUOTES = ["'"]
        #: Flink's binary string literal, ``X'48656C6C6F'``: a BINARY (Spark's ``X'...'`` too).
        HEX_STRINGS = [("X'", "'"), ("x'", "'")]
        #: SESSION is a keyword to sqlglot (SET SESSION ...); in Flink SQL it is also a window TVF.
        #: ROW is Flink's structured type, ``ROW<name type, ...>``: sqlglot's STRUCT.
        KEYWORDS = {
            **{k: v for k, v in tokens.Tokenizer.KEYWORDS.items() if k != "SESSION"},
            "ROW": TokenType.STRUCT,
            "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE,
            "RESET": TokenType.COMMAND,  # (Flink SQL's RESET 'key': a statement of its own)
        }

    class Generator(generator.Generator):
        TRANSFORMS: ClassVar[dict] = {
            **generator.Generator.TRANSFORMS,
            MetadataColumn: lambda self, e: " ".join(
                ["METADATA", *([f"FROM {self.sql(e, 'this')}"] if e.this else []), *(["VIRTUAL"] if e.args.get("virtual") else [])]
            ),
        }

    class Parser(parser.Parser):
        #: DDL: ``WATERMARK FOR ts AS ts - INTERVAL '5' SECOND`` in CREATE TABLE (as sqlglot's RisingWave
        #: parser reads it), and computed columns ``name AS expression``.
        WRAPPED_TRANSFORM_COLUMN_CONSTRAINT = False
        CONSTRAINT_PARSERS = {
            **parser.Parser.CONSTRAINT_PARSERS,
            "WATERMARK": lambda self: self.expression(
                exp.WatermarkColumnConstraint(
                    this=self._match(TokenType.FOR) and self._parse_column(),
                    expression=self._match(TokenType.ALIAS) and self._parse_disjunction(),
                )
            ),
            "METADATA": lambda self: self.expression(
                MetadataColumn(
                    this=self._parse_string() if self._match(TokenType.FROM) else None,
                    virtual=self._match_text_seq("VIRTUAL"),
                )
            ),
        }
        SCHEMA_UNNAMED_CONSTRAINTS = {*parser.Parser.SCHEMA_UNNAMED_CONSTRAINTS, "WATERMARK"}
        TYPE_LITERAL_PARSERS: ClassVar[dict] = {
            **parser.Parser.TYPE_LITERAL_PARSERS,
            exp.DataType.Type.TIME: lambda self, this, data_type: self._parse_time_literal(this, data_type),
        }

        def _parse_time_literal(self, this: exp.Expression, data_type: exp.DataType) -> exp.Expression:
            """``TIME 'H:m:s[.fff]'`` as Flink types it: a TIME of the fraction's digits (at most 3, Flink's finest,
            the rest cut off), ``CAST('HH:mm:ss.fff' AS TIME(p))``; any other text is an error, as in Flink."""
            text = this.name if isinstance(this, exp.Literal) else ""
            parts = re.fullmatch(r"\s*(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d*))?\s*", text)
            if data_type.expressions or not parts or int(parts[1]) > 23 or int(parts[2]) > 59 or int(parts[3]) > 59:
                self.raise_error(f"Illegal TIME literal {this.sql()}: Flink's is TIME 'HH:mm:ss[.fff]'")
                return self.expression(exp.Cast(this=this, to=data_type))
            fraction = (parts[4] or "")[:3]
            value = f"{int(parts[1]):02}:{int(parts[2]):02}:{int(parts[3]):02}" + (f".{fraction}" if fraction else "")
            precision = exp.DataTypeParam(this=exp.Literal.number(len(fraction)))
            return self.expression(exp.Cast(this=exp.Literal.string(value), to=exp.DataType(this=exp.DataType.Type.TIME, expressions=[precision])))

        def _parse_types(self, check_func: bool = False, schema: bool = False, allow_identifiers: bool = True, **kwargs: Any) -> Any:
            """A column's type ``MULTISET<type>`` (which sqlglot does not read) as a user-defined type named MULTISET,
            its element type its one expression, so that CREATE TABLE can say what funke does with one (``is_multiset``)."""
            if schema and self._curr and self._curr.text.upper() == "MULTISET" and self._next and self._next.token_type == TokenType.LT:
                token = self._curr
                self._advance(2)
                element = self._parse_types(check_func=check_func, schema=schema, allow_identifiers=allow_identifiers, **kwargs)
                if element is None or not self._match(TokenType.GT):
                    self.raise_error("Expecting MULTISET<type>")
                return _placed(exp.DataType(this=exp.DataType.Type.USERDEFINED, kind="MULTISET", expressions=[element]), token)
            return super()._parse_types(check_func=check_func, schema=schema, allow_identifiers=allow_identifiers, **kwargs)

        def _parse_struct_types(self, type_required: bool = False) -> Any:
            """A ROW's field, ``name MULTISET<type>`` too (sqlglot takes a field's type to start with a type's keyword)."""
            after = self._tokens[self._index + 2] if self._index + 2 < len(self._tokens) else None
            if self._next and self._next.text.upper() == "MULTISET" and after is not None and after.token_type == TokenType.LT:
                return self._parse_column_def(self._parse_id_var())
            return super()._parse_struct_types(type_required=type_required)

        def _parse_tvf_arg(self) -> exp.Expression | None:
            if self._match(TokenType.TABLE):
                table = self._parse_table_parts()
                partition = None
                if self._match(TokenType.PARTITION_BY):  # SESSION's keys: one column, or several in parentheses
                    if self._match(TokenType.L_PAREN):
                        partition = self._parse_csv(self._parse_column)
                        self._match_r_paren()
                    else:
                        partition = [self._parse_column()]
                return self.expression(TableArg(this=table, partition=partition))
            if self._match_text_seq("DESCRIPTOR"):
                self._match_l_paren()
                columns = self._parse_csv(self._parse_column)
                self._match_r_paren()
                return self.expression(Descriptor(expressions=columns))
            return self._parse_assignment()

        def _parse_json_array(self, name: str) -> exp.Expression:
            """``JSON_ARRAY(v, ... [NULL | ABSENT] ON NULL)`` (and ``JSON_ARRAYAGG``), which sqlglot does not read:
            a call of ``name`` with the ON NULL choice, when written, as its last argument (an ``exp.Var``) and in its
            ``on_null`` meta."""
            token = self._tokens[self._index - 2]  # (the name, before its parenthesis: errors point at it)
            choice = self._parse_on_null()  # (JSON_ARRAY(NULL ON NULL): no values)
            values = [] if choice else self._parse_csv(self._parse_assignment)
            choice = choice or self._parse_on_null()
            node = self.expression(exp.Anonymous(this=name, expressions=[*values, *([exp.var(f"{choice} ON NULL")] if choice else [])]))
            if name == "JSON_ARRAYAGG" and len(values) == 1:  # (an aggregate: its own node; other counts stay a plain call)
                node = self.expression(JsonArrayAgg(this=values[0], null_handling=exp.var(f"{choice} ON NULL") if choice else None))
            node.meta["on_null"] = choice
            return _placed(node, token)

        def _parse_on_null(self) -> str | None:
            """``NULL ON NULL`` or ``ABSENT ON NULL`` next: its choice, read past; None for neither."""
            return next((c for c in ("NULL", "ABSENT") if self._match_text_seq(c, "ON", "NULL")), None)

        def _parse_flink_json_object(self) -> exp.Expression:
            """``JSON_OBJECT([KEY] k VALUE v, ... [NULL | ABSENT] ON NULL)`` (or ``k : v``): a call of JSON_OBJECT with the keys and
            values in turn, and the ON NULL choice, when written, as its last argument (an ``exp.Var``)."""
            token = self._tokens[self._index - 2]  # (the name, before its parenthesis: errors point at it)
            args: list[exp.Expression] = []
            choice = self._parse_on_null()
            while not choice and self._curr and self._curr.token_type != TokenType.R_PAREN:
                keyed = self._match_text_seq("KEY")
                args.append(self._parse_assignment())
                if not self._match_key_value(keyed):
                    self.raise_error("Expecting VALUE after a JSON_OBJECT key")
                args.append(self._parse_assignment())
                choice = self._parse_on_null()
                if not choice and not self._match(TokenType.COMMA):
                    break
            return _placed(self.expression(exp.Anonymous(this="JSON_OBJECT", expressions=[*args, *([exp.var(f"{choice} ON NULL")] if choice else [])])), token)

        def _match_key_value(self, keyed: bool) -> bool:
            """What parts a JSON key from its value, read past: ``VALUE``, or ``:`` after a key without ``KEY`` before
            it (as Flink's parser takes them)."""
            return bool(self._match_text_seq("VALUE") or (not keyed and self._match(TokenType.COLON)))

        def _parse_flink_json_objectagg(self) -> exp.Expression:
            """``JSON_OBJECTAGG([KEY] k VALUE v [NULL | ABSENT] ON NULL)`` (or ``k : v``), its key any expression (``k || '_x'``, which
            sqlglot's reading, a column or a literal, does not take): sqlglot's node of it."""
            token = self._tokens[self._index - 2]  # (the name, before its parenthesis: errors point at it)
            keyed = self._match_text_seq("KEY")
            key = self._parse_assignment()
            if not self._match_key_value(keyed):
                self.raise_error("Expecting VALUE after JSON_OBJECTAGG's key")
            pair = self.expression(exp.JSONKeyValue(this=key, expression=self._parse_assignment()))
            choice = self._parse_on_null()
            return _placed(self.expression(exp.JSONObjectAgg(expressions=[pair], null_handling=f"{choice} ON NULL" if choice else None)), token)

        def _parse_json_exists(self) -> exp.Expression:
            """``JSON_EXISTS(s, path [{TRUE | FALSE | UNKNOWN | ERROR} ON ERROR])``, which sqlglot does not read: a
            call of JSON_EXISTS with the ON ERROR choice, when written, as its last argument (an ``exp.Var``)."""
            token = self._tokens[self._index - 2]  # (the name, before its parenthesis: errors point at it)
            args = self._parse_csv(self._parse_assignment)
            choice = next((c for c in ("TRUE", "FALSE", "UNKNOWN", "ERROR") if self._match_text_seq(c, "ON", "ERROR")), None)
            if self._curr and self._curr.token_type != TokenType.R_PAREN:
                self.raise_error("Flink SQL's JSON_EXISTS takes a text, a path and {TRUE | FALSE | UNKNOWN | ERROR} ON ERROR")
            return _placed(self.expression(exp.Anonymous(this="JSON_EXISTS", expressions=[*args, *([exp.var(f"{choice} ON ERROR")] if choice else [])])), token)

        def _json_call_head(self) -> tuple[Any, list[exp.Expression], list[exp.Expression]]:
            """A JSON function call's name token (errors point at it), its arguments, and its RETURNING clause (an
            ``exp.Var``, when written)."""
            token = self._tokens[self._index - 2]  # (the name, before its parenthesis)
            args = self._parse_csv(self._parse_assignment)
            clauses: list[exp.Expression] = []
            if self._match_text_seq("RETURNING"):
                clauses.append(exp.var(f"RETURNING {_returning(self._parse_types())}"))
            return token, args, clauses

        def _parse_json_query(self) -> exp.Expression:
            """``JSON_QUERY(s, path [RETURNING type] [wrapper] [... ON EMPTY] [... ON ERROR])``, which sqlglot does
            not read: a call of JSON_QUERY with each clause written as an ``exp.Var`` after the path
            (``RETURNING ARRAY<STRING>``, ``WITH CONDITIONAL ARRAY WRAPPER``, ``EMPTY ARRAY ON EMPTY``...)."""
            token, args, clauses = self._json_call_head()
            if self._match_text_seq("WITHOUT"):
                self._match_text_seq("ARRAY")
                clauses.append(exp.var("WITHOUT ARRAY WRAPPER") if self._match_text_seq("WRAPPER") else self.raise_error("Expecting WRAPPER"))
            elif self._match_text_seq("WITH"):
                which = next((w for w in ("CONDITIONAL", "UNCONDITIONAL") if self._match_text_seq(w)), "UNCONDITIONAL")
                self._match_text_seq("ARRAY")
                clauses.append(exp.var(f"WITH {which} ARRAY WRAPPER") if self._match_text_seq("WRAPPER") else self.raise_error("Expecting WRAPPER"))
            for on in ("EMPTY", "ERROR"):
                choice = next((c for c in ("NULL", "EMPTY ARRAY", "EMPTY OBJECT", "ERROR") if self._match_text_seq(*c.split(), "ON", on)), None)
                clauses += [exp.var(f"{choice} ON {on}")] if choice else []
            if self._curr and self._curr.token_type != TokenType.R_PAREN:
                self.raise_error(
                    "Flink SQL's JSON_QUERY takes a text, a path, then RETURNING, a WRAPPER clause, ... ON EMPTY and ... ON ERROR, in that order"
                )
            return _placed(self.expression(exp.Anonymous(this="JSON_QUERY", expressions=[*args, *clauses])), token)

        def _parse_json_value(self) -> exp.Expression:
            """``JSON_VALUE(s, path [RETURNING type] [{NULL | ERROR | DEFAULT x} ON EMPTY] [... ON ERROR])``, which
            sqlglot does not read: a call of JSON_VALUE with each clause an ``exp.Var`` after the path (``RETURNING
            INT``, ``NULL ON EMPTY``, ``DEFAULT ON ERROR``), a DEFAULT's expression the argument after its clause."""
            token, args, clauses = self._json_call_head()
            seen: list[str] = []
            while self._match_texts(("NULL", "ERROR", "DEFAULT")):
                choice = self._prev.text.upper()
                value = self._parse_assignment() if choice == "DEFAULT" else None
                on = next((o for o in ("EMPTY", "ERROR") if self._match_text_seq("ON", o)), None)
                if on is None or on in seen or (on == "EMPTY" and seen) or (choice == "DEFAULT" and value is None):
                    self.raise_error("Expecting {NULL | ERROR | DEFAULT <expression>} ON EMPTY, then ... ON ERROR")
                    break
                seen.append(on)
                clauses += [exp.var(f"{choice} ON {on}"), *([value] if value is not None else [])]
            if self._curr and self._curr.token_type != TokenType.R_PAREN:
                self.raise_error("Flink SQL's JSON_VALUE takes a text, a path, then RETURNING, ... ON EMPTY and ... ON ERROR, in that order")
            return _placed(self.expression(exp.Anonymous(this="JSON_VALUE", expressions=[*args, *clauses])), token)

        def _parse_is(self, this: exp.Expression | None) -> exp.Expression | None:
            """``s IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]`` as a call ``IS JSON`` of ``s`` and the kind (an
            ``exp.Var``), which funke rewrites as any other (sqlglot's ``Is`` of a ``JSON`` is no call)."""
            node = super()._parse_is(this)
            test = node.this if isinstance(node, exp.Not) else node
            if not (isinstance(test, exp.Is) and isinstance(test.expression, exp.JSON)):
                return node
            json = test.expression
            if json.args.get("with_") is not None or json.args.get("unique"):
                self.raise_error("Flink SQL's IS JSON takes no [WITH | WITHOUT] UNIQUE KEYS")
            call = exp.Anonymous(this="IS JSON", expressions=[test.this, exp.var(json.name or "VALUE")])
            return exp.Not(this=call) if test is not node else call

        def _parse_create_like(self) -> exp.LikeProperty | None:
            """``LIKE t [(INCLUDING | EXCLUDING | OVERWRITING ALL | CONSTRAINTS | GENERATED | ... ...)]`` of Flink's
            CREATE TABLE, each option a Property (``INCLUDING`` = ``ALL``)."""
            parts = [self._parse_id_var()]  # (not _parse_table_parts: it reads ``t (...)`` as a call)
            while self._match(TokenType.DOT):
                parts.append(self._parse_id_var())
            table = exp.Table(this=parts[-1], db=parts[-2] if len(parts) > 1 else None, catalog=parts[-3] if len(parts) > 2 else None)
            options = []
            if self._match(TokenType.L_PAREN):
                while self._match_texts(("INCLUDING", "EXCLUDING", "OVERWRITING")):
                    how = self._prev.text.upper()
                    what = self._advance_any()
                    if what is None:
                        self.raise_error("Expecting ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, PARTITIONS or WATERMARKS")
                        return None
                    options.append(self.expression(exp.Property(this=exp.var(how), value=exp.var(what.text.upper()))))
                self._match_r_paren()
            return self.expression(exp.LikeProperty(this=table, expressions=options))

        def _parse_window_tvf(self, name: str) -> exp.Expression:
            token = self._tokens[self._index - 2]  # (the name, before its parenthesis: errors point at it)
            node = self.expression(WindowTvf(this=name, expressions=self._parse_csv(self._parse_tvf_arg)))
            node.meta.update(line=token.line, col=token.col, start=token.start)
            return node

        def _parse_match_recognize(self) -> exp.MatchRecognize | None:
            """Flink's ``MATCH_RECOGNIZE (...)``: sqlglot's clauses, plus ``WITHIN INTERVAL ...`` after
            ``PATTERN (...)`` (kept in the node's ``within`` meta) and ``AFTER MATCH SKIP TO variable``."""
            if not self._match(TokenType.MATCH_RECOGNIZE):
                return None
            start = self._prev
            self._match_l_paren()
            partition = self._parse_partition_by()
            order = self._parse_order()
            measures = self._parse_csv(self._parse_match_recognize_measure) if self._match_text_seq("MEASURES") else None
            rows = None
            if self._match_text_seq("ONE", "ROW", "PER", "MATCH"):
                rows = exp.var("ONE ROW PER MATCH")
            elif self._match_text_seq("ALL", "ROWS", "PER", "MATCH"):
                rows = exp.var("ALL ROWS PER MATCH")
            after = None
            if self._match_text_seq("AFTER", "MATCH", "SKIP"):
                if self._match_text_seq("PAST", "LAST", "ROW"):
                    after = exp.var("PAST LAST ROW")
                elif self._match_text_seq("TO", "NEXT", "ROW"):
                    after = exp.var("TO NEXT ROW")
                elif self._match_text_seq("TO"):
                    direction = "LAST"
                    if self._match_texts(("FIRST", "LAST")):
                        direction = self._prev.text.upper()
                    variable = self._advance_any()
                    if not variable:
                        self.raise_error(f"Expecting a pattern variable after AFTER MATCH SKIP TO {direction}")
                    after = exp.var(f"TO {direction} {variable.text if variable else ''}")
            pattern = None
            if self._match_text_seq("PATTERN"):
                self._match_l_paren()
                first, depth, last = self._curr, 1, None
                while self._curr and depth > 0:
                    depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(self._curr.token_type, 0)
                    if depth > 0:
                        last = self._curr
                    self._advance()
                if depth > 0 or first is None:
                    self.raise_error("Expecting )", self._curr)
                pattern = exp.var(self._find_sql(first, last) if last is not None else "")
            within = self._parse_interval() if self._match_text_seq("WITHIN") else None
            define = self._parse_csv(self._parse_name_as_expression) if self._match_text_seq("DEFINE") else None
            self._match_r_paren()
            node = self.expression(
                exp.MatchRecognize(
                    partition_by=partition, order=order, measures=measures, rows=rows, after=after,
                    pattern=pattern, define=define, alias=self._parse_table_alias(),
                )
            )
            node.meta.update(line=start.line, col=start.col, start=start.start, within=within)
            return node

        #: The functions funke rewrites to give Flink's meaning (``funke.dialect.functions``) are kept as
        #: written, their arguments in Flink's order (sqlglot's own parse would misplace some: REGEXP_EXTRACT's
        #: third is the group, not a position), for the planner to rewrite.
        FUNCTIONS = {**parser.Parser.FUNCTIONS, **{n: _as_written(n) for n in rewritten_names()}, "LISTAGG": _listagg, **{n: _as_written(n) for n in _NOT_FLINK}, "PERCENTILE": _percentile, "COLLECT": _collect}
        FUNCTION_PARSERS = {
            **{k: v for k, v in parser.Parser.FUNCTION_PARSERS.items() if k not in _NOT_FLINK},
            **{name: (lambda n: lambda self: self._parse_window_tvf(n))(name) for name in WINDOW_TVFS},
            **{name: (lambda n: lambda self: self._parse_json_array(n))(name) for name in ("JSON_ARRAY", "JSON_ARRAYAGG")},
            "JSON_EXISTS": lambda self: self._parse_json_exists(),
            "JSON_OBJECT": lambda self: self._parse_flink_json_object(),
            "JSON_OBJECTAGG": lambda self: self._parse_flink_json_objectagg(),
            "JSON_QUERY": lambda self: self._parse_json_query(),
            "JSON_VALUE": lambda self: self._parse_json_value(),
        }


def parse(sql: str, functions: Collection[str] = ()) -> exp.Expression:
    """One Flink SQL statement; a syntax error names its line and column. ``functions``: the names of
    user functions, read as calls of those (not of a built-in sqlglot knows by the same name)."""
    statements = _statements(sql, functions)
    if len(statements) != 1:
        raise PlanError(f"expected one SQL statement, got {len(statements)}: {sql!r}")
    return statements[0]


def parse_script(script: str, functions: Collection[str] = ()) -> list[tuple[exp.Expression, str]]:
    """The statements of a script (separated by ``;``), each with the script's text (positions are in it)."""
    return [(s, script) for s in _statements(script, functions)]


def _not_a_command_fallback(record: logging.LogRecord) -> bool:
    return "Falling back to parsing as a 'Command'" not in record.getMessage()


@contextlib.contextmanager
def _no_command_warnings() -> Iterator[None]:
    """sqlglot warns on stderr when it reads a statement it does not know as a Command; funke answers each such
    statement itself (SHOW: funke.table.namespace) or refuses it, naming it, so the warning only repeats that."""
    log = logging.getLogger("sqlglot")
    log.addFilter(_not_a_command_fallback)
    try:
        yield
    finally:
        log.removeFilter(_not_a_command_fallback)


def _statements(sql: str, functions: Collection[str] = ()) -> list[exp.Expression]:
    with _no_command_warnings():
        return _parsed(sql, functions)


def _parsed(sql: str, functions: Collection[str]) -> list[exp.Expression]:
    try:
        if functions:
            dialect = Flink()
            parser = _with_functions(frozenset(n.upper() for n in functions))(dialect=dialect)
            return [s for s in parser.parse(dialect.tokenize(sql), sql) if s is not None]
        return [s for s in sqlglot.parse(sql, read=Flink) if s is not None]
    except ParseError as e:
        first: dict[str, Any] = e.errors[0] if e.errors else {}
        where = f" at line {first.get('line')}, column {first.get('col')}" if first else ""
        raise PlanError(f"SQL syntax error{where}: {first.get('description', str(e))}\n{sql}") from None
    except TokenError as e:  # (an unterminated string, a binary literal X'...' of other than hex digits)
        raise PlanError(f"SQL syntax error: {e} (an unterminated quote, or an X'...' literal of other than hex digits?)\n{sql}") from None


@functools.lru_cache(maxsize=32)
def _with_functions(names: frozenset[str]) -> type[parser.Parser]:
    """Flink's parser, reading a call of each of ``names`` (upper case) as that user function's (an
    ``exp.Anonymous``), whatever built-in sqlglot knows by the name (a table function ``split`` is not
    Spark's SPLIT)."""

    def anonymous(name: str) -> Any:
        return lambda args: exp.Anonymous(this=name.lower(), expressions=args)

    functions = {**Flink.Parser.FUNCTIONS, **{n: anonymous(n) for n in names}}
    parsers = {k: v for k, v in Flink.Parser.FUNCTION_PARSERS.items() if k not in names}
    return type("FlinkWithFunctions", (Flink.Parser,), {"FUNCTIONS": functions, "FUNCTION_PARSERS": parsers})


def position(node: exp.Expression, sql: str | None = None) -> str:
    """Where ``node`` starts in the query text ``sql``: 'line L, column C' of its first token that
    has a position (sqlglot keeps names' and literals' positions, not keywords')."""
    for n in node.walk(bfs=False):  # (depth first: the first token in the text)
        meta = getattr(n, "meta", None) or {}
        if "line" in meta:
            col = meta["col"]
            if sql is not None and "start" in meta:
                col = meta["start"] - sql.rfind("\n", 0, meta["start"])
            return f"line {meta['line']}, column {col}"
    return "somewhere in the query"
