"""The Spark compiler and runtime adapters (the only package that imports pyspark, with runtime)."""
