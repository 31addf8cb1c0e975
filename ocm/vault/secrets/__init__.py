"""Secrets: recognised in any text and redacted before anything else touches it."""
