"""Online learning: one model per key, in keyed state, that scores each row and then learns from it.

``fk.ml.online(model, features=[...], target=None, output="score")`` is a
:class:`~funke.functions.KeyedProcessFunction` for ``keyed.process``. Per key it keeps a model in
a ``ValueState`` (state ``model``; how many rows it learned from in state ``seen``). For each row,
in the key's arrival order, it first scores the row with the model as it stands (prequential,
"test then train": a row never scores itself) and then learns from it; the row goes on with the
score added as column ``output``::

    scorer = fk.ml.online(HalfSpaceTrees, features=["cpu", "latency_ms"], output="score")
    scored = readings.key_by("host").process(scorer, uid="baseline")  # its output: the row and the score

The model is state like any other: checkpointed with each micro-batch, carried by savepoints
(``funke stop --savepoint``, ``resume --from``), so a restarted job goes on with what each key's
model had learned. In a savepoint's open format (``funke.savepoints.general``) it is the row of
scope ``user``, state ``model``: ``decode_value`` gives the model object back (it is kept as its
pickle, tagged ``$pickle``, with its ``repr``).

Models (the kind is read from the methods the model has):

* a river anomaly detector (``score_one`` / ``learn_one``: ``anomaly.HalfSpaceTrees``, or any
  class with those two methods): the score is ``score_one(x)``, a double; ``target`` must be None.
* a river regressor or classifier (``predict_one`` / ``learn_one(x, y)``, with ``target``): the
  score is ``predict_one(x)``: a double for a regressor, the target's type for a classifier.
* a river clusterer (``predict_one`` / ``learn_one(x)``, no ``target``: ``cluster.KMeans``):
  the score is the cluster number, a bigint.
* a scikit-learn estimator that learns one row at a time by ``partial_fit`` (``SGDRegressor``,
  ``SGDClassifier``, ``PassiveAggressiveRegressor``, ...): ``predict`` on the one row (null until
  the first ``partial_fit``), then ``partial_fit`` on it. A classifier needs ``classes=`` on its
  first call: pass ``learn_params={"classes": [...]}`` (given to every call). ``MiniBatchKMeans``
  does not fit: its first ``partial_fit`` needs ``n_clusters`` rows; river's ``cluster.KMeans``
  is streaming k-means row by row.

``model`` is a factory (a class, or a function of no arguments) called once per new key, or a
model instance, which each new key starts from a copy of (so a model trained offline can be the
starting point). ``x`` is ``{feature: float}`` for river, a one-row float matrix for
scikit-learn, features in the order given.

Order matters to a model that learns: ``order="arrival"`` (the default) takes each key's rows as
they come, as Flink's operators do; but rows of one micro-batch come from several source
partitions, so their arrival order is not the source's. ``order="event_time"`` holds each row
until the watermark passes its timestamp (in keyed state, with an event-time timer), then takes
a key's rows in timestamp order (ties in arrival order): the same scores on every run, and on a
run resumed from a savepoint, at the cost of one watermark's delay. It needs event time (a
watermark strategy on the source); a row that is late (at or behind the watermark) or has no
timestamp is taken at once.

``window=fk.seconds(10)`` updates each key's model once per tumbling event-time window instead of
once per row (FlinkML's and Spark's mini-batch learning): a row waits in keyed state until the
watermark passes its window's end; then the key's rows of that window (in timestamp order) are all
scored by the model as the window found it, and the model learns from them in one call: one
scikit-learn ``partial_fit`` on the window's matrix (so ``MiniBatchKMeans`` and other mini-batch
estimators fit), river's ``learn_one`` on each in order. The rows come out at the window's end
(their timestamp is its last millisecond). A row that is late for its window, or has no
timestamp, is a window of its own, at once. ``warm_up`` counts learned rows as before; a window
is scored only if the model had learned ``warm_up`` rows when it began.

A row with a null (or NaN) feature is neither scored nor learned from (its score is null); a
row with a null target is scored, not learned from: that is how unlabelled rows get predictions
while labelled ones train. ``warm_up=n``: a key's first ``n`` scorable rows are learned from but
score null, so a young model raises no alarms.

>>> import funke as fk
>>> from river import linear_model
>>> m = fk.ml.online(linear_model.LinearRegression, features=["x"], target="y", output="y_hat")
>>> m
online(LinearRegression, regressor: x -> y_hat, learns y)
>>> from funke.plan.types import Schema
>>> m.output_schema(Schema.of("k string, x double, y double")).names
('k', 'x', 'y', 'y_hat')
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from funke.errors import PlanError
from funke.ml.predict import NUMERIC, check_features
from funke.ml.predict import row_features as _features
from funke.plan.types import Field, Schema
from funke.semantics.functions import KeyedProcessFunction
from funke.semantics.state import MapStateDescriptor, ValueStateDescriptor

__all__ = ["MODEL_STATE", "PENDING_STATE", "SEEN_STATE", "OnlineModel", "online"]

#: The names of the function's keyed states (as they appear in savepoints); pending: timestamp -> rows.
MODEL_STATE, SEEN_STATE, PENDING_STATE = "model", "seen", "pending"
ORDERS = ("arrival", "event_time")
#: Model kinds: how a model scores and learns, and the type of its score.
KINDS = ("anomaly", "regressor", "classifier", "clusterer", "sklearn-regressor", "sklearn-classifier", "sklearn-clusterer")


def online(
    model: Any,
    features: Sequence[str],
    target: str | None = None,
    output: str = "score",
    *,
    warm_up: int = 0,
    learn_params: Mapping[str, Any] | None = None,
    order: str | None = None,
    window: Any = None,
) -> OnlineModel:
    """A keyed process function that keeps ``model`` per key, scores each row, then learns from it.

    See the module's documentation for the models it takes and what it does with each row;
    ``window=`` (a duration) updates each key's model once per tumbling event-time window instead.
    """
    return OnlineModel(
        model,
        tuple(features),
        target,
        output,
        warm_up=warm_up,
        learn_params=dict(learn_params or {}),
        order=order,
        window=window,
    )


class OnlineModel(KeyedProcessFunction):
    """What :func:`online` gives: pass it to ``keyed.process(m, uid=...)``, which asks it for its output
    schema (``output_schema(input schema)``: the input's columns, then the score)."""

    def __init__(
        self,
        model: Any,
        features: tuple[str, ...],
        target: str | None = None,
        output: str = "score",
        *,
        warm_up: int = 0,
        learn_params: dict[str, Any] | None = None,
        order: str | None = None,
        window: Any = None,
    ) -> None:
        check_features("fk.ml.online", features)
        if target is not None and (not isinstance(target, str) or target in features):
            raise PlanError(f"fk.ml.online: target= names one column that is not a feature, got {target!r}")
        if not isinstance(output, str) or not output or output in features or output == target:
            raise PlanError(f"fk.ml.online: output= names the new score column, got {output!r}")
        if not isinstance(warm_up, int) or warm_up < 0:
            raise PlanError(f"fk.ml.online: warm_up= is a number of rows (>= 0), got {warm_up!r}")
        self.window_ms = _window_ms(window)
        if order is None:
            order = "arrival" if self.window_ms is None else "event_time"
        if order not in ORDERS:
            raise PlanError(f"fk.ml.online: order= is 'arrival' or 'event_time', got {order!r}")
        if self.window_ms is not None and order != "event_time":
            raise PlanError(
                "fk.ml.online: window= learns once per event-time window, so rows go in event-time order: drop order="
            )
        self.features, self.target, self.output, self.warm_up, self.order = features, target, output, warm_up, order
        self.learn_params = learn_params or {}
        self._new_model = _factory(model)
        self.kind = _kind(self._new_model(), target)
        self.model_name = _name(model)

    def __repr__(self) -> str:
        learns = f", learns {self.target}" if self.target else ""
        every = f", per {self.window_ms} ms window" if self.window_ms is not None else ""
        return f"online({self.model_name}, {self.kind}: {', '.join(self.features)} -> {self.output}{learns}{every})"

    def output_type(self, input_schema: Schema) -> str:
        """The score column's Spark type: a cluster number is a bigint, a class label the target's type."""
        if self.kind.endswith("clusterer"):
            return "bigint"
        if self.kind.endswith("classifier"):
            field = input_schema.get(self.target or "")
            return field.dtype if field is not None else "string"
        return "double"

    def output_schema(self, input_schema: Schema | None) -> Schema:
        """The input's columns, then the score."""
        if input_schema is None:
            raise PlanError(f"{self}: the stream's columns are not known, so the features cannot be checked")
        types = {f.name: f.dtype for f in input_schema.fields}
        wanted = [*self.features, *([self.target] if self.target else [])]
        missing = [f for f in wanted if f not in types]
        if missing:
            raise PlanError(f"{self}: no column {', '.join(missing)} in the stream (columns: {', '.join(types)})")
        numeric = [*self.features, *([self.target] if self.target and not self.kind.endswith("classifier") else [])]
        wrong = [f"{f} ({types[f]})" for f in numeric if types[f] not in NUMERIC]
        if wrong:
            raise PlanError(
                f"{self}: features and a regression target must be numbers or booleans; {', '.join(wrong)} are not (cast them first)"
            )
        if self.output in types:
            raise PlanError(f"{self}: the stream already has a column {self.output!r}; name the score otherwise (output=...)")
        return Schema((*input_schema.fields, Field(self.output, self.output_type(input_schema))))

    # -- the keyed process function --------------------------------------------------------------

    def open(self, ctx: Any) -> None:
        self._model = ctx.get_state(ValueStateDescriptor(MODEL_STATE, object))
        self._seen = ctx.get_state(ValueStateDescriptor(SEEN_STATE, int))
        if self.order == "event_time":
            self._pending = ctx.get_map_state(MapStateDescriptor(PENDING_STATE, int, list))

    def process_element(self, value: Any, ctx: Any) -> Iterator[dict[str, Any]]:
        row, t = dict(value), ctx.timestamp()
        if self.order == "event_time" and t is not None and t > ctx.timer_service().current_watermark():
            if self.window_ms is None:
                self._pending.put(t, [*(self._pending.get(t) or []), row])
                ctx.timer_service().register_event_time_timer(t)
                return
            last = t - t % self.window_ms + self.window_ms - 1  # the window's last millisecond (Flink's maxTimestamp)
            self._pending.put(last, [*(self._pending.get(last) or []), [t, row]])
            ctx.timer_service().register_event_time_timer(last)
            return
        if self.window_ms is not None:  # late (its window is done) or no timestamp: a window of its own
            yield from self._window([row])
            return
        yield from self._step(row)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[dict[str, Any]]:
        rows = self._pending.get(timestamp) if self.order == "event_time" else None
        if rows:
            self._pending.remove(timestamp)
            if self.window_ms is not None:
                yield from self._window([row for _, row in sorted(rows, key=lambda tr: tr[0])])  # (stable: ties in arrival order)
                return
            for row in rows:
                yield from self._step(row)

    def _window(self, rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """A window's rows: each scored by the model as the window found it, then one update from them all."""
        model = self._model.value()
        if model is None:
            model = self._new_model()
        seen = self._seen.value() or 0
        xs = [_features(row, self.features) for row in rows]
        scorable = [i for i, x in enumerate(xs) if x is not None]
        scores = dict(zip(scorable, self._scores(model, [xs[i] for i in scorable]), strict=True)) if seen >= self.warm_up else {}
        learn = [i for i in scorable if self.target is None or not _missing(rows[i].get(self.target))]
        if learn:
            self._learn_many(model, [xs[i] for i in learn], [rows[i].get(self.target) for i in learn] if self.target else None)
            self._seen.update(seen + len(learn))
            self._model.update(model)
        for i, row in enumerate(rows):
            yield {**row, self.output: scores.get(i)}

    def _step(self, row: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Score ``row`` with its key's model, then teach the model ``row``."""
        x = _features(row, self.features)
        if x is None:
            yield {**row, self.output: None}
            return
        model = self._model.value()
        if model is None:
            model = self._new_model()
        seen = self._seen.value() or 0
        score = self._score(model, x) if seen >= self.warm_up else None
        y = row.get(self.target) if self.target else None
        if self.target is None or not _missing(y):
            self._learn(model, x, y)
            self._seen.update(seen + 1)
        self._model.update(model)
        yield {**row, self.output: score}

    def _score(self, model: Any, x: list[float]) -> Any:
        kind = self.kind
        if kind == "anomaly":
            return _number(model.score_one(dict(zip(self.features, x, strict=True))), float)
        if not kind.startswith("sklearn"):
            got = model.predict_one(dict(zip(self.features, x, strict=True)))
            return _number(got, int) if kind == "clusterer" else got if kind == "classifier" else _number(got, float)
        if not _fitted(model):
            return None
        import numpy as np

        (got,) = model.predict(np.asarray([x], dtype="float64"))
        return (
            _number(got, int)
            if kind == "sklearn-clusterer"
            else got.item()
            if kind == "sklearn-classifier"
            else _number(got, float)
        )

    def _scores(self, model: Any, xs: list[list[float]]) -> list[Any]:
        """The scores of several rows by one model that does not change meanwhile (scikit-learn: one call)."""
        if not xs:
            return []
        if not self.kind.startswith("sklearn"):
            return [self._score(model, x) for x in xs]
        if not _fitted(model):
            return [None] * len(xs)
        import numpy as np

        got = model.predict(np.asarray(xs, dtype="float64"))
        if self.kind == "sklearn-classifier":
            return [g.item() if hasattr(g, "item") else g for g in got]
        return [_number(g, int if self.kind == "sklearn-clusterer" else float) for g in got]

    def _learn_many(self, model: Any, xs: list[list[float]], ys: list[Any] | None) -> None:
        """Learn from several rows at once: scikit-learn's ``partial_fit`` on all of them (a mini-batch:
        ``MiniBatchKMeans`` fits here), river's ``learn_one`` on each in order."""
        if not self.kind.startswith("sklearn"):
            for i, x in enumerate(xs):
                self._learn(model, x, None if ys is None else ys[i])
            return
        import numpy as np

        matrix = np.asarray(xs, dtype="float64")
        if ys is None:
            model.partial_fit(matrix, **self.learn_params)
        else:
            model.partial_fit(matrix, ys, **self.learn_params)

    def _learn(self, model: Any, x: list[float], y: Any) -> None:
        if not self.kind.startswith("sklearn"):
            sample = dict(zip(self.features, x, strict=True))
            if self.target is None:
                model.learn_one(sample, **self.learn_params)
            else:
                model.learn_one(sample, y, **self.learn_params)
            return
        import numpy as np

        matrix = np.asarray([x], dtype="float64")
        if self.target is None:
            model.partial_fit(matrix, **self.learn_params)
        else:
            model.partial_fit(matrix, [y], **self.learn_params)


# -- models ---------------------------------------------------------------------------------------


def _factory(model: Any) -> Callable[[], Any]:
    """A function giving a fresh model for a new key."""
    if isinstance(model, type) or (callable(model) and not _learns(model)):
        return model
    if _learns(model):
        prototype = copy.deepcopy(model)  # later changes to the caller's object do not leak in
        return lambda: copy.deepcopy(prototype)
    raise PlanError(
        f"fk.ml.online: {model!r} is not a model: give a river model (learn_one), a scikit-learn estimator "
        "with partial_fit, or a class or function making one"
    )


def _learns(model: Any) -> bool:
    return callable(getattr(model, "learn_one", None)) or callable(getattr(model, "partial_fit", None))


def _kind(model: Any, target: str | None) -> str:
    name = type(model).__name__
    if callable(getattr(model, "learn_one", None)):
        if callable(getattr(model, "score_one", None)):
            if target is not None:
                raise PlanError(f"fk.ml.online: {name} is an anomaly detector, it learns no target: drop target={target!r}")
            return "anomaly"
        if not callable(getattr(model, "predict_one", None)):
            raise PlanError(f"fk.ml.online: {name} has learn_one but neither score_one nor predict_one to score with")
        if target is None:
            return "clusterer"
        return "classifier" if callable(getattr(model, "predict_proba_one", None)) else "regressor"
    if callable(getattr(model, "partial_fit", None)) and callable(getattr(model, "predict", None)):
        if target is None:
            return "sklearn-clusterer"
        from sklearn.base import is_classifier

        return "sklearn-classifier" if is_classifier(model) else "sklearn-regressor"
    raise PlanError(
        f"fk.ml.online: {name} cannot learn online: it needs learn_one (river) or partial_fit and predict (scikit-learn)"
    )


def _window_ms(window: Any) -> int | None:
    if window is None:
        return None
    from funke.semantics.time import to_millis

    try:
        ms = to_millis(window, what="window")
    except (TypeError, ValueError) as e:
        raise PlanError(f"fk.ml.online: window= takes a duration (fk.seconds(10)) or milliseconds: {e}") from None
    if ms <= 0:
        raise PlanError(f"fk.ml.online: window= must be longer than 0 ms, got {ms} ms")
    return ms


def _name(model: Any) -> str:
    return model.__name__ if isinstance(model, type) else getattr(model, "__qualname__", type(model).__name__)


def _fitted(model: Any) -> bool:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(model)
    except NotFittedError:  # nothing learned yet
        return False
    return True


# -- values ---------------------------------------------------------------------------------------


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _number(v: Any, kind: type) -> Any:
    """A score as a plain int or float (numpy scalars are not Spark values); NaN and None are null."""
    if v is None:
        return None
    f = float(v)
    if math.isnan(f):
        return None
    return int(v) if kind is int else f
