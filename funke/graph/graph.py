"""``Graph``: a vertex DataFrame and an edge DataFrame, checked once, with the algorithms as methods.

Vertices have an ``id`` column plus any others; edges a ``src`` and a ``dst`` column of the same
type plus any others (``weight`` for the weighted algorithms). Edges are directed as stored;
each algorithm says whether it reads them directed or undirected. An edge whose ``src`` or
``dst`` is not a vertex id is left out by every algorithm (Gelly refuses such a graph; checking
costs a join and an action, so funke drops them instead, without a word).

Either may also be a bounded funke ``DataStream``: it runs once as a batch job and its rows
become the DataFrame (``funke.graph.bounded``); an unbounded one is refused.
"""

from __future__ import annotations

from typing import Any

from funke.api.environment import StreamEnvironment
from funke.api.streams import DataStream
from funke.errors import FunkeError, SchemaError, did_you_mean

DataFrame = Any  # pyspark.sql.DataFrame; kept loose so that the checks run without Spark

NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double")


class GraphError(FunkeError, ValueError):
    """An algorithm cannot run on this graph with these arguments (a negative weight, an unknown source, ...)."""


#: What each side of a graph may be given as, for the error that says so.
_TAKES = {
    "vertices": "a Spark DataFrame with an 'id' column, a bounded funke DataStream, or a list of ids or of dicts with an 'id'",
    "edges": "a Spark DataFrame with 'src' and 'dst' columns, a bounded funke DataStream, "
    "or a list of (src, dst) or (src, dst, weight) tuples or of dicts with 'src' and 'dst'",
}


def _stream_of_rows(data: Any, what: str) -> Any:
    """A Python list of rows (tuples or dicts) as a bounded funke stream of ``what``'s columns;
    a DataFrame or a DataStream as it is; anything else refused, saying what is taken."""
    if isinstance(data, DataStream) or hasattr(data, "dtypes"):
        return data
    if not isinstance(data, (list, tuple)) or not data:
        raise SchemaError(f"the graph's {what} must be {_TAKES[what]}; got {type(data).__name__}{' (empty)' if isinstance(data, (list, tuple)) else ''}")
    names = ("id",) if what == "vertices" else ("src", "dst", "weight")
    rows = []
    for i, row in enumerate(data):
        if isinstance(row, dict):
            rows.append(row)
        elif what == "vertices" and not isinstance(row, (tuple, list)):
            rows.append({"id": row})
        elif isinstance(row, (tuple, list)) and 1 <= len(row) <= len(names) and (what == "vertices" or len(row) >= 2):
            rows.append(dict(zip(names, row)))
        else:
            raise SchemaError(f"the graph's {what} must be {_TAKES[what]}; item {i} is {row!r}")
    return StreamEnvironment(app="graph").from_collection(rows)


def _require(frame: DataFrame, what: str, columns: tuple[str, ...]) -> dict[str, str]:
    """The column types of ``frame`` (a DataFrame, or a DataStream: checked before it runs), once it has ``columns``."""
    if isinstance(frame, DataStream):
        if frame.schema is None:
            raise SchemaError(f"the {what}' columns are known only to Spark (an unaliased SQL expression): alias it")
        types = {f.name: f.dtype or "?" for f in frame.schema}
    else:
        types = dict(frame.dtypes)
    for name in columns:
        if name not in types:
            raise SchemaError(f"the {what} need a column {name!r}{did_you_mean(name, list(types))}")
    return types


def _frame(data: Any, what: str) -> DataFrame:
    """A DataFrame as it is; a funke DataStream as the DataFrame of its rows (it must be bounded)."""
    if isinstance(data, DataStream):
        from funke.graph.bounded import frame_of  # (circular at module level: it imports this module)

        return frame_of(data, what)
    return data


