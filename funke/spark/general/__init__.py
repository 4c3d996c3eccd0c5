"""The general path: funke's own operators (``funke/semantics``) on Spark's ``transformWithStateInPandas``.

Spark calls a stateful Python processor once per grouping key per micro-batch, at about
1.2 ms a call here, so grouping by the user's key cannot scale. funke groups by a bounded
number of **buckets** (``hash(key) % buckets``) instead. One call handles a bucket's many
keys: it loads the bucket's operator state in one read (one value, the operator's
snapshot), runs the elements through the pure-Python operator, advances processing time
and the watermark, and writes the state back in one write.

Time reaches the operator as data, Flink's way (a watermark is a record): a micro-batch can
carry one **control row** per bucket, which makes every bucket run in it, with or without
elements, so that timers fire at their moment. It carries them only when something is due,
so a job whose input is quiet runs no micro-batch at all (Spark's "waiting for data"):

* On Spark's watermark (the query's one watermark, ``timerValues``) each bucket keeps a Spark
  event-time timer one millisecond past it: Spark calls the bucket in every micro-batch that
  moves the watermark (no-data batches included) and it applies the new watermark. Control
  rows (``funke_beat``) come at the start of a run, at the watermark's first move (for which
  Spark runs no batch) and when a bucket's processing-time timer is due (each bucket run
  reports its next one; ``funke.runtime.watermarks.Beat``). Their processing time is the
  micro-batch's timestamp.
* On funke's own watermark (``ClockSpec``: two inputs, idleness) the control rows
  (``funke_clock``) carry it, in the batches after it or an input's maximum moved, or when a
  processing-time timer or an input's idleness is due.
* Under ``funke.testing.TestStream`` the control rows come from the test script, one set per
  step, and carry its watermark and processing time, so tests set both exactly.

Every element row carries the micro-batch's processing time too (Spark's ``current_timestamp()``; a
test script's comes only in its time rows), so a bucket run without a time row knows it; in a bounded
run it is the job's one instant. At the end of input (a bounded run's end, a finite stream's
watermark at +infinity) every pending processing-time timer fires, as in Flink's batch mode
(``run._end_of_processing_time``).

Per batch a bucket applies, in order: processing time (timers due), the batch's elements
(in arrival order, checked for lateness against the watermark of the previous batch), then
the new watermark. That is the schedule "each batch's elements, then the watermark", the
same one the native path follows, so both give the same results.

**Same-batch firing** (``set_latency_mode("latency-first")``, ``Program.same_batch_bound_ms``):
Spark's watermark is computed after a batch, so a window whose end a batch's elements pass
fires only in the next batch. With a bounded-out-of-orderness bound B on Spark's watermark
(one input, not funke's clock, a test script or a WatermarkGenerator), a bucket also keeps the
largest event time it has seen (across batches, in its snapshot) and, after the batch's
elements and Spark's watermark, advances its operator to Flink's watermark for it,
``largest - B - 1``. A bucket's largest event time is never above the query's, so this is never
above the watermark Spark computes after the batch (``max - B``, Flink's ``- 1``): no timer
fires before Flink's per-record watermark lets it, and a window leaves in the batch whose
elements pass its end. Later batches' elements are checked for lateness against it (closer to
Flink's per-record rule): only an element more than B behind the bucket's largest event time
can be late where it was not before. Pre-aggregated partial rows carry their largest event
time (``PARTIAL_MAX``). Two-input operators keep the schedule above.

Output rows of all kinds leave the operator in one frame, tagged by ``__tag``: ``""`` for
the main output, the tag's name for a side output, ``__dropped`` for the count of late
elements dropped, ``__due`` for a bucket run's next processing-time timer. The compiler
splits the frame.

The package, by role: ``program`` (what one operator runs, built from its plan node), ``lowering``
(the operator as Spark frames: its input rows, time rows and buckets), ``buckets`` (a bucket's rows in
and out), ``preaggregate`` (partial aggregates, in a bucket or before the shuffle) and ``run`` (one
bucket's micro-batch, and the Spark adapters that call it).
"""
