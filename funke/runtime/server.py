"""The job's HTTP server (Starlette on uvicorn, in a thread of the job's process).

Routes: ``/metrics`` (Prometheus text), ``/jobs`` and ``/jobs/<name>`` (JSON: the job list,
and what the dashboard draws, ``funke.runtime.dashboard.details``),
``/jobs/<name>/state/<uid>[?key=…]`` (queryable state), ``POST /jobs/<name>/savepoints``
(take one), ``/`` (the dashboard).

It binds to 127.0.0.1 by default, where only this machine's users reach it. Bound to any
other address it requires ``Authorization: Bearer <token>``: the token is generated at start
and written to ``$FUNKE_HOME/jobs/<name>/http.token`` with mode 0600, so only the user
that runs the job (and root) can read it. A request without the right token gets 401 and
nothing else.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from funke.errors import FunkeError
from funke.runtime.dashboard import asset, details, job_list, page
from funke.runtime.metrics import JobCollector

TOKEN_FILE = "http.token"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def write_token(directory: Path) -> str:
    """A fresh bearer token, stored readable by its owner only."""
    directory.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    path = directory / TOKEN_FILE
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token


def read_token(home: str | Path, job: str) -> str | None:
    path = Path(home) / "jobs" / job / TOKEN_FILE
    try:
        return path.read_text().strip()
    except OSError:
        return None


def build_app(handle: Any, token: str | None) -> Starlette:
    registry = CollectorRegistry()
    registry.register(JobCollector(handle))

    def known(request: Request) -> None:
        name = request.path_params.get("name")
        if name is not None and name != handle.name:
            raise _NotFound(f"no job {name!r} here: this server serves job {handle.name!r}")

    async def metrics(request: Request) -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    async def jobs(request: Request) -> Response:
        return JSONResponse((await asyncio.to_thread(job_list, handle))["jobs"])

    async def job(request: Request) -> Response:
        known(request)
        return JSONResponse(await asyncio.to_thread(details, handle))

    async def state(request: Request) -> Response:
        known(request)
        uid = request.path_params["uid"]
        key = request.query_params.get("key")
        answer = await asyncio.to_thread(handle.state(uid).as_json, key)
        return JSONResponse(answer)

    async def take_savepoint(request: Request) -> Response:
        known(request)
        sp = await asyncio.to_thread(handle.savepoint)
        return JSONResponse({"savepoint": str(sp.path), "batches": sp.batches})

    async def dashboard(request: Request) -> Response:
        return Response(page(handle.name), media_type="text/html")

    async def static(request: Request) -> Response:
        try:
            body, media = asset(request.path_params["file"])
        except FileNotFoundError:
            return Response(status_code=404)
        return Response(body, media_type=media)

    routes = [
        Route("/", dashboard),
        Route("/static/{file}", static),
        Route("/metrics", metrics),
        Route("/jobs", jobs),
        Route("/jobs/{name}", job),
        Route("/jobs/{name}/state/{uid}", state),
        Route("/jobs/{name}/savepoints", take_savepoint, methods=["POST"]),
    ]
    app = Starlette(routes=routes, exception_handlers={_NotFound: _not_found, FunkeError: _refused})
    if token is not None:
        app.add_middleware(_BearerToken, token=token)
    return app


class _NotFound(Exception):
    pass


async def _not_found(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=404)


async def _refused(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=400)


class _BearerToken:
    """ASGI middleware: 401 for any request without ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
        await self.app(scope, receive, send)


class OpsServer:
    """Serves one job over HTTP from a daemon thread; ``address`` once started."""

    def __init__(self, handle: Any, *, host: str, port: int, home: Path) -> None:
        self.host = host
        self.token = None if is_loopback(host) else write_token(home / "jobs" / handle.name)
        config = uvicorn.Config(build_app(handle, self.token), host=host, port=port, log_level="warning", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name=f"funke-http-{handle.name}", daemon=True)
        self.address: str | None = None

    def start(self, timeout_s: float = 30) -> str:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise FunkeError(f"the job's HTTP server did not start on {self.host} port {self._server.config.port}: is the port taken?")
            time.sleep(0.02)
        sock = self._server.servers[0].sockets[0]
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        self.address = f"http://{shown}:{port}"
        return self.address

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(10)
