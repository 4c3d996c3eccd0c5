"""Where a job's Spark checkpoints live, and whether starting it again resumes.

A streaming job keeps one Spark checkpoint per query (offset log, commit log, state
store) under a root directory: ``checkpoint_dir`` when given, else
``$FUNKE_HOME/jobs/<job name>/checkpoint``. Starting a job whose root holds progress
resumes every query from its last committed batch, as Flink resumes from its last
checkpoint after a failure. A job that ran to the end of its input leaves a
``_FINISHED`` marker: starting it again runs it afresh (there is nothing to resume),
and so does ``execute(fresh=True)``.

The root may be a local path or any Hadoop filesystem URI (``hdfs://``, ``s3a://``,
``file:///``); URIs are read and cleared through Spark's Hadoop filesystem.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from funke.errors import PlanError

FINISHED = "_FINISHED"
END = "_END"
#: How many key buckets the job's general operators use (``Checkpoints.record_buckets``).
BUCKETS = "_BUCKETS"


class Checkpoints:
    def __init__(self, root: str, spark: Any = None):
        self.root = root.rstrip("/")
        self.spark = spark
        self.uri = "://" in root and not root.startswith("file://")

    @classmethod
    def for_job(cls, env: Any, name: str, spark: Any = None) -> Checkpoints:
        root = env.checkpoint_dir or str(Path(env.settings.home) / "jobs" / name / "checkpoint")
        return cls(str(root), spark)

    def location(self, uid: str) -> str:
        """The Spark checkpoint of the query writing sink ``uid``."""
        return f"{self.root}/{uid}"

    # -- state of the root ---------------------------------------------------------------
    def has_progress(self) -> bool:
        """True when some query already committed or planned a batch here."""
        return any(name not in (FINISHED, BUCKETS) for name in self.listing())

    def recorded_buckets(self) -> tuple[int, ...] | None:
        """The key buckets (their ``fk_b`` values, in bucket order) the job's general operators were
        started with here; None when not recorded (a checkpoint older than the record). A key's state
        is in the bucket its hash named among them, so a resumed job must keep them even where its
        cores changed."""
        if BUCKETS not in self.listing():
            return None
        text = self.read_text(BUCKETS).strip()
        parts = text.split(",")
        if not all(p.strip().isdigit() for p in parts) or (len(parts) == 1 and int(parts[0]) < 1):
            raise PlanError(
                f"{self.root}/{BUCKETS} should hold the job's key buckets, comma-separated integers; it holds {text!r}"
            )
        if len(parts) == 1:  # (a count: the buckets 0..count-1)
            return tuple(range(int(parts[0])))
        return tuple(int(p) for p in parts)

    def record_buckets(self, buckets: tuple[int, ...]) -> None:
        self._write(BUCKETS, ",".join(map(str, buckets)))

    def note_end(self, uid: str, metric: str, batch: int) -> None:
        """The query writing sink ``uid`` saw a source's end-of-input row (``metric``) in ``batch``."""
        self._write(f"{END}_{uid}__{metric}", str(batch))

    def ends(self, uid: str) -> dict[str, int]:
        """What :meth:`note_end` recorded for ``uid``: a restart must not wait for an end row already read."""
        prefix = f"{END}_{uid}__"
        return {name[len(prefix):]: int(self.read_text(name)) for name in self.listing() if name.startswith(prefix)}

    def last_committed(self, uid: str) -> int:
        """The last micro-batch Spark committed for the query writing sink ``uid`` (-1: none)."""
        batches = [int(n) for n in self.listing(f"{uid}/commits") if n.isdigit()]
        return max(batches, default=-1)

    def watermark_ms(self, uid: str) -> int | None:
        """The event-time watermark Spark applied in the query's last committed micro-batch (its offset
        log's ``batchWatermarkMs``); None before the first. Unlike progress reports, which Spark
        throttles for batches without data, the offset log has every batch."""
        batch = self.last_committed(uid)
        if batch < 0:
            return None
        try:
            lines = self.read_text(f"{uid}/offsets/{batch}").splitlines()
            return int(json.loads(lines[1]).get("batchWatermarkMs", 0)) if len(lines) > 1 else None
        except (OSError, ValueError):
            return None

    def last_source_offsets(self, uid: str) -> list[Any]:
        """The sources' offsets of the last micro-batch planned for the query writing sink ``uid``
        (its offset log's last entry), parsed from JSON where they are JSON; [] before the first."""
        batches = [int(n) for n in self.listing(f"{uid}/offsets") if n.isdigit()]
        if not batches:
            return []
        try:
            lines = self.read_text(f"{uid}/offsets/{max(batches)}").splitlines()
        except OSError:
            return []
        out: list[Any] = []
        for line in lines[2:]:  # version, metadata, then one line per source
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append(None)
        return out

    def has_query(self, uid: str) -> bool:
        """True when the query writing sink ``uid`` has a checkpoint here (it ran before)."""
        return uid in self.listing()

    def finished(self) -> bool:
        """True when the job as a whole ran to the end of its input."""
        return FINISHED in self.listing()

    def mark_finished(self, uid: str | None = None) -> None:
        """The whole job (or, with ``uid``, the query writing that sink) has processed all of its input."""
        self._write(FINISHED if uid is None else f"{FINISHED}_{uid}", "")

    def query_finished(self, uid: str) -> bool:
        """True when the query writing sink ``uid`` already committed the batch after its end of input.

        A job stopped or killed after some of its queries ended resumes only the others: an
        ended query has no more input, so it would never report its end again.
        """
        return f"{FINISHED}_{uid}" in self.listing()

    def wipe(self) -> None:
        """Forget every query's progress: the next start reads its sources from the beginning."""
        if self.uri:
            fs = self._hadoop_fs()
            path = self._hadoop_path(self.root)
            if fs.exists(path):
                fs.delete(path, True)
            return
        shutil.rmtree(self.local_root(), ignore_errors=True)

    # -- filesystems ---------------------------------------------------------------------
    def _write(self, name: str, text: str) -> None:
        if self.uri:
            out = self._hadoop_fs().create(self._hadoop_path(f"{self.root}/{name}"), True)
            out.write(text.encode())
            out.close()
            return
        path = Path(self.local_root())
        path.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)

    def read_text(self, name: str) -> str:
        """The file ``name`` under the root (``uid/offsets/3``)."""
        if self.uri:
            stream = self._hadoop_fs().open(self._hadoop_path(f"{self.root}/{name}"))
            try:
                return bytes(stream.readAllBytes()).decode()
            finally:
                stream.close()
        return (Path(self.local_root()) / name).read_text()

    def local_root(self) -> str:
        """The root as a local path (a ``file://`` URI without its scheme)."""
        return self.root[len("file://"):] if self.root.startswith("file://") else self.root

    def listing(self, sub: str = "") -> list[str]:
        """The names in the root's folder ``sub`` (none when it does not exist)."""
        if self.uri:
            fs = self._hadoop_fs()
            path = self._hadoop_path(f"{self.root}/{sub}" if sub else self.root)
            return [s.getPath().getName() for s in fs.listStatus(path)] if fs.exists(path) else []
        path = Path(self.local_root()) / sub
        return [p.name for p in path.iterdir()] if path.is_dir() else []

    def _hadoop_path(self, text: str) -> Any:
        return self.spark._jvm.org.apache.hadoop.fs.Path(text)

    def _hadoop_fs(self) -> Any:
        jvm = getattr(self.spark, "_jvm", None) if self.spark is not None else None
        if jvm is None:
            raise PlanError(
                f"checkpoint root {self.root}: funke reads a remote checkpoint through the driver's Hadoop filesystem, "
                "which a Spark Connect client does not have; use a local checkpoint_dir or classic Spark"
            )
        return self._hadoop_path(self.root).getFileSystem(self.spark._jsc.hadoopConfiguration())
