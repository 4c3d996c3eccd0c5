"""Scoring a stream with a fitted model: ``stream.map(fk.ml.predict(model, features=[...]))``.

Models: a scikit-learn estimator (anything with the method named by ``method``: ``predict``,
``predict_proba``, ``decision_function``, ``transform``... fitted), an ONNX model (an
``onnx.ModelProto``, or the path of a ``.onnx`` file) when ``onnxruntime`` is installed, or a fitted
Spark MLlib model (a ``pyspark.ml`` model such as ``LinearRegressionModel`` or
``LogisticRegressionModel``, or a ``PipelineModel``).

A scikit-learn or ONNX model scores whole Arrow batches at once (one ``predict`` call per batch of
up to 10,000 rows, on a numpy matrix of the feature columns), never row by row: on Spark a scalar
Arrow UDF over the feature columns alone, so the stream's other columns never leave the JVM. It is
pickled with the job, as any function of a ``map`` is, and does not change while the job runs.

A Spark MLlib model runs in the JVM, inside the query: the features are assembled into the vector
column it reads (or, for a ``PipelineModel`` whose stages read raw columns, given as they are), its
``transform`` adds its columns, and its ``predictionCol`` (``probabilityCol`` with
``method="predict_proba"``, as ``array<double>``) becomes the score. Nothing goes to Python and
nothing is pickled (``funke.ml.mllib`` has the details and what is refused).

A row with a null (or NaN) feature is not scored: its output is null, and the others in its
batch are scored as usual. A model that fails on a batch fails the job, naming the model.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from funke.errors import PlanError
from funke.plan.types import Field, Schema

if TYPE_CHECKING:
    from funke.ml.mllib import MLlibPredict

__all__ = ["Predict", "predict"]

#: Spark types a feature column may have: numbers and booleans, given to the model as float64.
NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "boolean")


def predict(model: Any, features: Sequence[str], output: str = "score", *, method: str = "predict") -> Predict | MLlibPredict:
    """A vectorized ``map`` function adding ``model``'s score of ``features`` as column ``output``.

    ``method``: the scikit-learn method to call (``predict_proba`` gives each class's probability
    as an ``array<double>``). For an ONNX model, ``method`` is ignored and refused if given. For a
    Spark MLlib model, ``predict`` (its ``predictionCol``) or ``predict_proba`` (its ``probabilityCol``).
    """
    if is_mllib(model):
        from funke.ml.mllib import MLlibPredict

        return MLlibPredict(model, tuple(features), output, method)
    return Predict(model, tuple(features), output, method)


def is_mllib(model: Any) -> bool:
    """A pyspark.ml object (fitted or not): ``funke.ml.mllib`` scores it in the JVM or says why not."""
    return not isinstance(model, type) and type(model).__module__.startswith("pyspark.ml")


def check_features(call: str, features: tuple[str, ...]) -> None:
    """Refuse a ``features=`` that cannot name columns: none, an empty or non-string name, a name twice
    (``call`` names the function in the error: ``fk.ml.predict``, ``fk.ml.online``, ``fk.ml.serve``)."""
    if not features or not all(isinstance(f, str) and f for f in features):
        raise PlanError(f"{call}: features= takes the names of the feature columns, got {features!r}")
    if len(set(features)) != len(features):
        raise PlanError(f"{call}: a feature column is named twice in {list(features)}")


def row_features(row: Any, names: tuple[str, ...]) -> list[float] | None:
    """A row's features (a dict's ``names``) as floats, or None when one is null or NaN."""
    x = []
    for name in names:
        v = row.get(name)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        x.append(float(v))
    return x


def check_names(features: tuple[str, ...], output: str) -> None:
    """Refuse what cannot name columns: no features, a feature twice, an empty output name."""
    check_features("fk.ml.predict", features)
    if not isinstance(output, str) or not output:
        raise PlanError(f"fk.ml.predict: output= takes the name of the score column, got {output!r}")


def feature_types(owner: Any, features: Sequence[str], input_schema: Schema | None) -> dict[str, str | None]:
    """The stream's column types, once ``features`` are checked to be columns of numbers or booleans
    (``owner`` names the function in the errors)."""
    if input_schema is None:
        raise PlanError(f"{owner}: the stream's columns are not known, so the features cannot be checked")
    types = {f.name: f.dtype for f in input_schema.fields}
    missing = [f for f in features if f not in types]
    if missing:
        raise PlanError(f"{owner}: no column {', '.join(missing)} in the stream (columns: {', '.join(types)})")
    wrong = [f"{f} ({types[f]})" for f in features if types[f] not in NUMERIC]
    if wrong:
        raise PlanError(f"{owner}: features must be numbers or booleans; {', '.join(wrong)} are not (cast them first)")
    return types


def scored_schema(scorer: Predict | MLlibPredict, input_schema: Schema | None) -> Schema:
    """The input's columns, then the score: the features checked (present, numbers or booleans)."""
    types = feature_types(scorer, scorer.features, input_schema)
    assert input_schema is not None
    if scorer.output in types:
        raise PlanError(f"{scorer}: the stream already has a column {scorer.output!r}; name the score otherwise (output=...)")
    return Schema((*input_schema.fields, Field(scorer.output, scorer.output_type)))


