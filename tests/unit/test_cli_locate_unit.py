"""Finding and building a job from ``MODULE:JOB`` as ``funke run`` does, without Spark."""

from __future__ import annotations

import pytest

from funke.cli.locate import build
from funke.cli.main import _options
from funke.errors import PlanError
from funke.plan import nodes


def sources(env):
    return [x.spec for x in nodes.walk(list(env.sinks)) if isinstance(x, nodes.Source)]


@pytest.mark.parametrize("target", ["examples.ysb:job", "examples.ysb:trigger_job"])
def test_ysb_without_events_is_unbounded_and_with_events_ends(target):
    # `funke run examples.ysb:job` with no --events: the README says unbounded (stop with Ctrl-C)
    (unbounded,) = sources(build(target, _options(None, None, None)))
    assert unbounded.events is None and not unbounded.bounded
    (finite,) = sources(build(target, _options(1_000, None, None)))
    assert finite.events == 1_000 and finite.bounded


def test_a_wrong_job_name_gets_a_did_you_mean_over_the_module_s_jobs():
    from typer.testing import CliRunner

    from funke.cli.main import app

    r = CliRunner().invoke(app, ["run", "examples.ysb:jbo"])
    assert r.exit_code == 1
    assert " ".join(r.output.split()).endswith(  # (the terminal's width wraps the line)
        "module 'examples.ysb' has no job 'jbo' (did you mean 'job'?); available jobs: job, kafka_job, redis_job, trigger_job"
    )  # not every attribute of the module (CAMPAIGNS, h, pipeline, ...)
    with pytest.raises(PlanError, match=r"has no job 'pipline'; available jobs: job$"):
        build("examples.auctions:pipline", {})  # a function that is no job is not suggested
