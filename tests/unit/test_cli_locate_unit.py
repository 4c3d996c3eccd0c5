"""Finding and building a job from ``MODULE:JOB`` as ``funke run`` does, without Spark."""

from __future__ import annotations

import pytest

from funke.cli.locate import build
from funke.cli.main import _options
from funke.plan import nodes as n


def sources(env):
    return [x.spec for x in n.walk(list(env.sinks)) if isinstance(x, n.Source)]


@pytest.mark.parametrize("target", ["examples.ysb:job", "examples.ysb:trigger_job"])
def test_ysb_without_events_is_unbounded_and_with_events_ends(target):
    # `funke run examples.ysb:job` with no --events: the README says unbounded (stop with Ctrl-C)
    (unbounded,) = sources(build(target, _options(None, None, None)))
    assert unbounded.events is None and not unbounded.bounded
    (finite,) = sources(build(target, _options(1_000, None, None)))
    assert finite.events == 1_000 and finite.bounded