class Graph:
    """A graph over two Spark DataFrames (Gelly's ``Graph.fromDataSet(vertices, edges)``), or
    bounded funke streams (each run once as a batch job; see ``funke.graph.bounded``).

    Example (``spark`` a SparkSession)::

        g = Graph(spark.createDataFrame([(1,), (2,), (3,)], "id long"),
                  spark.createDataFrame([(1, 2, 1.0), (2, 3, 2.5)], "src long, dst long, weight double"))
        g.pagerank().orderBy("id").show()
        g.shortest_paths(source=1).show()
    """

    def __init__(self, vertices: DataFrame, edges: DataFrame) -> None:
        vertices, edges = _stream_of_rows(vertices, "vertices"), _stream_of_rows(edges, "edges")
        _require(vertices, "vertices", ("id",))
        _require(edges, "edges", ("src", "dst"))
        vertices, edges = _frame(vertices, "vertices"), _frame(edges, "edges")
        vtypes, etypes = dict(vertices.dtypes), dict(edges.dtypes)
        kinds = {"vertices.id": vtypes["id"], "edges.src": etypes["src"], "edges.dst": etypes["dst"]}
        if len(set(kinds.values())) > 1:
            shown = ", ".join(f"{k} {v}" for k, v in kinds.items())
            raise SchemaError(f"vertex ids and edge ends must have one type, got {shown}: cast them to one type first")
        self.vertices = vertices
        self.edges = edges

    @classmethod
    def from_edges(cls, edges: DataFrame) -> Graph:
        """The graph whose vertices are the edges' ends (Gelly's ``Graph.fromDataSet(edges)``).

        ``edges``: a DataFrame or a bounded funke stream with ``src`` and ``dst`` columns, or a
        Python list of ``(src, dst)`` / ``(src, dst, weight)`` tuples or of dicts, e.g.
        ``Graph.from_edges([(1, 2), (2, 3)])``.
        """
        edges = _stream_of_rows(edges, "edges")
        _require(edges, "edges", ("src", "dst"))
        edges = _frame(edges, "edges")
        ids = edges.select(edges["src"].alias("id")).union(edges.select(edges["dst"].alias("id"))).distinct()
        return cls(ids, edges)

    def __repr__(self) -> str:
        return f"Graph(vertices: {', '.join(self.vertices.columns)}; edges: {', '.join(self.edges.columns)})"

    def weight_type(self, weight: str) -> str:
        """The type of the edges' ``weight`` column; a missing or non-numeric column is refused."""
        types = _require(self.edges, "edges", (weight,))
        if types[weight] not in NUMERIC and not types[weight].startswith("decimal"):
            raise SchemaError(f"edge weights must be numbers: column {weight!r} is {types[weight]}")
        return types[weight]

    def ids(self) -> DataFrame:
        """The vertex ids, each once."""
        return self.vertices.select("id").distinct()

    def valid_edges(self, *columns: str) -> DataFrame:
        """``src``, ``dst`` and ``columns`` of the edges whose both ends are vertices."""
        ids = self.ids()
        picked = self.edges.select("src", "dst", *columns)
        picked = picked.join(ids.withColumnRenamed("id", "src"), "src", "left_semi")
        return picked.join(ids.withColumnRenamed("id", "dst"), "dst", "left_semi").select("src", "dst", *columns)

    # The algorithms (funke.graph.algorithms); each method passes its arguments on.

    def pagerank(self, **options: Any) -> DataFrame:
        from funke.graph.algorithms import pagerank  # (circular at module level: it imports this module)

        return pagerank(self, **options)

    def connected_components(self, **options: Any) -> DataFrame:
        from funke.graph.algorithms import (
            connected_components,  # (circular at module level: it imports this module)
        )

        return connected_components(self, **options)

    def shortest_paths(self, source: Any, **options: Any) -> DataFrame:
        from funke.graph.algorithms import shortest_paths  # (circular at module level: it imports this module)

        return shortest_paths(self, source, **options)

    def label_propagation(self, **options: Any) -> DataFrame:
        from funke.graph.algorithms import label_propagation  # (circular at module level: it imports this module)

        return label_propagation(self, **options)

    def triangle_count(self) -> DataFrame:
        from funke.graph.algorithms import triangle_count  # (circular at module level: it imports this module)

        return triangle_count(self)

    def triangles(self) -> DataFrame:
        from funke.graph.algorithms import triangles  # (circular at module level: it imports this module)

        return triangles(self)
