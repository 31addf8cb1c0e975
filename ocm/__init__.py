"""openCodeMemory: local, persistent memory for AI coding assistants.

Kept import-free on purpose: the hook entry point imports `ocm` and must stay fast.
"""

__version__ = "0.1.0"
