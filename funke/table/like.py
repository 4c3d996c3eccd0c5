"""Flink SQL's ``CREATE TABLE t (...) WITH (...) LIKE base [(options)]``: the table ``base`` declares, merged with
what the statement adds, by Flink's rules (its ``MergeTableLikeUtil``, read, not copied).

Each feature of ``base`` is INCLUDING (taken; one the statement declares too is an error), EXCLUDING (left out) or
OVERWRITING (taken, and replaced by the statement's of the same name): ``ALL`` sets them all, the options after
it one each. The default is ``INCLUDING ALL OVERWRITING OPTIONS``. Features: ``CONSTRAINTS`` (the primary key;
its columns stay NOT NULL), ``GENERATED`` (computed columns), ``METADATA`` (metadata columns), ``OPTIONS`` (the
``WITH`` options), ``PARTITIONS`` (``PARTITIONED BY``) and ``WATERMARKS``; CONSTRAINTS and PARTITIONS are not
overwritten. Physical columns are always taken; one the statement declares again is an error. The columns come
in ``base``'s order, then the statement's.

>>> from funke.dialect.syntax import parse
>>> base = parse("CREATE TABLE b (id INT, ts TIMESTAMP(3), c AS id + 1, WATERMARK FOR ts AS ts, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen')")
>>> merged(parse("CREATE TABLE t (x INT) WITH ('connector' = 'print') LIKE b (EXCLUDING ALL INCLUDING GENERATED)"), base, "t").sql()
"CREATE TABLE t (id INT NOT NULL, ts TIMESTAMP(3), c AS id + 1, x INT) WITH (connector='print')"
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from sqlglot import exp

from funke.dialect.syntax import MetadataColumn
from funke.errors import PlanError, UnsupportedError
from funke.table.ddl import TableDef
from funke.table.namespace import object_name

FEATURES = ("CONSTRAINTS", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS")
_NOT_OVERWRITTEN = ("CONSTRAINTS", "PARTITIONS")


def like_of(create: exp.Create) -> exp.LikeProperty | None:
    """A CREATE TABLE's ``LIKE`` clause, or None."""
    props = create.args.get("properties")
    return next((p for p in props.expressions if isinstance(p, exp.LikeProperty)), None) if props is not None else None


def like_table(create: exp.Create, tables: Mapping[str, TableDef], views: Collection[str], where: str) -> exp.Create:
    """``create`` (a CREATE TABLE ... LIKE base) as the CREATE TABLE of the merged table; ``base`` one of ``tables``
    (a view, or no table of the name, refused as Flink refuses them)."""
    like = like_of(create)
    assert like is not None
    name = object_name(like.this, f"LIKE {like.this.sql()} (at {where})")
    if name in views:
        raise PlanError(f"Flink SQL: the table {name} of the LIKE clause (at {where}) can not be a VIEW, as in Flink")
    if name not in tables or tables[name].statement is None:
        raise PlanError(f"Flink SQL: the table {name} of the LIKE clause (at {where}) is not found; tables: {', '.join(sorted(tables)) or 'none'}")
    return merged(create, tables[name].statement, where)


def strategies(like: exp.LikeProperty, where: str) -> dict[str, str]:
    """Each feature's INCLUDING, EXCLUDING or OVERWRITING, by the clause's options over Flink's default."""
    chosen = {f: "INCLUDING" for f in FEATURES} | {"OPTIONS": "OVERWRITING"}
    for option in like.expressions:
        how, what = option.this.name, option.args["value"].name
        if what not in (*FEATURES, "ALL"):
            raise PlanError(f"Flink SQL: LIKE (at {where}): {how} {what}: the features are ALL, {', '.join(FEATURES)}")
        if how == "OVERWRITING" and what in (*_NOT_OVERWRITTEN, "ALL"):
            raise PlanError(f"Flink SQL: LIKE (at {where}): OVERWRITING {what} is not allowed, as in Flink: {' and '.join(_NOT_OVERWRITTEN)} are not overwritten")
        chosen.update(dict.fromkeys(FEATURES if what == "ALL" else (what,), how))
    return chosen


def _kind(item: exp.Expression) -> str:
    """A schema item's feature: a column's (PHYSICAL, GENERATED, METADATA), WATERMARKS or CONSTRAINTS."""
    if isinstance(item, exp.ColumnDef):
        kinds = [c.kind for c in item.args.get("constraints") or []]
        if any(isinstance(k, exp.ComputedColumnConstraint) for k in kinds):
            return "GENERATED"
        return "METADATA" if any(isinstance(k, MetadataColumn) for k in kinds) else "PHYSICAL"
    return "WATERMARKS" if isinstance(item, exp.WatermarkColumnConstraint) else "CONSTRAINTS"


def _key_columns(items: list[exp.Expression]) -> set[str]:
    """The columns of a schema's primary key, declared at the table or at a column."""
    keys: set[str] = set()
    for item in items:
        key = item.expressions[0] if isinstance(item, exp.Constraint) and item.expressions else item
        if isinstance(key, exp.PrimaryKey):
            keys |= {e.name for e in key.expressions}
        elif isinstance(item, exp.ColumnDef) and any(isinstance(c.kind, exp.PrimaryKeyColumnConstraint) for c in item.args.get("constraints") or []):
            keys.add(item.name)
    return keys


