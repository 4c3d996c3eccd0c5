"""PyFlink's ``pyflink.table.table_descriptor``: ``TableDescriptor`` and ``FormatDescriptor``."""

from funke.pyflink.table.descriptors import FormatDescriptor, TableDescriptor

__all__ = ["FormatDescriptor", "TableDescriptor"]
