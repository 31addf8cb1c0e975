"""What every note view shares: its parsed document and typed frontmatter reads."""

from __future__ import annotations

from typing import Any

from .markdown import Document


class NoteView:
    def __init__(self, doc: Document) -> None:
        self.doc = doc

    @property
    def fm(self) -> dict[str, Any]:
        return self.doc.frontmatter.data

    def prop(self, key: str, default: str = "") -> str:
        """A frontmatter value as text (YAML may have typed it), `default` when unset."""
        value = self.fm.get(key)
        return default if value is None or value == "" else str(value)

    @property
    def id(self) -> str:
        return self.prop("id")
