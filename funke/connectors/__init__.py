"""Sources, sinks and lookup tables: plain descriptions the Spark compiler knows how to run."""
