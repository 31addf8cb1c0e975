"""Records that say the same thing: auto-supersede (`supersede`, with its plan-reported-done
route in `plandone`), near-copies (`nearcopies`), and the records a new one is compared with,
each read once (`lookalikes`). Depends on the vault's notes only; meaning (embeddings) comes
in as a callable from the indexer."""
