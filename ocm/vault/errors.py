"""User-facing errors: each carries a one-line message naming the problem."""


class OcmError(Exception):
    """Base class for every error shown to a user or an agent as-is."""


class InvalidInput(OcmError):
    """Bad arguments: unknown type, bad id, oversized content, …"""


class NotFound(OcmError):
    """No note with that id."""


class Conflict(OcmError):
    """The operation clashes with the vault's current state (active key, already resolved…)."""


class NoteFormatError(OcmError):
    """A note on disk cannot be parsed; it is reported and never overwritten."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem
