"""Comparing per-node values across runtimes: the dump format and ``compare_tables``.

Main definitions
----------------
* ``compare_tables(expected, actual, ...)`` — two ``{node key: tensor}`` tables (dump files,
  mappings, or callables ``(program, inputs) -> table``) compared key by key with per-dtype
  tolerances; the report names the first divergence in topological order.
* ``tfexec_table(program, inputs)`` — tfexec's own table, a callable of that shape;
  ``write_program_dump`` writes it as a dump (what ``tfexec dump`` does).
* ``write_dump`` / ``read_dump`` — the dump format (``docs/dump-format.md``): safetensors
  keyed by node key plus a JSON index of key → node, op, location, shape, dtype.
* ``Tolerance``, ``DEFAULT_TOLERANCES`` — ``torch.testing.assert_close``'s float tolerances;
  integers and booleans compare exactly.
* ``text_mismatch(shown, got)`` — printed text compared as a reader compares it: the words
  equal, the numbers within a tolerance (a page's example digits against this machine's).
"""

from tfexec.compare._format import (
    FORMAT as FORMAT,
    VERSION as VERSION,
    Dump as Dump,
    DumpError as DumpError,
    IndexEntry as IndexEntry,
    entry_for as entry_for,
    index_path as index_path,
    read_dump as read_dump,
    write_dump as write_dump,
)
from tfexec.compare._tables import (
    CompareError as CompareError,
    ComparisonReport as ComparisonReport,
    NodeComparison as NodeComparison,
    NodeInfo as NodeInfo,
    TableFn as TableFn,
    compare_tables as compare_tables,
    flatten_value as flatten_value,
    program_info as program_info,
    tfexec_table as tfexec_table,
    write_program_dump as write_program_dump,
)
from tfexec.compare._tolerance import (
    DEFAULT_TOLERANCES as DEFAULT_TOLERANCES,
    EXACT as EXACT,
    Tolerance as Tolerance,
    TensorVerdict as TensorVerdict,
    compare_tensors as compare_tensors,
    resolve_tolerances as resolve_tolerances,
)
from tfexec.compare._text import number_mismatch as number_mismatch, text_mismatch as text_mismatch

__all__ = [
    "DEFAULT_TOLERANCES", "EXACT", "FORMAT", "VERSION", "CompareError", "ComparisonReport", "Dump", "DumpError",
    "IndexEntry", "NodeComparison", "NodeInfo", "TableFn", "TensorVerdict", "Tolerance", "compare_tables",
    "compare_tensors", "entry_for", "flatten_value", "index_path", "number_mismatch", "program_info", "read_dump",
    "resolve_tolerances", "text_mismatch", "tfexec_table", "write_dump", "write_program_dump",
]
