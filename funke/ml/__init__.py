"""Machine learning on streams (issue 18): ``fk.ml.predict`` scores rows with a fitted model.

>>> import funke as fk
>>> fk.ml.predict  # doctest: +ELLIPSIS
<function predict at ...>
"""

from funke.ml.predict import Predict, predict

__all__ = ["Predict", "predict"]
