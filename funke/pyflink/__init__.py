"""Unchanged PyFlink programs on funke: ``python -m funke.pyflink SCRIPT [ARGS...]``.

``funke.pyflink.common`` and ``funke.pyflink.datastream`` are PyFlink's API (``pyflink.common``,
``pyflink.datastream``) translated onto funke's API and plan (no second engine): the script runs as
``__main__`` with ``pyflink.*`` imports resolved to them, and its jobs run on Spark. What has no
mapping is refused when the job is built, naming the PyFlink construct and what to use instead.
``funke.pyflink.table`` is the seam for PyFlink's Table API.

In Spark's Python workers (which unpickle the script's functions, and may import the script's
helper modules that import ``pyflink``) the runner's ``FUNKE_PYFLINK=1`` installs the same hook.
"""

import os

if os.environ.get("FUNKE_PYFLINK") == "1":
    from funke.pyflink._hook import install

    install()
