"""Flink SQL's language, below both ``funke.table`` and ``funke.cep``.

- ``syntax``: parsing Flink SQL with sqlglot (the Flink dialect, windowing table-valued functions,
  positions for error messages, interval literals);
- ``functions``: Flink's built-in functions, each with what funke gives (Flink's result, rewritten
  onto Spark's functions, or refused) — ``python -m funke.dialect.functions`` prints the table;
- ``rewrites``: the Spark SQL each rewritten function is (templates filled with the call's arguments, and
  rewrites given as functions of them);
- ``evaluate``: an expression evaluated in Python with SQL's NULLs (``MATCH_RECOGNIZE``'s
  ``DEFINE`` and CEP's SQL conditions).

``funke.table`` plans queries with it; ``funke.cep`` reads pattern conditions with it.
"""