def _without_key(column: exp.ColumnDef, keys: set[str]) -> exp.ColumnDef:
    """A base column without its PRIMARY KEY constraint, NOT NULL if it was a key column (as Flink keeps it)."""
    column = column.copy()
    kept = [c for c in column.args.get("constraints") or [] if not isinstance(c.kind, exp.PrimaryKeyColumnConstraint)]
    if column.name in keys and not any(isinstance(c.kind, exp.NotNullColumnConstraint) for c in kept):
        kept.append(exp.ColumnConstraint(kind=exp.NotNullColumnConstraint()))
    column.set("constraints", kept)
    return column


def merged(create: exp.Create, base: exp.Create, where: str) -> exp.Create:
    """``create`` (a CREATE TABLE ... LIKE) as the CREATE TABLE of the merged table, ``base`` the statement of the
    table it is like."""
    like = like_of(create)
    assert like is not None
    how = strategies(like, where)
    name = create.this.this if isinstance(create.this, exp.Schema) else create.this
    own = list(create.this.expressions) if isinstance(create.this, exp.Schema) else []
    theirs = list(base.this.expressions)
    keys = _key_columns(theirs)
    by_name = {i.name: i for i in own if isinstance(i, exp.ColumnDef)}
    items: list[exp.Expression] = []
    for item in theirs:
        kind = _kind(item)
        if kind in ("PHYSICAL", "GENERATED", "METADATA"):
            if kind != "PHYSICAL" and how[kind] == "EXCLUDING":
                continue
            mine = by_name.get(item.name)
            if mine is not None and (kind == "PHYSICAL" or _kind(mine) == "PHYSICAL" or how[kind] == "INCLUDING"):
                what = {"PHYSICAL": "column", "GENERATED": "generated column", "METADATA": "metadata column"}[kind]
                also = "" if kind == "PHYSICAL" else f"; you might want to specify EXCLUDING {kind} or OVERWRITING {kind}"
                raise PlanError(f"Flink SQL: LIKE (at {where}): a {what} named {item.name!r} exists already in the base table{also}")
            if mine is not None:  # (OVERWRITING: the statement's, in the base's place)
                items.append(by_name.pop(item.name))
                continue
            items.append(_without_key(item, keys) if how["CONSTRAINTS"] == "EXCLUDING" else item.copy())
        elif kind == "WATERMARKS" and how["WATERMARKS"] != "EXCLUDING":
            if any(_kind(i) == "WATERMARKS" and i.this.name == item.this.name for i in own):
                if how["WATERMARKS"] == "INCLUDING":
                    raise PlanError(
                        f"Flink SQL: LIKE (at {where}): a watermark for column {item.this.name!r} exists already in the base table; "
                        "you might want to specify EXCLUDING WATERMARKS or OVERWRITING WATERMARKS"
                    )
                continue
            items.append(item.copy())
        elif kind == "CONSTRAINTS" and how["CONSTRAINTS"] == "INCLUDING":
            if any(_kind(i) == "CONSTRAINTS" for i in own if not isinstance(i, exp.ColumnDef)) or _key_columns(own):
                raise PlanError(f"Flink SQL: LIKE (at {where}): the base table has a primary key already; you might want to specify EXCLUDING CONSTRAINTS")
            items.append(item.copy())
    items += [i for i in own if not isinstance(i, exp.ColumnDef) or i.name in by_name]
    statement = create.copy()
    statement.set("this", exp.Schema(this=name.copy(), expressions=items))
    statement.set("properties", exp.Properties(expressions=_properties(create, base, how, where)))
    return statement


def _properties(create: exp.Create, base: exp.Create, how: dict[str, str], where: str) -> list[exp.Expression]:
    """The merged ``WITH`` options and ``PARTITIONED BY``, and the statement's other properties (TEMPORARY)."""
    key: Callable[[exp.Expression], str] = lambda p: p.this.name
    own = [p for p in create.args["properties"].expressions if not isinstance(p, exp.LikeProperty)]
    theirs = list(base.args["properties"].expressions) if base.args.get("properties") is not None else []
    options = {key(p): p for p in theirs if type(p) is exp.Property} if how["OPTIONS"] != "EXCLUDING" else {}
    for p in (p for p in own if type(p) is exp.Property):
        if key(p) in options and how["OPTIONS"] == "INCLUDING":
            raise PlanError(f"Flink SQL: LIKE (at {where}): the base table has the option {key(p)!r} already; you might want to specify EXCLUDING OPTIONS or OVERWRITING OPTIONS")
        options[key(p)] = p
    partitions = [p for p in own if isinstance(p, exp.PartitionedByProperty)]
    if how["PARTITIONS"] == "INCLUDING" and (base_partitions := [p for p in theirs if isinstance(p, exp.PartitionedByProperty)]):
        if partitions:
            raise PlanError(f"Flink SQL: LIKE (at {where}): the base table is partitioned already; you might want to specify EXCLUDING PARTITIONS")
        partitions = base_partitions
    other = [p for p in own if type(p) is not exp.Property and not isinstance(p, exp.PartitionedByProperty)]
    if unknown := [p for p in other if not isinstance(p, exp.TemporaryProperty)]:
        raise UnsupportedError(f"Flink SQL: {unknown[0].sql()} in CREATE TABLE ... LIKE (at {where}) is not supported by funke")
    return [*other, *(p.copy() for p in options.values()), *(p.copy() for p in partitions)]
