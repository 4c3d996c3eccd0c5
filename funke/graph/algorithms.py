"""Gelly's library algorithms as DataFrame iterations (``funke.graph.iteration``) on Spark.

Each takes a :class:`~funke.graph.graph.Graph`, checks its arguments before Spark runs anything,
and returns a DataFrame with one row per vertex (``triangles``: per triangle). How each reads the
edges:

* ``pagerank``: directed, ``src -> dst``; duplicate edges count once (or their weights add up).
* ``connected_components``: undirected (weakly connected components of a directed graph).
* ``shortest_paths``: directed, weighted, weights >= 0.
* ``label_propagation``, ``triangle_count``, ``triangles``: undirected, simple (self-loops and
  repeated edges in either direction count once, or not at all for self-loops).
"""

from __future__ import annotations

import math
from typing import Any

from funke.graph.graph import DataFrame, Graph, GraphError
from funke.graph.iteration import iterate, iterate_delta


def _positive_int(name: str, value: Any, none_ok: bool = False) -> None:
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GraphError(f"{name} must be a positive int{' or None' if none_ok else ''}, got {value!r}")


def _undirected(graph: Graph) -> DataFrame:
    """Every edge both ways, without self-loops, each (src, dst) once."""
    e = graph.valid_edges().where("src <> dst")
    return e.union(e.select(e["dst"].alias("src"), e["src"].alias("dst"))).distinct()


def pagerank(
    graph: Graph,
    damping: float = 0.85,
    max_iterations: int = 100,
    tolerance: float = 1e-6,
    weight: str | None = None,
    checkpoint_every: int = 1,
) -> DataFrame:
    """PageRank by power iteration; columns ``id``, ``rank`` (the ranks add up to 1).

    Normalization as networkx's ``pagerank`` (and Gelly's): every vertex starts at ``1/N``; a
    round gives ``damping * (sum of in-neighbours' rank * share + dangling / N) + (1 - damping) / N``
    where ``share`` is 1 over the source's out-degree (or the edge's weight over the source's
    total out-weight, with ``weight``), and ``dangling`` is the rank of the vertices with no
    out-edge (or out-weight 0), spread evenly over all vertices. It stops when the ranks moved
    less than ``N * tolerance`` in total (L1) from one round to the next, or after
    ``max_iterations`` rounds (networkx raises then; funke returns the last ranks).
    """
    if isinstance(damping, bool) or not isinstance(damping, (int, float)) or not 0 <= damping < 1:
        raise GraphError(f"damping must be a number in [0, 1), got {damping!r}")
    _positive_int("max_iterations", max_iterations)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance > 0:
        raise GraphError(f"tolerance must be a number > 0, got {tolerance!r}")
    if weight is not None:
        graph.weight_type(weight)
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    ids = graph.ids().localCheckpoint(eager=True)
    n = ids.count()
    if n == 0:
        return ids.withColumn("rank", F.lit(0.0))
    if weight is None:
        e = graph.valid_edges().distinct().withColumn("w", F.lit(1.0))
    else:
        e = graph.valid_edges(weight).groupBy("src", "dst").agg(F.sum(F.col(weight).cast("double")).alias("w"))
    out = e.groupBy("src").agg(F.sum("w").alias("out_w")).where("out_w <> 0")
    shares = e.join(out, "src").select("src", "dst", (F.col("w") / F.col("out_w")).alias("share")).localCheckpoint(eager=True)
    dangling = ids.join(out.withColumnRenamed("src", "id"), "id", "left_anti").localCheckpoint(eager=True)

    def step(ranks: DataFrame, _round: int) -> DataFrame:
        contrib = (
            ranks.join(shares, ranks["id"] == shares["src"])
            .groupBy(F.col("dst").alias("id"))
            .agg(F.sum(F.col("rank") * F.col("share")).alias("c"))
        )
        lost = ranks.join(dangling, "id", "left_semi").agg(F.coalesce(F.sum("rank"), F.lit(0.0)).alias("d"))
        new = damping * (F.coalesce(F.col("c"), F.lit(0.0)) + F.col("d") / n) + (1 - damping) / n
        # Each row carries how far it moved, so that the stopping test reads the kept frame alone.
        return (
            ranks.select("id", F.col("rank").alias("before"))
            .join(contrib, "id", "left")
            .crossJoin(lost)
            .select("id", new.alias("rank"), F.abs(new - F.col("before")).alias("moved"))
        )

    def settled(_before: DataFrame, after: DataFrame, _round: int) -> bool:
        return after.agg(F.sum("moved")).first()[0] < n * tolerance

    start = ids.select("id", F.lit(1.0 / n).alias("rank"), F.lit(None).cast("double").alias("moved"))
    ranks = iterate(start, step, max_iterations, until=settled, checkpoint_every=checkpoint_every).result
    return ranks.select("id", "rank")


