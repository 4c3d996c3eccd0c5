"""PyFlink's connectors on funke's: ``file_system`` (FileSource, FileSink) and ``kafka`` (KafkaSource, KafkaSink)."""
