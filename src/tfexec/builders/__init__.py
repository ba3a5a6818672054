"""The builders of the op groups catalogue v2 added, one module per family, and what every
builder shares (``operands``). ``tfexec.ops`` re-exports them all: that is where users
find every builder."""