class Predict:
    """The function ``predict`` gives; ``DataStream.map`` asks it for its output schema."""

    #: ``DataStream.map`` runs it over pandas DataFrames (``vectorized=True``).
    vectorized = True
    #: How ``explain()`` shows it (``funke.plan.capabilities``).
    explain_form = "Arrow batches"
    explain_why = (
        "Spark scalar Arrow UDF over the feature columns alone (the others stay in the JVM); one model call per Arrow batch"
    )

    def __init__(self, model: Any, features: tuple[str, ...], output: str, method: str) -> None:
        check_names(features, output)
        self.features, self.output, self.method = features, output, method
        self.model = _onnx(model, method, len(features)) or _sklearn(model, method, len(features))
        self.kind = "onnx" if isinstance(self.model, OnnxModel) else "scikit-learn"

    def __repr__(self) -> str:
        return f"predict({type(self.model).__name__}.{self.method}({', '.join(self.features)}) -> {self.output})"

    @property
    def output_type(self) -> str:
        """The score column's Spark type, from what the model gives."""
        if isinstance(self.model, OnnxModel):
            return self.model.output_type
        if self.method == "predict":
            classes = getattr(self.model, "classes_", None)
            if classes is not None:  # a classifier: its labels' type
                return _spark_type(getattr(classes, "dtype", None), f"the labels of {self}")
            return "double"
        if self.method in ("predict_proba", "predict_log_proba", "transform"):
            return "array<double>"
        return "double"

    def output_schema(self, input_schema: Schema | None) -> Schema:
        """The input's columns, then the score (``DataStream.map`` calls this)."""
        return scored_schema(self, input_schema)

    def __call__(self, frame: Any) -> Any:
        """A pandas DataFrame with the score added (what ``map(..., vectorized=True)`` calls)."""
        import numpy as np

        out = frame.copy()
        out[self.output] = self._column(frame[list(self.features)].to_numpy(dtype="float64", na_value=np.nan))
        return out

    @property
    def inputs(self) -> tuple[str, ...]:
        """The columns ``arrow_column`` reads: on Spark only they go to Python, the rest stay in the JVM."""
        return self.features

    def arrow_column(self, *arrays: Any) -> Any:
        """The score column of a batch, from its feature columns (Arrow arrays; funke runs this on
        Spark as a scalar Arrow UDF, without pandas)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        x = np.column_stack([pc.cast(a, pa.float64()).to_numpy(zero_copy_only=False) for a in arrays])
        types = {
            "double": pa.float64(),
            "bigint": pa.int64(),
            "boolean": pa.bool_(),
            "string": pa.string(),
            "array<double>": pa.list_(pa.float64()),
        }
        return pa.array(self._column(x), type=types[self.output_type], from_pandas=True)

    def _column(self, x: Any) -> Any:
        """The scores of the rows of matrix ``x``; None where a row has a NaN (a null feature)."""
        import numpy as np

        complete = ~np.isnan(x).any(axis=1)
        if complete.all():
            scores = self._score(x)
            return scores if isinstance(scores, np.ndarray) and scores.dtype.kind == "f" else list(scores)
        column: list[Any] = [None] * len(x)
        for i, s in zip(np.flatnonzero(complete), self._score(x[complete]) if complete.any() else [], strict=True):
            column[i] = s
        return column

    def _score(self, x: Any) -> Any:
        if not len(x):
            return []
        try:
            got = self.model.run(x) if isinstance(self.model, OnnxModel) else getattr(self.model, self.method)(x)
        except Exception as e:
            raise RuntimeError(f"{self} failed on a batch of {len(x)} rows: {type(e).__name__}: {e}") from e
        if getattr(got, "ndim", 1) == 2:
            if self.output_type.startswith("array"):
                return [list(row) for row in got.astype("float64")]
            if got.shape[1] != 1:
                raise RuntimeError(f"{self} gave {got.shape[1]} values a row; a score column takes one")
            got = got[:, 0]
        return got


def _sklearn(model: Any, method: str, width: int) -> Any:
    if isinstance(model, type):
        raise PlanError(f"fk.ml.predict: give a fitted model, not the class {model.__name__}")
    if is_mllib(model):  # (fk.ml.predict gives it to funke.ml.mllib; this is for models run in Python)
        raise PlanError(
            f"fk.ml.predict: {type(model).__name__} is a Spark MLlib model: it holds a JVM object, so it scores in the JVM "
            "(stream.map(fk.ml.predict(model, ...))), not as a Python model pickled to the workers"
        )
    if not callable(getattr(model, method, None)):
        raise PlanError(f"fk.ml.predict: {type(model).__name__} has no method {method}()")
    n = getattr(model, "n_features_in_", None)
    if n is None and hasattr(model, "fit") and type(model).__module__.startswith("sklearn"):
        from sklearn.exceptions import NotFittedError
        from sklearn.utils.validation import check_is_fitted

        try:
            check_is_fitted(model)
        except NotFittedError as e:
            raise PlanError(f"fk.ml.predict: {type(model).__name__} is not fitted: {e}") from None
    if n is not None and n != width:
        raise PlanError(f"fk.ml.predict: {type(model).__name__} was fitted on {n} features; features= names {width}")
    return model


def _spark_type(dtype: Any, what: str) -> str:
    kind = getattr(dtype, "kind", None)
    if kind == "b":
        return "boolean"
    if kind in ("i", "u"):
        return "bigint"
    if kind == "f":
        return "double"
    if kind in ("U", "S", "O"):
        return "string"
    raise PlanError(f"fk.ml.predict: {what} are of numpy type {dtype}, which funke cannot give as a column")


class OnnxModel:
    """An ONNX model in onnxruntime: one float input of shape (rows, features), the first output."""

    def __init__(self, data: bytes, width: int) -> None:
        self.data, self.width = data, width
        self._session: Any = None
        session = self.session()
        inputs, outputs = session.get_inputs(), session.get_outputs()
        if len(inputs) != 1:
            raise PlanError(f"fk.ml.predict: the ONNX model takes {len(inputs)} inputs; funke gives it one (rows x features)")
        shape = inputs[0].shape
        if len(shape) == 2 and isinstance(shape[1], int) and shape[1] != width:
            raise PlanError(f"fk.ml.predict: the ONNX model takes {shape[1]} features; features= names {width}")
        self.input, self.float32 = inputs[0].name, inputs[0].type == "tensor(float)"
        out = outputs[0]
        two = len(out.shape) == 2 and out.shape[1] not in (1,)
        self.output_type = "array<double>" if two else _onnx_type(out.type)

    def session(self) -> Any:
        if self._session is None:
            import onnxruntime

            self._session = onnxruntime.InferenceSession(self.data, providers=["CPUExecutionProvider"])
        return self._session

    def run(self, x: Any) -> Any:
        return self.session().run(None, {self.input: x.astype("float32" if self.float32 else "float64")})[0]

    def __getstate__(self) -> dict[str, Any]:
        return {
            "data": self.data,
            "width": self.width,
            "input": self.input,
            "float32": self.float32,
            "output_type": self.output_type,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._session = None


def _onnx_type(tensor: str) -> str:
    if "float" in tensor or "double" in tensor:
        return "double"
    if "int" in tensor:
        return "bigint"
    if "bool" in tensor:
        return "boolean"
    if "string" in tensor:
        return "string"
    raise PlanError(f"fk.ml.predict: the ONNX model gives {tensor}, which funke cannot give as a column")


def _onnx(model: Any, method: str, width: int) -> OnnxModel | None:
    data: bytes | None = None
    if isinstance(model, (str, os.PathLike)) and str(model).endswith(".onnx"):
        with open(model, "rb") as f:
            data = f.read()
    elif type(model).__name__ == "ModelProto" and type(model).__module__.startswith("onnx"):
        data = model.SerializeToString()
    if data is None:
        return None
    if method != "predict":
        raise PlanError("fk.ml.predict: an ONNX model gives its first output; method= is for scikit-learn models")
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise PlanError("fk.ml.predict: ONNX models need onnxruntime: pip install 'funke[ml]'") from None
    return OnnxModel(data, width)
