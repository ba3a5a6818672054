"""The inductor crash ``tfexec fuzz`` found, in plain torch (torch 2.13.0+cpu): ``cumsum``
of a 0-d tensor made inside the compiled graph raises ``InductorError: IndexError: tuple
index out of range``; eager returns the value. ``cumprod`` of it, ``cumsum`` of a 0-d
graph input and of a 1-element 1-d tensor all compile."""

import torch


def made_inside() -> torch.Tensor:
    return torch.cumsum(torch.full((), 2.0), 0)


print("eager:", made_inside())
try:
    print("inductor:", torch.compile(made_inside, backend="inductor")())
except Exception as exc:  # the bug: expected tensor(2.)
    print("inductor raised", type(exc).__name__, str(exc).splitlines()[0])
