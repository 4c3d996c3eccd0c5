"""Machine learning on streams (issue 18): ``fk.ml.predict`` scores rows with a fitted model;
``fk.ml.online`` keeps a model per key in keyed state, scoring each row and then learning from it;
``fk.ml.serve`` scores rows with the model a stream of updates last sent, kept in broadcast state.

>>> import funke as fk
>>> fk.ml.predict  # doctest: +ELLIPSIS
<function predict at ...>
"""

from funke.ml.online import OnlineModel, online
from funke.ml.predict import Predict, predict
from funke.ml.serve import MODEL_UPDATE_SCHEMA, REJECTED_MODELS, SERVED_MODEL, ServedModel, model_row, serve

__all__ = [
    "MODEL_UPDATE_SCHEMA",
    "REJECTED_MODELS",
    "SERVED_MODEL",
    "OnlineModel",
    "Predict",
    "ServedModel",
    "model_row",
    "online",
    "predict",
    "serve",
]
