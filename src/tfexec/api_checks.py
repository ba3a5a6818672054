"""Runtime checking of the public API's arguments with beartype.

``@public`` checks a documented entry point's arguments against its annotations, so a
wrong kind of argument is a ``TypeError`` naming the function, the parameter, what it
expects and what it got — at the boundary, not as a deep ``AttributeError`` later
(architecture.md, "Runtime checking").
"""

import functools
import inspect
import typing
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from tfexec.errors import ArgumentTypeError

P = ParamSpec("P")
R = TypeVar("R")


def public(fn: Callable[P, R]) -> Callable[P, R]:
    """Check ``fn``'s arguments against its annotations; a violation is an ``ArgumentTypeError``.

    beartype builds its checker at ``fn``'s first call, not at import: most commands call few of
    the public functions, and building every checker (with beartype itself) is a tenth of a
    second of ``import tfexec``."""
    checker: list[tuple[Callable[P, R], type[Exception]]] = []

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if not checker:
            from beartype import BeartypeConf, beartype
            from beartype.roar import BeartypeCallHintParamViolation

            # PEP 484's numeric tower: an ``int`` is accepted where a ``float`` is annotated.
            checker.append((beartype(conf=BeartypeConf(is_pep484_tower=True))(fn), BeartypeCallHintParamViolation))
        checked, violation = checker[0]
        try:
            return checked(*args, **kwargs)
        except violation as exc:
            raise ArgumentTypeError(_message(fn, args, kwargs, exc)) from None

    return wrapper


def _message(fn: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object], exc: Exception) -> str:
    from beartype.door import is_bearable

    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "function"))
    try:
        hints = typing.get_type_hints(fn)
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, NameError):
        return str(exc)
    for param, value in bound.arguments.items():
        hint = hints.get(param)
        kind = inspect.signature(fn).parameters[param].kind
        if hint is None:
            continue
        values = value if kind is inspect.Parameter.VAR_POSITIONAL else (value,)
        for v in values:
            if not is_bearable(v, hint):
                hint_text = _HINTS.get(type(v).__name__, "")
                return f"{name}(): argument {param} must be {_spell(hint)}, got {type(v).__name__} {_short(v)}{hint_text}"
    return str(exc)


_HINTS = {
    "IRModule": " (select a function with module.entry_function or module.functions[name], or bind its weights with LoadedModule.from_reading)",
}


def _spell(hint: object) -> str:
    text = str(hint) if not isinstance(hint, type) else hint.__name__
    for prefix in ("tfexec.ir.expr.", "tfexec.ir.types.", "tfexec.loading.loaded.", "tfexec.ir.module.", "typing.", "os."):
        text = text.replace(prefix, "")
    return text


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
