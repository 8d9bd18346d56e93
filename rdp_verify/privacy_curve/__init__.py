"""Privacy curves of whole event trees: the one table from events to proofs, the bracket, its certificate."""