def connected_components(graph: Graph, max_iterations: int | None = None, checkpoint_every: int = 1) -> DataFrame:
    """Weakly connected components by min-label propagation; columns ``id``, ``component``.

    A delta iteration (Gelly's ``ConnectedComponents``): every vertex starts with its own id as
    label; each round, the vertices whose label went down last round send it to their
    neighbours (edges read both ways), and a vertex takes the smallest label it got when it is
    smaller than its own. It ends when no label changes: ``component`` is the smallest vertex id
    in the component (ids compare as their Spark type: numbers by value, strings by code point).
    """
    _positive_int("max_iterations", max_iterations, none_ok=True)
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    edges = _undirected(graph).localCheckpoint(eager=True)
    labels = graph.ids().withColumn("component", F.col("id"))

    def step(solution: DataFrame, changed: DataFrame, _round: int) -> tuple[DataFrame, DataFrame]:
        offers = (
            changed.join(edges, changed["id"] == edges["src"])
            .groupBy(F.col("dst").alias("id"))
            .agg(F.min("component").alias("offer"))
        )
        better = offers.join(solution, "id").where(F.col("offer") < F.col("component"))
        updates = better.select("id", F.col("offer").alias("component"))
        return updates, updates

    return iterate_delta(labels, labels, step, "id", max_iterations, checkpoint_every).result


def shortest_paths(
    graph: Graph, source: Any, weight: str | None = "weight", max_iterations: int | None = None, checkpoint_every: int = 1
) -> DataFrame:
    """Single-source shortest paths (Bellman-Ford as a delta iteration); columns ``id``, ``distance``.

    Edges are directed and weighted by the column ``weight`` (``None``: every edge weighs 1);
    weights must be >= 0 (checked: a negative, null or NaN weight is refused before the iteration).
    ``distance`` is a double: 0 at ``source``, ``inf`` where there is no path. Each round, the
    vertices whose distance went down last round offer ``distance + weight`` along their
    out-edges; it ends when no distance goes down.
    """
    _positive_int("max_iterations", max_iterations, none_ok=True)
    if source is None:
        raise GraphError("shortest_paths() needs a source vertex id, got None")
    if weight is not None:
        graph.weight_type(weight)
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    if weight is None:
        edges = graph.valid_edges().withColumn("w", F.lit(1.0))
    else:
        edges = graph.valid_edges(weight).select("src", "dst", F.col(weight).cast("double").alias("w"))
        bad = edges.where(F.col("w").isNull() | (F.col("w") < 0) | F.isnan("w")).limit(3).collect()
        if bad:
            shown = ", ".join(f"{r['src']} -> {r['dst']}: {r['w']}" for r in bad)
            raise GraphError(
                f"shortest_paths() needs edge weights >= 0 (Bellman-Ford here does not look for negative cycles); "
                f"column {weight!r} has {shown}: drop or fix these edges first"
            )
    edges = edges.groupBy("src", "dst").agg(F.min("w").alias("w")).localCheckpoint(eager=True)
    ids = graph.ids()
    if ids.where(F.col("id") == F.lit(source)).limit(1).count() == 0:
        raise GraphError(f"shortest_paths(): the source {source!r} is not a vertex id of this graph")
    is_source = F.col("id") == F.lit(source)
    distances = ids.select("id", F.when(is_source, F.lit(0.0)).otherwise(F.lit(math.inf)).alias("distance"))
    start = distances.where(is_source)

    def step(solution: DataFrame, changed: DataFrame, _round: int) -> tuple[DataFrame, DataFrame]:
        offers = (
            changed.join(edges, changed["id"] == edges["src"])
            .groupBy(F.col("dst").alias("id"))
            .agg(F.min(F.col("distance") + F.col("w")).alias("offer"))
        )
        better = offers.join(solution, "id").where(F.col("offer") < F.col("distance"))
        updates = better.select("id", F.col("offer").alias("distance"))
        return updates, updates

    return iterate_delta(distances, start, step, "id", max_iterations, checkpoint_every).result


