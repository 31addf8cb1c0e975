"""What git says about the project's code (not about the notes): HEAD and the diff a
session made (`info`), what was already uncommitted when a session started (`snapshot`),
and whether a memory's files changed since the commit it was written at (`staleness`)."""
