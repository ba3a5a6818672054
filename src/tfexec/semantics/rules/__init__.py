"""Value rules of the op catalogue, one module per op group; importing this registers them."""

from tfexec.semantics.rules import (  # noqa: F401 - imported for their registrations
    creation,
    dimarith,
    distribution,
    elementwise,
    linalg,
    norm,
    reduction,
    shape,
)
