"""Local, naive timestamps written as `YYYY-MM-DDTHH:MM:SS` (the form Obsidian recognises).

A local time says nothing of the zone it was read in: after travel or a DST change an older
session can carry the later local time. So a session also records its start in UTC
(`started_at_utc: YYYY-MM-DDTHH:MM:SSZ`), and "which is newest" compares `instant`s: that
UTC time where a note has it, else its local time read in today's zone (the order before).
Memory records do the same for their stamps: `created_utc` beside `created`, `updated_utc`
beside `updated` (what a supersede, a resolve or a team merge's repair stamps).
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S"
UTC_FORMAT = TIMESTAMP_FORMAT + "Z"
# A UTC stamp further than this from its local twin was left behind when a person edited the
# local one (no zone is more than 14 hours from UTC): the local one is read instead.
_MAX_OFFSET = timedelta(hours=14)
# Before every instant: what a note without a stamp sorts as, beside `instant`s.
NEVER = datetime.min.replace(tzinfo=UTC)


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


def local_time(moment: datetime | None) -> datetime | None:
    """A true instant as naive local time in the zone this process runs in (what people
    read, and what orders correctly beside other stamps read the same way)."""
    return moment.astimezone().replace(tzinfo=None) if moment else None


def utc_timestamp(local: datetime) -> str:
    """A naive local time (read in the zone this process runs in) as `…Z` UTC text."""
    return local.astimezone(UTC).strftime(UTC_FORMAT)


def instant(utc_value: object, local_value: object) -> datetime | None:
    """The true moment of a stamp, aware: `utc_value` (a `…Z` or offset time; one without
    a zone is taken as UTC) where it parses and lies within 14 hours of `local_value`, else
    `local_value` read in today's zone."""
    stamp: datetime | None = None
    if isinstance(utc_value, datetime):
        stamp = utc_value
    elif isinstance(utc_value, str) and utc_value.strip():
        try:
            stamp = datetime.fromisoformat(utc_value.strip().replace("Z", "+00:00"))
        except ValueError:
            stamp = None
    local = parse_timestamp(local_value)
    if stamp is not None:
        stamp = (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).astimezone(UTC)
        if local is None or abs(local - stamp.replace(tzinfo=None)) <= _MAX_OFFSET:
            return stamp
    return local.astimezone(UTC) if local else None
