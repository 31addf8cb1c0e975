"""Local, naive timestamps written as `YYYY-MM-DDTHH:MM:SS` (the form Obsidian recognises)."""

from __future__ import annotations

import os
from datetime import date, datetime

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S"


def now() -> datetime:
    """Current local time to the second; `OCM_NOW` pins it (demos, benchmarks, tests)."""
    pinned = os.environ.get("OCM_NOW")
    if pinned:
        return parse_timestamp(pinned) or datetime.now().replace(microsecond=0)
    return datetime.now().replace(microsecond=0)


def format_timestamp(value: datetime) -> str:
    return value.strftime(TIMESTAMP_FORMAT)


def parse_timestamp(value: object) -> datetime | None:
    """Accept what YAML or a person may have written; naive local time, or None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        stamp = value
    elif isinstance(value, date):
        stamp = datetime(value.year, value.month, value.day)
    else:
        try:
            stamp = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone().replace(tzinfo=None)
    return stamp.replace(microsecond=0)
