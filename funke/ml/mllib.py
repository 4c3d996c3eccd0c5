"""``fk.ml.predict`` with a fitted Spark MLlib model: scored in the JVM by the model's own ``transform``.

No row goes to Python and nothing is pickled: funke's compiler calls ``spark_transform`` on the
stream's DataFrame (streaming or bounded) while it builds the query, and Spark runs the model's
stages inside that query. pyspark is imported inside the functions that need it (a fitted model
means a SparkContext in this process already).

What ``features=`` are given to (decided from the stages' column parameters, before the job runs):

* the model reads one vector column (a model's ``featuresCol``; for a ``PipelineModel``, the one
  column its stages read that no stage makes, e.g. a ``StandardScalerModel``'s ``inputCol``): the
  features are assembled into it, in the order given (``VectorAssembler``);
* a ``PipelineModel`` whose stages read raw columns themselves (through ``inputCol``/``inputCols``,
  e.g. its own ``VectorAssembler`` or ``Imputer``): ``features=`` names exactly those columns, and
  they are given as they are. (A one-feature pipeline whose first stage wants a vector in a column
  of the feature's name is read this way too: name that vector column otherwise.)

The score is the last stage's ``predictionCol`` (``double``; ``int`` for a clustering model) or,
with ``method="predict_proba"``, its ``probabilityCol`` as an ``array<double>``
(``vector_to_array``). While the stages run, the stream's columns are kept aside under private
names, so the model's own columns (``features``, ``rawPrediction``...) never clash with the stream's;
only the score is added.

A row with a null or NaN feature gets a null score, as with other models: the model is given 0 in
its place (so a stage that refuses nulls, such as a ``VectorAssembler`` with the default
``handleInvalid="error"``, does not fail the job) and its output for that row is replaced by null.

Refused while the job is built: an estimator that is not fitted (``LinearRegression()``,
``Pipeline``), a last stage that gives no prediction from a features vector (``VectorAssembler``,
``ALSModel``), ``OneVsRestModel`` (its ``transform`` caches its input, which Spark refuses on a
streaming DataFrame), stages whose input columns are not parameters (``RFormulaModel``,
``SQLTransformer``), and a feature count other than the model's. A stage Spark refuses on the
stream's DataFrame is named when the job is compiled.

Spark Connect: a model fitted through a Connect session lives in the server, and scores a job run
on that session the same way, streaming and bounded (``tests/spark/test_connect.py``).

Example (with a SparkSession; ``tests/spark/test_ml_spark.py`` runs the like)::

    train = VectorAssembler(inputCols=["a", "b"], outputCol="features").transform(history)
    model = LinearRegression(labelCol="y").fit(train)
    scored = stream.map(fk.ml.predict(model, ["a", "b"], "y_hat"))  # the stream's columns, then y_hat double
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from funke.errors import PlanError, UnsupportedError
from funke.ml.predict import check_names, scored_schema
from funke.plan.types import Schema

#: The stream's columns are kept aside under these names (and a number) while the model's stages run.
KEPT = "__funke_ml_"
#: The parameters through which a stage reads columns, and those through which it adds them.
READS = ("featuresCol", "inputCol", "inputCols")
MAKES = ("outputCol", "outputCols", "predictionCol", "rawPredictionCol", "probabilityCol", "varianceCol", "leafCol")


class MLlibPredict:
    """What ``fk.ml.predict`` gives for a Spark MLlib model; the compiler calls ``spark_transform``."""

    #: ``DataStream.map`` marks it vectorized; it never runs in Python.
    vectorized = True
    #: How ``explain()`` shows it (``funke.plan.capabilities``).
    explain_form = "JVM"

    def __init__(self, model: Any, features: tuple[str, ...], output: str, method: str) -> None:
        from pyspark.ml import Estimator, Transformer
        from pyspark.ml.classification import OneVsRestModel
        from pyspark.ml.feature import RFormulaModel, SQLTransformer

        check_names(features, output)
        name = type(model).__name__
        if isinstance(model, Estimator):
            raise PlanError(
                f"fk.ml.predict: {name} is a Spark MLlib estimator, not a fitted model; give the model {name}.fit(df) returns"
            )
        if not isinstance(model, Transformer):
            raise PlanError(f"fk.ml.predict: {name} is not a fitted Spark MLlib model (a pyspark.ml Model or PipelineModel)")
        self.model, self.features, self.output, self.method = model, features, output, method
        self.stages = _stages(model)
        self.kind = "spark-mllib"
        for s in self.stages:
            if isinstance(s, OneVsRestModel):
                raise UnsupportedError(
                    f"{self}: its stage {type(s).__name__} cannot score a stream (its transform caches its input, which Spark "
                    "refuses on a streaming DataFrame); score with each binary model, or use a classifier that is multiclass itself"
                )
            if isinstance(s, (RFormulaModel, SQLTransformer)):
                raise UnsupportedError(
                    f"{self}: its stage {type(s).__name__} reads columns named in a formula or statement, so funke cannot tell what "
                    "features= are given to; build the features with VectorAssembler (or select them) before the model"
                )
        last = self.stages[-1]
        if not (last.hasParam("featuresCol") and last.hasParam("predictionCol")):
            raise PlanError(
                f"{self}: its last stage {type(last).__name__} gives no prediction from a features vector (no featuresCol and "
                "predictionCol); funke scores with models such as LinearRegressionModel, LogisticRegressionModel, KMeansModel"
            )
        if method == "predict":
            self.score_column = last.getOrDefault("predictionCol")
            self.output_type = "int" if type(last).__module__ == "pyspark.ml.clustering" else "double"
        elif method == "predict_proba":
            if not last.hasParam("probabilityCol"):
                raise PlanError(f"{self}: {type(last).__name__} gives no probabilities (no probabilityCol); use method='predict'")
            self.score_column, self.output_type = last.getOrDefault("probabilityCol"), "array<double>"
        else:
            raise PlanError(
                f"{self}: a Spark MLlib model gives its predictionCol (method='predict') or its probabilityCol "
                f"(method='predict_proba'), not {method!r}"
            )
        self.vector = self._vector_column()

    def __repr__(self) -> str:
        return f"predict({type(self.model).__name__}.{self.method}({', '.join(self.features)}) -> {self.output})"

    @property
    def explain_why(self) -> str:
        """``explain()``'s why for this map."""
        names = ", ".join(type(s).__name__ for s in self.stages)
        given = f"features assembled into vector column {self.vector!r}" if self.vector else "features given as the raw columns"
        return (
            f"Spark MLlib in the JVM: the stages {names} transform the stream's DataFrame ({given}); no Python, nothing pickled"
        )

    def _vector_column(self) -> str | None:
        """The vector column the features are assembled into, or None when the stages read them raw."""
        reads: dict[str, tuple[Any, str]] = {}
        made: set[str] = set()
        for s in self.stages:
            for p in READS:
                if s.hasParam(p) and s.isDefined(p):
                    for c in _names(s.getOrDefault(p)):
                        if c not in made:
                            reads.setdefault(c, (s, p))
            made.update(c for p in MAKES if s.hasParam(p) and s.isDefined(p) for c in _names(s.getOrDefault(p)))
        if len(reads) == 1:
            column, (reader, param) = next(iter(reads.items()))
            if param == "featuresCol" or column not in self.features:
                width = _width(reader)
                if width is not None and width != len(self.features):
                    raise PlanError(
                        f"{self}: {type(reader).__name__} was fitted on {width} features; features= names {len(self.features)}"
                    )
                return column
        if set(reads) == set(self.features):
            return None
        raise PlanError(
            f"{self}: the model reads the columns {', '.join(reads) or '(none)'} (its stages' featuresCol/inputCol/inputCols); "
            "features= must name exactly these when its stages read raw columns, or the model must read one vector column, "
            "which funke assembles the features into"
        )

    def output_schema(self, input_schema: Schema | None) -> Schema:
        """The input's columns, then the score (``DataStream.map`` calls this)."""
        return scored_schema(self, input_schema)

    def spark_transform(self, df: Any) -> Any:
        """``df`` (a Spark DataFrame, streaming or not) with the score added as column ``output``."""
        from pyspark.ml.feature import VectorAssembler
        from pyspark.ml.functions import vector_to_array
        from pyspark.sql import functions as F

        floats = {f.name for f in df.schema.fields if f.dataType.typeName() in ("float", "double")}

        def missing(c: Any, feature: str) -> Any:
            return F.isnull(c) | F.isnan(c) if feature in floats else F.isnull(c)

        kept = {c: f"{KEPT}{i}" for i, c in enumerate(df.columns)}
        # raw columns go by their names; those assembled by private ones (the vector may bear a feature's name)
        if self.vector is None:
            given = {f: f for f in self.features}
        else:
            given = {f: f"{KEPT}f{i}" for i, f in enumerate(self.features)}
        filled = [
            F.when(missing(F.col(f), f), F.lit(0).cast(df.schema[f].dataType)).otherwise(F.col(f)).alias(g)
            for f, g in given.items()
        ]
        frame = df.select(*(F.col(c).alias(k) for c, k in kept.items()), *filled)
        if self.vector is not None:
            assembler = VectorAssembler(inputCols=list(given.values()), outputCol=self.vector)
            frame = assembler.transform(frame).select(*kept.values(), self.vector)
        for s in self.stages:
            try:
                frame = s.transform(frame)
            except Exception as e:
                first = str(e).strip().split("\n")[0]
                where = "a streaming DataFrame" if df.isStreaming else "the DataFrame"
                raise PlanError(f"{self}: its stage {type(s).__name__} cannot run on {where}: {first}") from e
        got = frame.schema[self.score_column].dataType.simpleString()
        if got != ("vector" if self.method == "predict_proba" else self.output_type):
            raise PlanError(f"{self}: {self.score_column} is {got}, not the {self.output_type} funke declared for it")
        score = (
            vector_to_array(F.col(self.score_column), "float64") if self.method == "predict_proba" else F.col(self.score_column)
        )
        unscored = reduce(lambda a, b: a | b, (missing(F.col(kept[f]), f) for f in self.features))
        back = (F.col(k).alias(c) for c, k in kept.items())
        return frame.select(*back, F.when(unscored, F.lit(None)).otherwise(score).alias(self.output))

    def __call__(self, df: Any) -> Any:
        """The same as ``spark_transform``: scores a Spark DataFrame outside a funke job too."""
        return self.spark_transform(df)

    def __reduce__(self) -> Any:
        raise TypeError(f"{self} runs in the JVM with the query and is never pickled (its model is a JVM object)")


def _stages(model: Any) -> list[Any]:
    """The transformers the model runs, in order (pipelines flattened, a tuning model's best model)."""
    from pyspark.ml import PipelineModel
    from pyspark.ml.tuning import CrossValidatorModel, TrainValidationSplitModel

    if isinstance(model, (CrossValidatorModel, TrainValidationSplitModel)):
        return _stages(model.bestModel)
    if isinstance(model, PipelineModel):
        if not model.stages:
            raise PlanError("fk.ml.predict: the PipelineModel has no stages")
        return [s for stage in model.stages for s in _stages(stage)]
    return [model]


def _names(value: Any) -> list[str]:
    names = [value] if isinstance(value, str) else list(value or ())
    return [c for c in names if c]


def _width(stage: Any) -> int | None:
    """How many features the stage reading the assembled vector was fitted on, where it says."""
    from pyspark.ml.base import PredictionModel
    from pyspark.ml.feature import StandardScalerModel

    if isinstance(stage, PredictionModel):
        n = stage.numFeatures
    elif isinstance(stage, StandardScalerModel):
        n = stage.std.size
    else:
        return None
    return n if n > 0 else None
