"""Benchmarks: ``funke bench ysb`` (``funke.bench.ysb.run_ysb``) measures funke against plain PySpark."""
