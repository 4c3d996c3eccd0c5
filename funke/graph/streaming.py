"""Connected components of an edge stream, updated per event-time window (Gelly-streaming's ``ConnectedComponents``).

:func:`streaming_connected_components` keeps a summary of every edge seen so far (each vertex's
component) in funke keyed state, so it is checkpointed, in savepoints and restored with the job.
Per event-time tumbling window, the window's edges are merged into it when the window fires, and
the window emits one row per vertex whose component changed in that window, a vertex seen for the
first time included: ``window_end``, ``id``, ``component``. ``component`` is the smallest vertex
id of the component, as :meth:`funke.graph.Graph.connected_components` labels it; edges are read
undirected. Replaying the rows in ``window_end`` order gives every vertex's component after each
window: the components of all edges whose timestamp is before that window's end.

The operator is an ordinary window on funke's general path: all edges go to one key (one
summary; its windows run one after another, in one Spark task per micro-batch), a window's
edges wait in window state until the watermark passes its end, and an edge too late for its
window goes to the late-data side output (Flink's rule: the window's last millisecond is at or
below the watermark when the edge comes) instead of changing the components. An edge with a null ``src`` or ``dst`` goes to
the job's dead letters, with the reason ``null key column(s): edge_ends``.

The summary itself, :class:`Components`, is plain Python: quick-find with member lists, so
that merging costs what it changes: each vertex whose component changed is relabelled once per
window, which is also the row the window emits for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from funke.api.streams import DataStream
from funke.errors import PlanError, SchemaError, did_you_mean
from funke.plan.expr import Sql
from funke.plan.types import Field, Schema
from funke.semantics.functions import OutputTag, ProcessWindowFunction
from funke.semantics.state import ValueStateDescriptor
from funke.semantics.time import Duration
from funke.semantics.windows import TumblingEventTimeWindows, WindowAssigner

#: The column all edges are keyed by: 0, or null when an end is null (then the edge is a dead letter).
KEY = "edge_ends"
#: The summary's keyed state: vertex -> component, and component -> its vertices.
COMPONENT = ValueStateDescriptor("component")
MEMBERS = ValueStateDescriptor("members")


class Components:
    """Connected components of the edges added so far, each labelled by its smallest vertex id.

    ``component`` maps every vertex seen to its label; ``members`` maps each label to the
    vertices that carry it. Both are plain dicts (of lists), as they are kept in state.

    >>> c = Components()
    >>> c.add_edges([(3, 4), (5, 5)])
    {3: 3, 4: 3, 5: 5}
    >>> c.add_edges([(4, 5), (1, 2)])
    {5: 3, 1: 1, 2: 1}
    >>> c.add_edges([(2, 5)])
    {3: 1, 4: 1, 5: 1}
    >>> c.component
    {3: 1, 4: 1, 5: 1, 1: 1, 2: 1}
    """

    def __init__(self, component: dict[Any, Any] | None = None, members: dict[Any, list[Any]] | None = None) -> None:
        self.component: dict[Any, Any] = component if component is not None else {}
        self.members: dict[Any, list[Any]] = members if members is not None else {}

    def add_edges(self, edges: Iterable[tuple[Any, Any]]) -> dict[Any, Any]:
        """Merge ``edges`` (pairs of vertex ids, read undirected); returns ``{vertex: new component}``
        for each vertex whose component changed or that was not seen before (vertices in the order
        of the members moved, then of the new vertices' first edges)."""
        # A union-find over the labels the edges touch (a new vertex is its own label); each
        # set's root is its smallest label, so that a root is the merged component's label.
        parent: dict[Any, Any] = {}
        new: dict[Any, None] = {}  # (ordered, for the order of the result)

        def find(x: Any) -> Any:
            root = x
            while parent[root] != root:
                root = parent[root]
            while parent[x] != root:
                parent[x], x = root, parent[x]
            return root

        for a, b in edges:
            labels = []
            for v in (a, b):
                label = self.component.get(v)
                if label is None:
                    new[v] = None
                    label = v
                parent.setdefault(label, label)
                labels.append(find(label))
            low, high = sorted(labels)
            if low != high:
                parent[high] = low
        changes: dict[Any, Any] = {}
        for label in list(parent):
            root = find(label)
            if root != label and label in self.members:
                moved = self.members.pop(label)
                self.members.setdefault(root, []).extend(moved)
                for v in moved:
                    self.component[v] = root
                    changes[v] = root
        for v in new:
            root = find(v)
            self.component[v] = root
            self.members.setdefault(root, []).append(v)
            changes[v] = root
        return changes

    def __len__(self) -> int:
        return len(self.component)


class _MergeWindow(ProcessWindowFunction):
    """Merges a window's edges into the summary in keyed state; yields the changed vertices."""

    def process(self, key: Any, ctx: Any, elements: list[Any]) -> Iterator[dict[str, Any]]:
        state = ctx.global_state()
        component, members = state.get_state(COMPONENT), state.get_state(MEMBERS)
        summary = Components(component.value(), members.value())
        changes = summary.add_edges((e["src"], e["dst"]) for e in elements)
        component.update(summary.component)
        members.update(summary.members)
        for vertex, label in changes.items():
            yield {"id": vertex, "component": label}


class ComponentChanges(DataStream):
    """The stream :func:`streaming_connected_components` returns: ``window_end``, ``id``, ``component``.

    ``get_side_output(late)`` (the tag given as ``late=``) gives the late edges with the edge
    stream's own columns. (``uid()`` and ``name()`` here name the final ``select``; the state's
    operator takes its uid from ``streaming_connected_components(..., uid=...)``.)
    """

    def __init__(
        self,
        env: Any,
        node: Any,
        window: DataStream | None = None,
        late: OutputTag | None = None,
        edge_columns: tuple[str, ...] = (),
    ) -> None:
        super().__init__(env, node)
        self._window = window
        self._late = late
        self._edge_columns = edge_columns

    def _keeping(self, other: DataStream) -> ComponentChanges:
        return ComponentChanges(other._env, other.node, self._window, self._late, self._edge_columns)

    def uid(self, uid: str) -> ComponentChanges:
        return self._keeping(super().uid(uid))

    def name(self, name: str) -> ComponentChanges:
        return self._keeping(super().name(name))

    def get_side_output(self, tag: OutputTag) -> DataStream:
        if not isinstance(tag, OutputTag):
            return super().get_side_output(tag)  # (refuses it, saying what it takes)
        if self._window is None or self._late is None or tag.name != self._late.name:
            known = repr(self._late.name) if self._late is not None else "none: pass late=OutputTag(...)"
            raise PlanError(
                f"get_side_output({tag.name!r}): streaming_connected_components sends late edges to the tag given as late= ({known})"
            )
        return self._window.get_side_output(self._late).select(*self._edge_columns)


def streaming_connected_components(
    edges: DataStream,
    window: Duration | TumblingEventTimeWindows,
    *,
    late: OutputTag | None = None,
    uid: str | None = None,
) -> ComponentChanges:
    """Connected components over an edge stream, updated at the end of each event-time window.

    ``edges``: a stream with ``src`` and ``dst`` columns of one type (the vertex ids) and event
    time (``watermarks=`` on its source, or ``assign_timestamps_and_watermarks``); other columns
    are kept only for the late side output. ``window``: the tumbling window's size
    (``fk.seconds(10)``) or a ``TumblingEventTimeWindows`` (for an offset). ``late``: where edges
    too late for their window go (read them with ``result.get_side_output(late)``; without it they
    are dropped and counted, as for any window). ``uid``: the operator's uid, by which savepoints
    match its state.

    Returns a stream of ``window_end`` (timestamp), ``id``, ``component``: per window, one row
    per vertex whose component changed in it or that it saw first (see the module docstring).

    Example::

        env = fk.StreamEnvironment()
        edges = env.from_collection(rows, "src bigint, dst bigint, ts bigint",
                                    watermarks=fk.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts", unit="ms"))
        late = fk.OutputTag("late-edges")
        changes = streaming_connected_components(edges, fk.seconds(10), late=late, uid="components")
        changes.sink_to(fk.sinks.files("/tmp/components"))
        changes.get_side_output(late).print()
    """
    if not isinstance(edges, DataStream):
        raise PlanError(f"streaming_connected_components() takes a DataStream of edges, got {type(edges).__name__}")
    schema = edges.schema
    if schema is None:
        raise PlanError(
            "streaming_connected_components(): the edge stream's columns are known only to Spark; alias its SQL expressions"
        )
    for name in ("src", "dst"):
        if name not in schema:
            raise SchemaError(
                f"streaming_connected_components(): the edges need a column {name!r}{did_you_mean(name, list(schema.names))}"
            )
    kind = schema.field("src", node="edges").dtype
    if schema.field("dst", node="edges").dtype != kind:
        raise SchemaError(
            f"streaming_connected_components(): src and dst must have one type, got src {kind}, dst {schema.field('dst', node='edges').dtype}: "
            "cast them to one type first"
        )
    if KEY in schema:
        raise SchemaError(f"streaming_connected_components(): column {KEY!r} is the operator's own key; rename yours")
    if edges.node.event_time is None:
        raise PlanError(
            "streaming_connected_components() needs event time on the edges: pass watermarks= to from_source(...) or call "
            "assign_timestamps_and_watermarks(WatermarkStrategy...with_timestamp_assigner('column'))"
        )
    if late is not None and not isinstance(late, OutputTag):
        raise PlanError(f"late= takes an OutputTag, got {late!r}")
    assigner = window if isinstance(window, TumblingEventTimeWindows) else _tumbling(window)
    one_key = Sql("CASE WHEN src IS NULL OR dst IS NULL THEN NULL ELSE 0 END", declared="int").alias(KEY)
    keyed = edges.select(*schema.names, one_key).key_by(KEY)
    windowed = keyed.window(assigner)
    if late is not None:
        windowed = windowed.side_output_late_data(late)
    out = Schema((Field("id", kind), Field("component", kind)))
    merged = windowed.process(_MergeWindow(), output_schema=out).name("streaming connected components")
    if uid is not None:
        merged = merged.uid(uid)
    changes = merged.select("window_end", "id", "component")
    return ComponentChanges(changes._env, changes.node, merged, late, schema.names)


def _tumbling(window: Any) -> TumblingEventTimeWindows:
    if isinstance(window, WindowAssigner):
        raise PlanError(
            f"streaming_connected_components() runs on event-time tumbling windows, got {window.describe()}: "
            "pass a size (fk.seconds(10)) or TumblingEventTimeWindows.of(size, offset)"
        )
    try:
        return TumblingEventTimeWindows.of(window)
    except (TypeError, ValueError) as e:
        raise PlanError(f"streaming_connected_components(): window= {e}") from None
