"""Machine learning on streams (issue 18): ``fk.ml.predict`` scores rows with a fitted model;
``fk.ml.online`` keeps a model per key in keyed state, scoring each row and then learning from it.

>>> import funke as fk
>>> fk.ml.predict  # doctest: +ELLIPSIS
<function predict at ...>
"""

from funke.ml.online import OnlineModel, online
from funke.ml.predict import Predict, predict

__all__ = ["OnlineModel", "Predict", "online", "predict"]
