"""PyFlink's ``Configuration``: string keys and values, typed getters and setters.

>>> c = Configuration()
>>> c.set_integer("parallelism.default", 4).get_integer("parallelism.default", 1)
4
>>> c.get_string("missing", "x"), c.contains_key("parallelism.default")
('x', True)
"""

from __future__ import annotations

from typing import Any

__all__ = ["Configuration"]


class Configuration:
    def __init__(self, other: Configuration | None = None) -> None:
        self._data: dict[str, str] = dict(other._data) if other is not None else {}

    def _set(self, key: str, value: Any) -> Configuration:
        self._data[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def get_string(self, key: str, default_value: str | None = None) -> str | None:
        return self._data.get(key, default_value)

    def set_string(self, key: str, value: str) -> Configuration:
        return self._set(key, value)

    def get_integer(self, key: str, default_value: int) -> int:
        return int(self._data[key]) if key in self._data else default_value

    def set_integer(self, key: str, value: int) -> Configuration:
        return self._set(key, value)

    def get_boolean(self, key: str, default_value: bool) -> bool:
        return self._data[key].lower() == "true" if key in self._data else default_value

    def set_boolean(self, key: str, value: bool) -> Configuration:
        return self._set(key, value)

    def get_float(self, key: str, default_value: float) -> float:
        return float(self._data[key]) if key in self._data else default_value

    def set_float(self, key: str, value: float) -> Configuration:
        return self._set(key, value)

    def get_bytearray(self, key: str, default_value: bytes) -> bytes:
        return self._data[key].encode() if key in self._data else default_value

    def set_bytearray(self, key: str, value: bytes) -> Configuration:
        return self._set(key, value.decode())

    get_long, set_long, get_double, set_double = get_integer, set_integer, get_float, set_float

    def key_set(self) -> set[str]:
        return set(self._data)

    def add_all_to_dict(self, target_dict: dict[str, Any]) -> None:
        target_dict.update(self._data)

    def add_all(self, other: Configuration, prefix: str | None = None) -> Configuration:
        for k, v in other._data.items():
            self._data[(prefix or "") + k] = v
        return self

    def contains_key(self, key: str) -> bool:
        return key in self._data

    def to_dict(self) -> dict[str, str]:
        return dict(self._data)

    def remove_config(self, key: str) -> bool:
        return self._data.pop(key, None) is not None

    def set(self, key: str, value: Any) -> Configuration:
        return self._set(getattr(key, "key", key), value)

    def get(self, key: Any, default_value: Any = None) -> Any:
        return self._data.get(getattr(key, "key", key), default_value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Configuration) and self._data == other._data

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data.items())))
