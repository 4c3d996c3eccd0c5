"""PyFlink's ``OutputTag(tag_id, type_info=None)``: names a side output (``yield tag, value``)."""

from __future__ import annotations

from typing import Any

from funke.semantics.functions import OutputTag as _FunkeTag

__all__ = ["OutputTag"]


class OutputTag(_FunkeTag):
    """A side output's name and the type of its values (a side output travels as pickled values).

    >>> tag = OutputTag("late")
    >>> (tag.tag_id, tag.name, tag.schema)
    ('late', 'late', 'value binary')
    """

    def __init__(self, tag_id: str, type_info: Any = None) -> None:
        object.__setattr__(self, "name", tag_id)
        object.__setattr__(self, "schema", "value binary")
        object.__setattr__(self, "type_info", type_info)
        self.__post_init__()

    @property
    def tag_id(self) -> str:
        return self.name

    def __reduce__(self) -> Any:
        return OutputTag, (self.name, self.type_info)

    def __repr__(self) -> str:
        return f"OutputTag({self.name!r})"
