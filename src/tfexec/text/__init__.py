"""The HIR text form: ``parse``, ``parse_function``, ``print_ir``, ``@script``, and the
structural comparison the round-trip tests use (``structural_difference``)."""

from tfexec.text.equality import structural_difference as structural_difference
from tfexec.text.parser import parse as parse, parse_function as parse_function, script as script
from tfexec.text.printer import print_ir as print_ir

__all__ = ["parse", "parse_function", "print_ir", "script", "structural_difference"]

from tfexec.ir.expr import set_function_printer as _set_function_printer

_set_function_printer(print_ir)  # str(function) prints the text form
