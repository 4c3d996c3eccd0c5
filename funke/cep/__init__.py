"""``funke.cep``: Flink's complex event processing, its Pattern API in snake_case.

>>> from funke.cep import Pattern, NFA
>>> pattern = Pattern.begin("a").where(lambda e: e.startswith("a")).one_or_more().followed_by("b").where(lambda e: e == "b")
>>> nfa = NFA.compile(pattern)
>>> state = nfa.initial_state()
>>> out = [m for t, e in enumerate(["a1", "c", "a2", "b"]) for m in nfa.process(state, e, t).matches]
>>> [(m["a"], m["b"]) for m in out]
[(['a1', 'a2'], ['b']), (['a1'], ['b']), (['a2'], ['b'])]

On a keyed stream, ``CEP.pattern(keyed, pattern)`` gives a :class:`PatternStream` (a third
argument, ``comparator(a, b) -> int``, orders events with the same timestamp); its
``process(PatternProcessFunction)``, ``select(fn)`` and ``flat_select(fn)`` give the matches
as rows, on Spark (see ``funke.cep.stream``). ``CEP`` and ``PatternStream`` are imported on
first use, so a Spark worker that unpickles a pattern does not import the DataStream API.
"""

from typing import TYPE_CHECKING, Any

from funke.cep.pattern import Pattern
from funke.semantics.cep import (
    NFA,
    AfterMatchSkipStrategy,
    CepOutput,
    Condition,
    IterativeCondition,
    MalformedPatternError,
    NFAState,
    PatternContext,
    SimpleCondition,
    SkipStrategyError,
    iterative,
)
from funke.semantics.cep_operator import (
    PatternProcessContext,
    PatternProcessFunction,
    TimedOutPartialMatchHandler,
)

if TYPE_CHECKING:
    from funke.cep.stream import CEP, PatternStream

__all__ = [
    "CEP",
    "NFA",
    "AfterMatchSkipStrategy",
    "CepOutput",
    "Condition",
    "IterativeCondition",
    "MalformedPatternError",
    "NFAState",
    "Pattern",
    "PatternContext",
    "PatternProcessContext",
    "PatternProcessFunction",
    "PatternStream",
    "SimpleCondition",
    "SkipStrategyError",
    "TimedOutPartialMatchHandler",
    "iterative",
]


def __getattr__(name: str) -> Any:
    if name in ("CEP", "PatternStream"):
        from funke.cep import stream

        return getattr(stream, name)
    raise AttributeError(f"module 'funke.cep' has no attribute {name!r}")
