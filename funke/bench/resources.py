"""What a benchmark run costs the machine: memory peaks sampled while it goes, CPU seconds, state on disk.

:class:`MemorySampler` samples the driver's and the JVM's resident bytes and the JVM heap while
a run goes and keeps the peaks (:class:`Memory`) and the CPU seconds the run used;
:func:`state_bytes` adds up a checkpoint's state store files, :func:`filesystem` names what the
checkpoint is written to. The figures come from ``/proc`` (psutil when installed).

>>> gib(3 * 2**30), size(5 * 2**20), size(44_160), size(900)
('3.00 GiB', '5.0 MiB', '43 KiB', '900 B')
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self


@dataclass(frozen=True)
class Memory:
    """Peaks sampled while one run went (bytes).

    Both systems run in one process and one JVM, one after the other: the JVM's heap in use
    (sampled, after a GC before the run) is the figure that belongs to a run; the resident
    sizes of the Python driver and the JVM process rarely shrink, so a later run inherits them.
    """

    python_rss: int
    #: The JVM process and the Python workers it started (see ``tree_rss``).
    jvm_rss: int | None = None
    jvm_heap: int | None = None

    @property
    def rss(self) -> int:
        """The driver's resident bytes: the Python process plus (local Spark) the JVM's process tree."""
        return self.python_rss + (self.jvm_rss or 0)


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def size(n: float) -> str:
    """Bytes in the unit that shows them best (B, KiB, MiB, GiB)."""
    if n >= 2**30:
        return gib(n)
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 2**10:.0f} KiB" if n >= 2**10 else f"{n:.0f} B"


def rss(pid: int) -> int | None:
    """Resident bytes of process ``pid``: psutil when installed, else ``/proc/<pid>/status``."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            return int(psutil.Process(pid).memory_info().rss)
        except psutil.Error:
            return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    """The pids of ``pid``'s children (``/proc/<pid>/task/*/children``)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:  # the process is gone (or this is not Linux)
        return out
    for task in tasks:
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def pss(pid: int) -> int | None:
    """Proportional set size of ``pid`` (``/proc/<pid>/smaps_rollup``): pages shared with other processes count in part."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _descendants(pid: int) -> list[int]:
    out, todo = [], children(pid)
    while todo:
        p = todo.pop()
        if p not in out:
            out.append(p)
            todo += children(p)
    return out


def _runs_python(pid: int) -> bool:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("python")
    except OSError:
        return False


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds used by ``pid`` (and its waited-for children) and its live Python workers, from ``/proc``."""

    def ticks(p: int, waited: bool) -> int:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0
        # fields[11..14]: utime, stime, cutime, cstime (the first field after the name is index 0)
        return sum(int(x) for x in fields[11 : 15 if waited else 13])

    if not Path(f"/proc/{pid}/stat").exists():
        return None
    total = ticks(pid, True) + sum(ticks(p, False) for p in _descendants(pid) if _runs_python(p))
    return total / os.sysconf("SC_CLK_TCK")


def tree_rss(pid: int) -> int | None:
    """Resident bytes of the JVM ``pid`` plus the Python workers it started.

    Workers forked from one daemon share most pages, so they count by PSS. Other children
    are left out: a process the JVM is spawning shares the JVM's own memory until it
    executes its program, and would count the JVM twice.
    """
    own = rss(pid)
    if own is None:
        return None
    return own + sum(pss(p) or rss(p) or 0 for p in _descendants(pid) if _runs_python(p))


class MemorySampler:
    """Samples, every ``interval_s`` until ``stop()``, the driver's RSS, Spark's RSS and the JVM heap in use.

    Spark's figures need classic local Spark: the JVM is this process's child (its pid from
    PySpark's gateway; its RSS counted with the Python workers it started), its heap read
    from ``Runtime``. Under Spark Connect they stay None. A GC before the run starts every
    run's heap figure from the same floor.
    """

    def __init__(self, spark: Any, interval_s: float = 0.5):
        self.interval_s = interval_s
        self._runtime = self._jvm_pid = None
        try:
            self._runtime = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
            self._jvm_pid = spark.sparkContext._gateway.proc.pid
        except AttributeError:  # Spark Connect, or a gateway PySpark did not launch
            pass
        self._peak = {"python": 0, "jvm": 0, "heap": 0}
        self._cpu_start: float | None = None
        #: CPU seconds between ``__enter__`` and ``stop()`` (this process, the JVM, its workers).
        self.cpu_s: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="funke-bench-memory", daemon=True)

    def __enter__(self) -> Self:
        if self._runtime is not None:
            self._runtime.gc()
        self._sample()
        self._cpu_start = self._cpu()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Take a last sample and stop sampling (before the harness reads the run's results)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        end = self._cpu()
        if end is not None and self._cpu_start is not None:
            self.cpu_s = end - self._cpu_start
        self._sample()

    def _cpu(self) -> float | None:
        own = sum(os.times()[:2])
        if not self._jvm_pid:
            return None  # Spark Connect: the server's work is not this machine's process tree to count
        jvm = cpu_seconds(self._jvm_pid)
        return None if jvm is None else own + jvm

    @property
    def peak(self) -> Memory:
        jvm, heap = self._peak["jvm"], self._peak["heap"]
        return Memory(self._peak["python"], jvm if self._jvm_pid else None, heap if self._runtime is not None else None)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        self._raise("python", rss(os.getpid()))
        if self._jvm_pid:
            self._raise("jvm", tree_rss(self._jvm_pid))
        if self._runtime is not None:
            try:
                self._raise("heap", self._runtime.totalMemory() - self._runtime.freeMemory())
            except Exception:  # noqa: BLE001  (the gateway is shutting down: keep the peaks so far)
                return

    def _raise(self, name: str, value: int | None) -> None:
        if value is not None:
            self._peak[name] = max(self._peak[name], int(value))


def state_bytes(checkpoint: Path) -> int | None:
    """Bytes of the state store files under a Spark checkpoint (every ``state`` directory in it).

    RocksDB keeps the versions Spark retains (``minBatchesToRetain``): changelogs and
    snapshots, so this is what the checkpoint holds on disk, not one version's size.
    None when the directory is not there.

    >>> import tempfile; root = Path(tempfile.mkdtemp())
    >>> (root / "q" / "state" / "0").mkdir(parents=True); _ = (root / "q" / "state" / "0" / "1.zip").write_bytes(b"x" * 10)
    >>> _ = (root / "q" / "offsets").write_bytes(b"y" * 99); state_bytes(root), state_bytes(root / "none")
    (10, None)
    """
    if not checkpoint.is_dir():
        return None
    return sum(f.stat().st_size for d in checkpoint.rglob("state") if d.is_dir() for f in d.rglob("*") if f.is_file())


def filesystem(path: str | Path) -> str:
    """The filesystem type ``path`` is on (``/proc/mounts``' longest matching mount point), e.g. ``ext4``, ``tmpfs``."""
    target = os.path.realpath(path)
    best, kind = "", "unknown"
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return kind
    for line in mounts:
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, parts[2]
    return kind
