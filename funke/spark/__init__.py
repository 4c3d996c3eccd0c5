"""The Spark compiler and its runtime adapters: where a plan becomes Spark queries.

Not the only package that imports pyspark: ``runtime`` runs the queries, ``savepoints`` reads and
writes state through Spark, ``graph`` and ``ml.mllib`` work on Spark DataFrames and models, and
the plain-PySpark baselines of ``bench`` are PySpark by design. The layers below the compiler
(``semantics``, ``plan``, ``table``, ``cep``, ``pyflink``) never import it (tests/unit/test_layers.py).
"""