def label_propagation(graph: Graph, max_iterations: int = 20, checkpoint_every: int = 1) -> DataFrame:
    """Community detection by synchronous label propagation; columns ``id``, ``label``.

    The rule (deterministic): every vertex starts with its own id as label. In each round, all
    vertices at once take the label that the most of their neighbours had in the round before
    (neighbours: edges read both ways, each neighbour counted once, self-loops ignored);
    a tie goes to the smallest of the tied labels; a vertex without neighbours keeps its label.
    It stops when a round changes no label, or after ``max_iterations`` rounds (the synchronous
    rule can swing between two states for ever: on a star, for one).
    """
    _positive_int("max_iterations", max_iterations)
    from pyspark.sql import Window  # (pyspark's lazy import)
    from pyspark.sql import functions as F

    edges = _undirected(graph).localCheckpoint(eager=True)
    best_first = Window.partitionBy("id").orderBy(F.col("votes").desc(), F.col("label").asc())

    def step(labels: DataFrame, _round: int) -> DataFrame:
        votes = (
            labels.join(edges, labels["id"] == edges["src"])
            .groupBy(F.col("dst").alias("id"), "label")
            .agg(F.count(F.lit(1)).alias("votes"))
        )
        won = votes.withColumn("place", F.row_number().over(best_first)).where("place = 1").select("id", F.col("label").alias("won"))
        label = F.coalesce("won", "label")
        return labels.join(won, "id", "left").select("id", label.alias("label"), (label != F.col("label")).alias("changed"))

    def settled(_before: DataFrame, after: DataFrame, _round: int) -> bool:
        return after.where("changed").isEmpty()

    start = graph.ids().select("id", F.col("id").alias("label"), F.lit(False).alias("changed"))
    return iterate(start, step, max_iterations, until=settled, checkpoint_every=checkpoint_every).result.select("id", "label")


def _simple_edges(graph: Graph) -> DataFrame:
    """Each undirected edge once as (a, b) with a < b; no self-loops."""
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    e = graph.valid_edges().where("src <> dst")
    return e.select(F.least("src", "dst").alias("a"), F.greatest("src", "dst").alias("b")).distinct()


def triangles(graph: Graph) -> DataFrame:
    """Every triangle once, as ``a < b < c`` (Gelly's ``TriangleEnumerator``); edges undirected."""
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    e = _simple_edges(graph).localCheckpoint(eager=True)
    x, y, z = e.alias("x"), e.alias("y"), e.alias("z")
    wedges = x.join(y, (F.col("x.a") == F.col("y.a")) & (F.col("x.b") < F.col("y.b")))
    wedges = wedges.select(F.col("x.a").alias("a"), F.col("x.b").alias("b"), F.col("y.b").alias("c"))
    closed = wedges.join(z, (wedges["b"] == F.col("z.a")) & (wedges["c"] == F.col("z.b")), "left_semi")
    return closed.select("a", "b", "c")


def triangle_count(graph: Graph) -> DataFrame:
    """The number of triangles each vertex is in (networkx's ``triangles``); columns ``id``, ``triangles``.

    Edges undirected, self-loops and repeated edges ignored. The graph's total is the column's sum / 3.
    """
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    corners = triangles(graph).select(F.explode(F.array("a", "b", "c")).alias("id")).groupBy("id").agg(F.count(F.lit(1)).alias("t"))
    return graph.ids().join(corners, "id", "left").select("id", F.coalesce("t", F.lit(0)).cast("long").alias("triangles"))
