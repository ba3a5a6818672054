"""The backend under test: a function ``(program, inputs) -> {node key: tensor}``, or a
command run on files (``--check "CMD {program} {inputs} {dump}"``).

A backend computes the flat program it is given (one function, tensor parameters; the
text form and one tensor per parameter) and returns its value of every node it can map,
keyed by tfexec's node keys (docs/dump-format.md). It *declines* a program it does not
support by raising ``BackendDeclined`` (a command: exit status 3) — counted apart, never a
bug; any other exception (a command: another non-zero status, or no dump written) is a
crash.
"""

import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import torch

from tfexec.fuzz._options import FuzzUsageError
from tfexec.ir.expr import Function

Backend = Callable[[Function, tuple[torch.Tensor, ...]], Mapping[str, torch.Tensor]]
"""The runtime under test: per-node values of the program on the inputs, by node key."""

PROGRAM, INPUTS, DUMP = "{program}", "{inputs}", "{dump}"
DECLINED_STATUS = 3
"""The exit status with which a check command says it does not support the program."""
TAIL = 2000


class BackendDeclined(Exception):
    """Raised by a backend for a program it does not support (the message says what)."""


class BackendCrash(Exception):
    """A command backend failed: its exit status and the end of its output."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class CommandBackend:
    """A check command as a backend: each program is written as ``program.tf.py`` and
    ``inputs.safetensors`` in a scratch directory, the command (split like a shell line,
    never run through a shell) runs with ``{program}``, ``{inputs}`` and ``{dump}``
    replaced by paths, and the dump it wrote is read back."""

    def __init__(self, template: str, timeout: float | None = 300.0) -> None:
        try:
            self.words = shlex.split(template)
        except ValueError as exc:
            raise FuzzUsageError(f"--check {template!r}: {exc}") from None
        if not self.words:
            raise FuzzUsageError('--check needs a command, e.g. --check "mybackend {program} {inputs} {dump}"')
        for placeholder, what in ((PROGRAM, "the program to run"), (INPUTS, "its inputs"), (DUMP, "where to write the dump")):
            if not any(placeholder in w for w in self.words):
                raise FuzzUsageError(f"--check {template!r} never mentions {placeholder} ({what})")
        if timeout is not None and not timeout > 0:
            raise FuzzUsageError(f"--timeout must be a positive number of seconds, got {timeout}")
        self.template = template
        self.timeout = timeout

    def argv(self, program: Path, inputs: Path, dump: Path) -> list[str]:
        """The command's arguments for one program's files."""
        return [w.replace(PROGRAM, str(program)).replace(INPUTS, str(inputs)).replace(DUMP, str(dump)) for w in self.words]

    def shown(self, program: Path, inputs: Path, dump: Path) -> str:
        """The command line as a shell would need it typed."""
        return shlex.join(self.argv(program, inputs, dump))

    def __call__(self, function: Function, inputs: tuple[torch.Tensor, ...]) -> Mapping[str, torch.Tensor]:
        from tfexec.compare import read_dump
        from tfexec.loading import write_tensors
        from tfexec.text import print_ir

        with tempfile.TemporaryDirectory(prefix="tfexec-fuzz-") as scratch:
            work = Path(scratch)
            program, values, dump = work / "program.tf.py", work / "inputs.safetensors", work / "backend.safetensors"
            program.write_text(print_ir(function), encoding="utf-8")
            write_tensors({p.name: x for p, x in zip(function.params, inputs)}, values)
            try:
                done = subprocess.run(
                    self.argv(program, values, dump), capture_output=True, timeout=self.timeout,
                    stdin=subprocess.DEVNULL,
                )
            except FileNotFoundError:
                raise FuzzUsageError(f"--check: command {self.words[0]!r} not found") from None
            except PermissionError:
                raise FuzzUsageError(f"--check: command {self.words[0]!r} is not executable") from None
            except subprocess.TimeoutExpired:
                raise BackendCrash(f"timed out after {self.timeout:g} s") from None
            output = (done.stdout + done.stderr).decode("utf-8", errors="replace")[-TAIL:]
            if done.returncode == DECLINED_STATUS:
                raise BackendDeclined(_last_line(output) or "declined (exit 3)")
            if done.returncode != 0:
                raise BackendCrash(f"exit {done.returncode}: {_last_line(output)}", output)
            if not dump.exists():
                raise BackendCrash("exit 0 but no dump written at {dump}", output)
            try:
                return dict(read_dump(dump).tensors)
            except Exception as exc:  # a dump we cannot read is the backend's failure
                raise BackendCrash(f"its dump cannot be read: {exc}", output) from None


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


__all__ = ["Backend", "BackendCrash", "BackendDeclined", "CommandBackend", "DECLINED_STATUS"]
