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
from tfexec.semantics.rules import (  # noqa: F401 - catalogue v2, one module per op group
    activation,
    aggregate,
    attention,
    channel_norm,
    conv,
    indexing,
    integer,
    pool,
    rearrange,
    rounding,
    scan,
    sorting,
    unary_math,
)
