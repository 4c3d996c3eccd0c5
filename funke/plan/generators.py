"""Where a user ``WatermarkGenerator`` (``WatermarkStrategy.for_generator``) can drive time, checked at planning.

A generator's watermark reaches the operators downstream as control rows (the way a test
script's does), which only funke's general-path operators read; Spark's own windows and
joins know only Spark's watermark, so those operators go to the general path
(``GENERATED_TIME``). What funke cannot do exactly is refused here, before a job starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funke.errors import UnsupportedError
from funke.plan.nodes import Union, Watermark

if TYPE_CHECKING:
    from funke.plan.facts import PlanFacts

#: Why an operator downstream of a generator runs on the general path (explain(), capabilities).
GENERATED_TIME = "the watermark comes from a user WatermarkGenerator (for_generator), which Spark's watermark cannot follow"

#: How the generator itself runs (explain()).
GENERATOR_RUN = (
    "user WatermarkGenerator: one funke operator on transformWithStateInPandas sees every record of the stream in "
    "Spark's read order (on_event), then calls on_periodic_emit once per micro-batch; its watermark (never moving "
    "back, +infinity at the end of a finite input) reaches the operators downstream in the same micro-batch, after "
    "the batch's elements. Costs one Python pass over the whole stream in one task"
)


def check_generators(facts: PlanFacts) -> None:
    """Refuse what funke cannot run exactly with a generator's watermark, with what to do instead."""
    from funke.plan.capabilities import GENERAL  # (capabilities imports this module)

    marks: dict[int, frozenset[Watermark]] = {}  # per node: the strategies whose watermark its rows carry
    for node in facts.nodes:
        upstream = frozenset().union(*(marks[id(i)] for i in node.inputs)) if node.inputs else frozenset()
        generated = [w for w in upstream if w.strategy.generator is not None]
        if isinstance(node, Watermark):
            if node.strategy.generator is not None and node.input.scripted_time:
                raise UnsupportedError(
                    f"{node.where()}: a TestStream scripts the watermark itself, so a WatermarkGenerator on it would be a "
                    "second clock: drop for_generator(...), or feed the generator from env.from_collection(...)"
                )
            if upstream and (node.strategy.generator is not None or generated):
                raise UnsupportedError(
                    f"{node.where()}: the stream already has a watermark strategy ({min(w.strategy.describe() for w in upstream)}); "
                    "with a WatermarkGenerator on either, funke would follow two watermarks: assign one strategy per stream"
                )
            marks[id(node)] = frozenset({node})
            continue
        if generated and isinstance(node, Union) and len(upstream) > 1:
            raise UnsupportedError(
                f"{node.where()}: a stream whose watermark comes from a WatermarkGenerator ({generated[0].strategy.describe()}) "
                f"is merged with {len(upstream) - 1} other watermarked stream(s); funke does not take the minimum of a "
                "generator's watermark and another's within one stream: assign the generator after the union, or give "
                "each input for_bounded_out_of_orderness"
            )
        if len(node.inputs) > 1 and not isinstance(node, Union) and generated:
            sides = [any(w.strategy.generator is not None for w in marks[id(i)]) for i in node.inputs]
            if not all(sides):
                without = sides.index(False) + 1
                raise UnsupportedError(
                    f"{node.where()} [{node.uid}]: input {sides.index(True) + 1} takes its watermark from a WatermarkGenerator "
                    f"and input {without} does not; funke combines two inputs' watermarks with a generator (Flink's minimum) "
                    f"only when each input has one: give input {without} WatermarkStrategy.for_generator(...) too, e.g. "
                    "for_generator(lambda: BoundedOutOfOrdernessWatermarks(fk.seconds(5)))"
                )
            idle = [w for w in generated if w.strategy.idleness_ms is not None]
            if idle:
                raise UnsupportedError(
                    f"{idle[0].where()}: with_idleness on a WatermarkGenerator's stream is not honoured where inputs meet "
                    f"({node.where()}): remove with_idleness, or use for_bounded_out_of_orderness(...).with_idleness(...)"
                )
        marks[id(node)] = frozenset() if facts.place(node).path == GENERAL else upstream
