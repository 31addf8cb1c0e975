"""What a caller hands the vault, made fit to write before any byte reaches disk: valid
Unicode (a lone surrogate is refused), every secret redacted (ocm/vault/secrets/redact.py)."""

from __future__ import annotations

from ..errors import InvalidInput
from ..sessions import CheckpointInput, PlanFile, Reference


def clean(text: str) -> str:
    # Imported here: its ~20 patterns cost ~10 ms to compile, and reads never redact.
    from .redact import redact

    if not text.isascii() and text.encode("utf-8", "replace").decode() != text:
        raise InvalidInput("text is not valid Unicode (it holds a lone surrogate)")
    return redact(text)


def clean_list(items: list[str] | None) -> list[str] | None:
    return None if items is None else [clean(item) for item in items]


def clean_checkpoint(inp: CheckpointInput) -> CheckpointInput:
    return CheckpointInput(
        slug=clean(inp.slug) if inp.slug else inp.slug,
        goal=clean(inp.goal) if inp.goal else inp.goal,
        work_completed=clean_list(inp.work_completed),
        work_pending=clean_list(inp.work_pending),
        work_summary=clean_list(inp.work_summary), decisions=clean_list(inp.decisions),
        plan_files=None if inp.plan_files is None else [
            PlanFile(clean(p.path), clean(p.header)) for p in inp.plan_files],
        references=None if inp.references is None else [
            Reference(clean(r.url), clean(r.title)) for r in inp.references],
        diff_summary=clean(inp.diff_summary) if inp.diff_summary else inp.diff_summary,
        status=inp.status, trigger=inp.trigger, tags=clean_list(inp.tags),
    )
