"""``funke.cep``: Flink's complex event processing, its Pattern API in snake_case.

>>> from funke.cep import Pattern, NFA
>>> pattern = Pattern.begin("a").where(lambda e: e.startswith("a")).one_or_more().followed_by("b").where(lambda e: e == "b")
>>> nfa = NFA.compile(pattern)
>>> state = nfa.initial_state()
>>> out = [m for t, e in enumerate(["a1", "c", "a2", "b"]) for m in nfa.process(state, e, t).matches]
>>> [(m["a"], m["b"]) for m in out]
[(['a1', 'a2'], ['b']), (['a1'], ['b']), (['a2'], ['b'])]

Running a pattern on a keyed stream (``CEP.pattern(keyed, pattern)``) comes with the
Spark integration; the automaton (:class:`NFA`) is usable on its own already.
"""

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

__all__ = [
    "NFA",
    "AfterMatchSkipStrategy",
    "CepOutput",
    "Condition",
    "IterativeCondition",
    "MalformedPatternError",
    "NFAState",
    "Pattern",
    "PatternContext",
    "SimpleCondition",
    "SkipStrategyError",
    "iterative",
]
