"""``funke.graph``: Flink's Gelly on Spark: a graph over two DataFrames and its library algorithms.

Example (``spark`` a SparkSession)::

    from funke.graph import Graph
    g = Graph.from_edges(spark.createDataFrame([(1, 2, 1.0), (2, 3, 2.0), (4, 5, 1.0)], "src long, dst long, weight double"))
    g.pagerank(damping=0.85, tolerance=1e-6)     # id, rank           (directed)
    g.connected_components()                     # id, component      (weakly: edges both ways)
    g.shortest_paths(source=1)                   # id, distance       (directed, weights >= 0)
    g.label_propagation()                        # id, label          (undirected, synchronous)
    g.triangle_count()                           # id, triangles      (undirected)

The algorithms are DataFrame iterations written with :func:`iterate` (Flink's bulk iteration)
and :func:`iterate_delta` (its delta iteration: a solution set and a workset), which users can
call with their own step functions. GraphFrames is not used: its jar is not served for Spark 4.3.

``Graph(vertices, edges)`` and ``Graph.from_edges(edges)`` also take bounded funke streams
(``env.from_collection(...)``, ``env.from_source(fk.sources.files(...))`` and what follows them):
each runs once as a batch job, its bad records to the dead letters, and its rows become the
DataFrame (``funke.graph.bounded``); an unbounded stream is refused.

Over an unbounded edge stream, :func:`streaming_connected_components` (Gelly-streaming's
``ConnectedComponents``) keeps the components of all edges so far in keyed state and, at the end
of each event-time tumbling window, emits the vertices whose component changed::

    late = fk.OutputTag("late-edges")
    changes = streaming_connected_components(edges, fk.seconds(10), late=late, uid="components")
    changes                          # window_end, id, component   (component: the smallest id)
    changes.get_side_output(late)    # edges too late for their window
"""

from funke.graph.algorithms import (
    connected_components,
    label_propagation,
    pagerank,
    shortest_paths,
    triangle_count,
    triangles,
)
from funke.graph.graph import Graph, GraphError
from funke.graph.iteration import IterationResult, iterate, iterate_delta
from funke.graph.streaming import ComponentChanges, streaming_connected_components

__all__ = [
    "ComponentChanges",
    "Graph",
    "GraphError",
    "IterationResult",
    "connected_components",
    "iterate",
    "iterate_delta",
    "label_propagation",
    "pagerank",
    "shortest_paths",
    "streaming_connected_components",
    "triangle_count",
    "triangles",
]
