"""The job's web dashboard, Flink's web UI in small: one page served by the job's HTTP server.

The page (``static/dashboard.html`` + ``.js`` + ``.css``) polls ``/jobs/<name>`` once a
second and draws the plan graph (each operator with its path and its query's rows/s), the
figures, charts of throughput, watermark lag and micro-batch duration (uPlot, shipped in
``static/`` under its MIT license), the savepoints with a button to take one, and a link to
Spark's own UI when it runs.
"""

from __future__ import annotations

import html
import json
from importlib import resources

_MEDIA = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".LICENSE": "text/plain"}


def page(job: str) -> str:
    template = resources.files("funke.runtime").joinpath("static/dashboard.html").read_text()
    return template.replace("{{job_html}}", html.escape(job)).replace("{{job_json}}", json.dumps(job).replace("<", "\\u003c"))


def asset(name: str) -> tuple[bytes, str]:
    """A static file by name (no paths: only the files shipped in ``static/``)."""
    folder = resources.files("funke.runtime").joinpath("static")
    shipped = {p.name for p in folder.iterdir() if p.is_file()}
    if name not in shipped:
        raise FileNotFoundError(name)
    suffix = "." + name.rsplit(".", 1)[-1]
    return folder.joinpath(name).read_bytes(), _MEDIA.get(suffix, "application/octet-stream")
