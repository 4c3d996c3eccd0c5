"""Telling a user's function that raises apart from funke's own code, on the Spark worker.

An exception whose innermost frames are the user's (a file that is neither funke's, nor the
standard library's, nor an installed package's; from the first such frame on, no funke frame)
is raised again as ``UserFunctionError``: "map(parse) [map-3f2a] raised ValueError: ...", then
the user's frames. Spark carries the worker's traceback to the driver as text, where
:mod:`funke.runtime.failures` finds that message and puts it first in the job's error.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from funke.errors import UserFunctionError

_FUNKE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARIES = tuple(
    {os.path.abspath(p) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib") if (p := sysconfig.get_paths().get(key))}
)
#: The file name funke's own generated code is compiled under (funke.spark.python_fns).
GENERATED = "<funke generated>"


def _is_funke(filename: str) -> bool:
    return filename == GENERATED or os.path.abspath(filename).startswith(_FUNKE)


def _is_user(filename: str) -> bool:
    if _is_funke(filename):
        return False
    return filename.startswith("<") or not os.path.abspath(filename).startswith(_LIBRARIES)


def _frames(tb: TracebackType | None) -> list[TracebackType]:
    out = []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def user_error(error: BaseException, operator: str) -> UserFunctionError | None:
    """``error`` as raised by a user's function in ``operator``, or None when it is not the user's."""
    frames = _frames(error.__traceback__)
    first = next((i for i, f in enumerate(frames) if _is_user(f.tb_frame.f_code.co_filename)), None)
    if first is None or any(_is_funke(f.tb_frame.f_code.co_filename) for f in frames[first:]):
        return None
    code = frames[first].tb_frame.f_code
    function = getattr(code, "co_qualname", code.co_name)
    headline = f"{function} in {operator} raised {type(error).__name__}: {error}".splitlines()[0]
    shown = traceback.StackSummary.extract((f.tb_frame, f.tb_lineno) for f in frames[first:])
    return UserFunctionError(headline + "\nthe function's frames (most recent call last):\n" + "".join(shown.format()).rstrip())


@contextmanager
def user_calls(operator: str) -> Iterator[None]:
    """Around code that calls users' functions: their exceptions become ``UserFunctionError``."""
    try:
        yield
    except UserFunctionError:
        raise
    except Exception as e:
        mine = user_error(e, operator)
        if mine is None:
            raise
        raise mine from e
