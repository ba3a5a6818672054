"""Provenance: the user's source line behind an exported FX node.

``torch.export`` records, on each node, the Python stack that produced it
(``node.meta["stack_trace"]``, outermost frame first). The node's ``Span`` points at the
innermost frame outside torch and tfexec (the user's line), with the column of the line's
first character, and its binding is the FX node's name.

By default torch keeps only the frames of ``forward`` methods, so a node made in a helper
function called from ``forward`` would point at the calling line, and a plain function's
nodes at no user line at all. ``whole_stacks()`` makes the export record every frame from
the first ``forward`` down (torch's own behaviour without its forward-only filter).
"""

import linecache
import os
import re
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.fx.proxy

from tfexec.ir.span import Span

_FRAME = re.compile(r'File "(?P<file>[^"\n]+)", line (?P<line>\d+), in [^\n]*(?:\n(?P<text>[^\n]*))?')
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_TFEXEC_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


_TORCH_NN_DIR = _TORCH_DIR + "nn" + os.sep


def user_frame(stack_trace: object) -> tuple[str, int, str] | None:
    """``(file, line, text)`` of the innermost frame outside torch and tfexec; failing that (a
    model made of torch's own modules, ``nn.Sequential(nn.Linear(...))``), the innermost in
    ``torch.nn`` — the module whose ``forward`` made the node, not the tracer's frames; failing
    that (code typed at a prompt has no file), the innermost outside tfexec; else None."""
    if not isinstance(stack_trace, str):
        return None
    frames = [(m["file"], int(m["line"]), (m["text"] or "").strip()) for m in _FRAME.finditer(stack_trace)]
    wanted: tuple[Callable[[str], bool], ...] = (
        lambda path: not path.startswith((_TORCH_DIR, _TFEXEC_DIR)),
        lambda path: path.startswith(_TORCH_NN_DIR),
        lambda path: not path.startswith(_TFEXEC_DIR),
    )
    for keep in wanted:
        for file, line, text in reversed(frames):
            if keep(os.path.abspath(file)) and not file.startswith("<eval_with_key>"):  # FX's generated code
                return file, line, text
    return None


def node_span(stack_trace: object, binding: str | None) -> Span | None:
    """The span of a node whose stack trace is ``stack_trace``, bound to ``binding``."""
    frame = user_frame(stack_trace)
    if frame is None:
        return None
    file, line, _ = frame
    source = linecache.getline(file, line)
    column = len(source) - len(source.lstrip()) + 1 if source.strip() else 1
    return Span(file, line, column, binding)


def source_text(stack_trace: object) -> str:
    """The user's source line of a stack trace (stripped), or ``""``."""
    frame = user_frame(stack_trace)
    return frame[2] if frame is not None else ""


_PATCH = threading.Lock()


@contextmanager
def whole_stacks() -> Iterator[None]:
    """While active, FX tracers record each node's whole user stack, not only its ``forward``
    frames: ``TracerBase._filter_traceback_frames`` (the hook torch documents for
    customising that filter) runs with the forward-only flag off. Without the hook (another
    torch) nothing changes: spans then point at the calling ``forward`` line."""
    tracer: Any = getattr(torch.fx.proxy, "TracerBase", None)
    original: Callable[..., traceback.StackSummary] | None = getattr(tracer, "_filter_traceback_frames", None)
    if tracer is None or original is None:
        yield
        return

    def every_frame(self: Any, summary: traceback.StackSummary) -> traceback.StackSummary:
        forward_only = getattr(self, "_record_forward_stack_traces_only", False)
        self._record_forward_stack_traces_only = False
        try:
            frames = original(self, summary)
        finally:
            self._record_forward_stack_traces_only = forward_only
        # torch's own frames are never a node's span: drop them before torch formats the stack
        outside = [f for f in frames if not os.path.abspath(f.filename).startswith(_TORCH_DIR)]
        return traceback.StackSummary.from_list(outside) if outside else frames

    with _PATCH:
        tracer._filter_traceback_frames = every_frame
        try:
            yield
        finally:
            tracer._filter_traceback_frames = original
