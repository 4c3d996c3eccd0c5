"""Serving a model that a stream replaces while the job runs: Flink's broadcast state pattern.

``fk.ml.serve(model, features=[...])`` is a :class:`~funke.functions.BroadcastProcessFunction`
for a stream connected to a stream of model updates broadcast as ``fk.ml.SERVED_MODEL``::

    models = fk.sources.files("models/", schema=fk.ml.MODEL_UPDATE_SCHEMA, monitor_continuously=fk.seconds(5))
    updates = env.from_source(models)  # Parquet files of fk.ml.model_row(model, version) rows
    scored = events.connect(updates.broadcast(fk.ml.SERVED_MODEL)).process(
        fk.ml.serve(model_v1, features=["x1", "x2"], output="score", version="v1"), uid="scorer"
    )  # the events' columns, then score and model_version
    rejected = scored.get_side_output(fk.ml.REJECTED_MODELS)  # updates that could not be served

**Model updates** are rows of :data:`MODEL_UPDATE_SCHEMA` (``version string, model binary``;
other columns are ignored): ``model`` is the model's pickle (protocol 2 or later) or an ONNX
model's bytes, told apart by their first byte. :func:`model_row` makes such a row from a model
object, so nobody pickles by hand. Each update replaces the model: every parallel instance of
the operator gets it (a broadcast row reaches every bucket) and keeps it in its broadcast state
(``SERVED_MODEL``: entries ``version``, ``model`` (the bytes as received) and ``digest``), so the
model is checkpointed with each micro-batch and carried by savepoints: a job resumed from a
savepoint serves the model it was serving, not the one its code starts with. Within a
micro-batch the updates are applied before the batch's events, in arrival order (the last
wins); an event in a later micro-batch than an update is scored by it. Unpickling runs code
from the bytes: connect only an update stream you trust, as you would only load a pickle file
you trust.

**Scoring.** Each event goes on with two columns added: the score (column ``output``; its type
is fixed when the job is built: the initial model's, else ``output_type``, "double" by default)
and the version of the model that scored it (column ``version_column``, a string). Before any
update the events are scored by ``model``, whose version is ``version`` ("initial" by default);
with ``model=None`` they get a null score and a null version. A row with a null (or NaN) feature
is not scored: null score, null version. Rows are scored one at a time (the general path feeds
a broadcast function row by row), by the same machinery as ``fk.ml.predict``: scikit-learn
estimators (``method=`` names the method) and ONNX models. The decoded model is kept per worker
process, by digest, so an update is unpickled once per worker, not once per row or batch.

**A bad update** (bytes that do not load, no version, a model that is not fitted, has no such
method, takes another number of features, fails on a probe row of zeros or gives another type
of score) is not served: the previous model goes on serving, and the update goes to the side
output :data:`REJECTED_MODELS` with the reason (columns ``version``, ``reason``, ``serving``: the
version still served). Read that side output: an unread one is dropped, as every unread side
output is (Flink's rule); the worker also logs a warning. As any output written when a
broadcast row is applied, the rejection appears once per parallel instance (on Spark, once per
bucket: identical rows).

>>> import funke as fk
>>> from sklearn.linear_model import LinearRegression
>>> m = LinearRegression().fit([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]], [1.0, 2.0, 6.0])
>>> scorer = fk.ml.serve(m, features=["x1", "x2"], version="v1")
>>> scorer
serve(LinearRegression.predict(x1, x2) -> score, model_version; initial v1)
>>> sorted(fk.ml.model_row(m, "v2"))
['model', 'version']
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import pickle
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

from funke.errors import PlanError
from funke.ml.predict import Predict, check_features, feature_types
from funke.ml.predict import row_features as _features
from funke.plan.types import Field, Schema
from funke.semantics.broadcast import BroadcastProcessFunction
from funke.semantics.functions import OutputTag
from funke.semantics.state import MapStateDescriptor

__all__ = [
    "MODEL_UPDATE_SCHEMA",
    "REJECTED_MODELS",
    "SERVED_MODEL",
    "ServedModel",
    "model_row",
    "serve",
]

log = logging.getLogger(__name__)

#: The broadcast state the served model lives in: broadcast the updates with it,
#: ``updates.broadcast(fk.ml.SERVED_MODEL)``. Entries: ``version``, ``model`` (bytes), ``digest``.
SERVED_MODEL = MapStateDescriptor("served_model", str, object)
#: The columns of a model update row (:func:`model_row` makes one).
MODEL_UPDATE_SCHEMA = "version string, model binary"
#: Updates that were not served, with the reason and the version that goes on serving.
REJECTED_MODELS = OutputTag("rejected_models", "version string, reason string, serving string")
#: Score types a served model may give (those ``fk.ml.predict`` gives).
OUTPUT_TYPES = ("double", "bigint", "boolean", "string", "array<double>")
#: Decoded models per worker process, by (digest, features, method, output, its type): the newest few.
_DECODED: OrderedDict[tuple[Any, ...], Predict] = OrderedDict()
_DECODED_KEPT = 8
_PICKLE = b"\x80"  # the first byte of every pickle of protocol 2 or later


def model_row(model: Any, version: str | int) -> dict[str, Any]:
    """A model update row (:data:`MODEL_UPDATE_SCHEMA`) serving ``model`` as ``version``.

    ``model``: a fitted scikit-learn estimator (or anything ``fk.ml.predict`` scores), pickled;
    an ONNX model (an ``onnx.ModelProto``, or the path of a ``.onnx`` file), as its bytes; or
    bytes already made of one of those. An int ``version`` is written as its decimal text.

    >>> import funke as fk
    >>> fk.ml.model_row(b"\\x80\\x05N.", 7)
    {'version': '7', 'model': b'\\x80\\x05N.'}
    """
    if isinstance(version, bool) or not isinstance(version, (str, int)) or version == "":
        raise PlanError(f"fk.ml.model_row: version= is a non-empty string (or an int), got {version!r}")
    if isinstance(model, type):
        raise PlanError(f"fk.ml.model_row: give a fitted model, not the class {model.__name__}")
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
    elif isinstance(model, (str, os.PathLike)) and str(model).endswith(".onnx"):
        with open(model, "rb") as f:
            data = f.read()
    elif type(model).__name__ == "ModelProto" and type(model).__module__.startswith("onnx"):
        data = model.SerializeToString()
    else:
        data = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    return {"version": str(version), "model": data}


def serve(
    model: Any,
    features: Sequence[str],
    output: str = "score",
    *,
    version: str | None = None,
    method: str = "predict",
    output_type: str | None = None,
    version_column: str = "model_version",
) -> ServedModel:
    """A broadcast process function scoring each row with the model the update stream last sent.

    ``model``: the model served until the first update (``None``: rows score null until then),
    as version ``version`` ("initial" by default). See the module's documentation for the
    update rows, the columns added and what happens to a bad update.
    """
    return ServedModel(
        model, tuple(features), output, version=version, method=method, output_type=output_type, version_column=version_column
    )


class _Rejected(Exception):
    """An update that cannot be served; the message is the reason."""


class ServedModel(BroadcastProcessFunction):
    """What :func:`serve` gives: pass it to ``events.connect(updates.broadcast(fk.ml.SERVED_MODEL)).process(...)``,
    which asks it for its output schema (``output_schema``: the events' columns, the score, the version)."""

    def __init__(
        self,
        model: Any,
        features: tuple[str, ...],
        output: str = "score",
        *,
        version: str | None = None,
        method: str = "predict",
        output_type: str | None = None,
        version_column: str = "model_version",
    ) -> None:
        check_features("fk.ml.serve", features)
        for what, name in (("output", output), ("version_column", version_column)):
            if not isinstance(name, str) or not name or name in features:
                raise PlanError(f"fk.ml.serve: {what}= names a new column (not a feature), got {name!r}")
        if output == version_column:
            raise PlanError(f"fk.ml.serve: output= and version_column= both name {output!r}")
        if model is None and version is not None:
            raise PlanError("fk.ml.serve: version= names the initial model's version, and no model is given (model=None)")
        if version is not None and (not isinstance(version, str) or not version):
            raise PlanError(f"fk.ml.serve: version= is a non-empty string, got {version!r}")
        if output_type is not None and output_type not in OUTPUT_TYPES:
            raise PlanError(f"fk.ml.serve: output_type= is one of {', '.join(OUTPUT_TYPES)}; got {output_type!r}")
        self.features, self.output, self.method, self.version_column = features, output, method, version_column
        self.initial: Predict | None = None
        self.initial_version: str | None = None
        if model is not None:
            self.initial = Predict(model, features, output, method)
            self.initial_version = version or "initial"
            if output_type is not None and output_type != self.initial.output_type:
                raise PlanError(
                    f"fk.ml.serve: the initial model gives {self.initial.output_type} scores, output_type= says {output_type}"
                )
            output_type = self.initial.output_type
        elif output_type is None:
            output_type = "array<double>" if method in ("predict_proba", "predict_log_proba", "transform") else "double"
        self.output_type: str = output_type

    def __repr__(self) -> str:
        initial = (
            f"initial {self.initial_version}" if self.initial is not None else f"no initial model, {self.output_type} scores"
        )
        return f"serve({self._model_name()}.{self.method}({', '.join(self.features)}) -> {self.output}, {self.version_column}; {initial})"

    def _model_name(self) -> str:
        return type(self.initial.model).__name__ if self.initial is not None else "model"

    def output_schema(
        self, input_schema: Schema | None, broadcast_schema: Schema | None, descriptors: Sequence[MapStateDescriptor]
    ) -> Schema:
        """The events' columns, then the score and the version (``BroadcastConnectedStream.process``
        calls this with both streams' columns and the broadcast state's descriptors, and checks them)."""
        types = feature_types(self, self.features, input_schema)
        assert input_schema is not None
        for what, name in (("output", self.output), ("version_column", self.version_column)):
            if name in types:
                raise PlanError(f"{self}: the stream already has a column {name!r}; name it otherwise ({what}=...)")
        if not any(getattr(d, "name", None) == SERVED_MODEL.name for d in descriptors):
            declared = ", ".join(repr(getattr(d, "name", d)) for d in descriptors)
            raise PlanError(
                f"{self}: the model updates are broadcast as {declared}; broadcast them as the served model's state: "
                "updates.broadcast(fk.ml.SERVED_MODEL)"
            )
        updates = {f.name: f.dtype for f in broadcast_schema.fields} if broadcast_schema is not None else {}
        if updates.get("version") != "string" or updates.get("model") != "binary":
            got = ", ".join(f"{k} {v}" for k, v in updates.items()) or "unknown"
            raise PlanError(
                f"{self}: model updates are rows of {MODEL_UPDATE_SCHEMA} (fk.ml.model_row makes them); "
                f"the broadcast stream has {got}"
            )
        return Schema((*input_schema.fields, Field(self.output, self.output_type), Field(self.version_column, "string")))

    # -- the broadcast process function ----------------------------------------------------------

    def process_broadcast_element(self, value: Any, ctx: Any) -> None:
        """Serve the update's model from now on, or reject it (side output) and keep the current one."""
        served = ctx.get_broadcast_state(SERVED_MODEL)
        version, data = value.get("version"), value.get("model")
        try:
            digest = self._load(version, data)
        except _Rejected as e:
            reason = str(e)
            serving = served.get("version") if served.contains("version") else self.initial_version
            log.warning("fk.ml.serve: model update %r rejected, %r goes on serving: %s", version, serving, reason)
            ctx.output(REJECTED_MODELS, {"version": version, "reason": reason, "serving": serving})
            return
        served.put_all({"version": version, "model": bytes(data), "digest": digest})

    def process_element(self, value: Any, ctx: Any) -> Iterator[dict[str, Any]]:
        """The row with its score and the version of the model that scored it."""
        row = dict(value)
        x = _features(row, self.features)
        version, scorer = self._current(ctx.get_broadcast_state(SERVED_MODEL))
        if x is None or scorer is None:
            yield {**row, self.output: None, self.version_column: None}
            return
        import numpy as np

        (score,) = scorer._column(np.asarray([x], dtype="float64"))
        yield {**row, self.output: _plain(score), self.version_column: version}

    def process_elements(self, values: list[Any], ctx: Any) -> list[list[dict[str, Any]]]:
        """The rows of a micro-batch that come after its model updates, scored in one call of the model
        (``process_element``'s result for each, as the broadcast operator asks of a vectorized function)."""
        import numpy as np

        version, scorer = self._current(ctx.get_broadcast_state(SERVED_MODEL))
        rows = [dict(v) for v in values]
        xs = [_features(row, self.features) for row in rows]
        scorable = [i for i, x in enumerate(xs) if x is not None] if scorer is not None else []
        scores: dict[int, Any] = {}
        if scorable:
            column = scorer._column(np.asarray([xs[i] for i in scorable], dtype="float64"))
            scores = dict(zip(scorable, column, strict=True))
        out = []
        for i, row in enumerate(rows):
            if i in scores:
                out.append([{**row, self.output: _plain(scores[i]), self.version_column: version}])
            else:
                out.append([{**row, self.output: None, self.version_column: None}])
        return out

    def _current(self, served: Any) -> tuple[str | None, Predict | None]:
        """The version and scorer in force: the last update's, else the initial model's."""
        digest = served.get("digest")
        if digest is None:
            return self.initial_version, self.initial
        scorer = _DECODED.get(self._cache_key(digest))
        if scorer is None:  # a fresh worker, or a job resumed from a savepoint: load it again
            try:
                self._load(served.get("version"), served.get("model"))
            except _Rejected as e:
                raise RuntimeError(
                    f"{self}: the served model {served.get('version')!r} in broadcast state no longer loads: {e}"
                ) from None
            scorer = _DECODED[self._cache_key(digest)]
        else:
            _DECODED.move_to_end(self._cache_key(digest))
        return served.get("version"), scorer

    def _cache_key(self, digest: str) -> tuple[Any, ...]:
        return (digest, self.features, self.method, self.output, self.output_type)

    def _load(self, version: Any, data: Any) -> str:
        """Check an update and keep its scorer in the worker's cache; returns its digest."""
        if not isinstance(version, str) or not version:
            raise _Rejected(f"the update has no version (got {version!r})")
        if not isinstance(data, (bytes, bytearray, memoryview)) or not len(data):
            raise _Rejected("the update has no model bytes")
        data = bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        key = self._cache_key(digest)
        if key in _DECODED:
            return digest
        model = _decode(data)
        try:
            scorer = Predict(model, self.features, self.output, self.method)
        except Exception as e:  # noqa: BLE001 (a bad update is data: PlanError says what is wrong, else the error does)
            reason = str(e).removeprefix("fk.ml.predict: ") if isinstance(e, PlanError) else f"{type(e).__name__}: {e}"
            raise _Rejected(reason) from None
        try:
            given = scorer.output_type
        except PlanError as e:
            raise _Rejected(str(e).removeprefix("fk.ml.predict: ")) from None
        if given != self.output_type:
            raise _Rejected(
                f"{type(scorer.model).__name__} gives {given} scores; the score column {self.output!r} is {self.output_type}"
            )
        import numpy as np

        try:  # a probe row: catches what no attribute tells, e.g. another number of features
            scorer._column(np.zeros((1, len(self.features))))
        except Exception as e:  # noqa: BLE001 (a bad update is data, never the reason the job fails)
            cause = e.__cause__ if isinstance(e, RuntimeError) and e.__cause__ is not None else e
            raise _Rejected(
                f"{type(scorer.model).__name__} fails on a row of {len(self.features)} features: {type(cause).__name__}: {cause}"
            ) from None
        _DECODED[key] = scorer
        while len(_DECODED) > _DECODED_KEPT:
            _DECODED.popitem(last=False)
        return digest


def _decode(data: bytes) -> Any:
    """The model object an update carries: its pickle, or an ONNX model's bytes."""
    if data[:1] == _PICKLE:
        try:
            return pickle.loads(data)
        except Exception as e:  # noqa: BLE001 (unpickling raises anything; a bad update is data)
            raise _Rejected(f"the model bytes do not unpickle: {type(e).__name__}: {e}") from None
    try:
        import onnx
    except ImportError:
        raise _Rejected(
            "the model bytes are no pickle (protocol 2+), and onnx is not installed to read them as an ONNX model: "
            "pip install 'funke[ml]'"
        ) from None
    try:
        proto = onnx.ModelProto.FromString(data)
        onnx.checker.check_model(proto)
    except Exception as e:  # noqa: BLE001 (protobuf and the checker raise their own errors; a bad update is data)
        raise _Rejected(
            f"the model bytes are neither a pickle (protocol 2+) nor an ONNX model: {type(e).__name__}: {e}"
        ) from None
    return proto


def _plain(v: Any) -> Any:
    """A score as a Python value (numpy scalars are not Spark values); NaN is null."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v
