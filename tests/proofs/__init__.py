"""Tests backing proofs_notes/: one or more per lemma of the lowering's equivalence theorem."""
