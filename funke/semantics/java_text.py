"""Values as Flink's Java runtime writes them (its ``toString``): what PyFlink and Flink SQL's ``print``
print for a FLOAT or DOUBLE. A small module of its own: PyFlink's type information imports it on every
Spark worker, where importing ``funke.table`` would cost half a second.
"""

from __future__ import annotations

import decimal
import math


def java_float(value: float, *, single: bool) -> str:
    """Java's ``Double.toString`` / ``Float.toString``: the shortest digits that read back, as
    ``1.0`` / ``0.001`` between 10^-3 and 10^7, else ``1.0E8`` / ``1.0E-4``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if single:
        import numpy as np

        shortest = str(np.float32(value))  # numpy's shortest digits that read back as this float32
    else:
        shortest = repr(float(value))
    sign, digits, exponent = decimal.Decimal(shortest).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    exponent += len(digits) - len(text)  # (trailing zeros dropped)
    first = exponent + len(text) - 1  # the power of ten of the first digit
    minus = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if first >= 0:
            head, tail = text[: first + 1].ljust(first + 1, "0"), text[first + 1 :]
        else:
            head, tail = "0", "0" * (-first - 1) + text
        return f"{minus}{head}.{tail or '0'}"
    return f"{minus}{text[0]}.{text[1:] or '0'}E{first}"


def java_order(text: str) -> bytes:
    """A sort key of Java's order of strings (``String.compareTo``: by UTF-16 code units, so a character past
    U+FFFF sorts before U+FFFF), the order Flink's JSON_OBJECT and JSON_OBJECTAGG write their keys in.

    >>> sorted(["b", "\uffff", "a", "\U0001f600", "B"], key=java_order) == ["B", "a", "b", "\U0001f600", "\uffff"]
    True
    """
    return text.encode("utf-16-be")
