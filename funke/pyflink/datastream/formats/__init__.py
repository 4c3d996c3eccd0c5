"""PyFlink's row formats (JSON, CSV) as descriptions funke's Kafka connector reads."""
