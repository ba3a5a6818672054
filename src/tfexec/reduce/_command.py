"""A shell-free check command as a reduction predicate: ``COMMAND {program} {inputs}``.

The template is split like a shell line (``shlex``) but never run through a shell;
``{program}`` and ``{inputs}`` in any argument are replaced by the candidate's file paths.
A candidate *fails* when the command exits non-zero and, with a fail regex, when the regex
is found in its output (stdout and stderr): so the reduction keeps the same failure.
"""

import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

PROGRAM = "{program}"
INPUTS = "{inputs}"
TAIL = 2000


class ReduceUsageError(Exception):
    """Bad command-line input for ``tfexec reduce`` (exit code 2)."""


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """One run of the check: whether it shows the failure, its exit code (None: timed out),
    the end of its output and a few words saying why it counts or not."""

    failed: bool
    code: int | None
    output: str
    why: str


class CommandCheck:
    """The check command of ``tfexec reduce``, with its optional fail regex and timeout."""

    def __init__(self, template: str, fail_regex: str | None = None, timeout: float | None = None) -> None:
        try:
            self.words = shlex.split(template)
        except ValueError as exc:
            raise ReduceUsageError(f"--check {template!r}: {exc}") from None
        if not self.words:
            raise ReduceUsageError("--check needs a command, e.g. --check \"mybackend {program} {inputs}\"")
        if not any(PROGRAM in w for w in self.words):
            raise ReduceUsageError(
                f"--check {template!r} never mentions {PROGRAM}: the command must read the candidate program "
                f"(and {INPUTS} for its inputs)"
            )
        try:
            self.regex = re.compile(fail_regex) if fail_regex is not None else None
        except re.error as exc:
            raise ReduceUsageError(f"--fail-regex {fail_regex!r} is not a valid regular expression: {exc}") from None
        if timeout is not None and not timeout > 0:
            raise ReduceUsageError(f"--timeout must be a positive number of seconds, got {timeout}")
        self.timeout = timeout

    def argv(self, program: Path, inputs: Path) -> list[str]:
        """The command's arguments for one candidate's files."""
        return [w.replace(PROGRAM, str(program)).replace(INPUTS, str(inputs)) for w in self.words]

    def shown(self, program: Path, inputs: Path) -> str:
        """The command line as a shell would need it typed."""
        return shlex.join(self.argv(program, inputs))

    def run(self, program: Path, inputs: Path) -> CheckOutcome:
        """Run the check on one candidate's files."""
        try:
            done = subprocess.run(
                self.argv(program, inputs), capture_output=True, timeout=self.timeout, stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise ReduceUsageError(f"--check: command {self.words[0]!r} not found") from None
        except PermissionError:
            raise ReduceUsageError(f"--check: command {self.words[0]!r} is not executable") from None
        except subprocess.TimeoutExpired as exc:
            out = _text(exc.stdout) + _text(exc.stderr)
            return CheckOutcome(False, None, out[-TAIL:], f"timed out after {self.timeout:g} s (counts as not failing)")
        output = _text(done.stdout) + _text(done.stderr)
        if done.returncode == 0:
            return CheckOutcome(False, 0, output[-TAIL:], "exit 0")
        if self.regex is not None and self.regex.search(output) is None:
            why = f"exit {done.returncode}, but the output does not match --fail-regex {self.regex.pattern!r}"
            return CheckOutcome(False, done.returncode, output[-TAIL:], why)
        matched = f", output matches {self.regex.pattern!r}" if self.regex is not None else ""
        return CheckOutcome(True, done.returncode, output[-TAIL:], f"exit {done.returncode}{matched}")


def _text(data: "bytes | str | None") -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")
