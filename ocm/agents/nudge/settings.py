"""`nudges: off | end | all`: `OCM_NUDGES` first, then the vault's `config.json`; `end`
(at the end of a turn only) by default."""

from __future__ import annotations

import json
import os

OFF, END, ALL = "off", "end", "all"
MODES = (OFF, END, ALL)
DEFAULT = END
CONFIG = "config.json"
_ALIASES = {"0": OFF, "false": OFF, "no": OFF, "none": OFF, "1": END, "true": END, "yes": END,
            "on": END, "stop": END}


def _word(value: object) -> str | None:
    if value is False:
        return OFF
    if value is True:
        return END
    if not isinstance(value, str) or not value.strip():
        return None
    word = value.strip().lower()
    return word if word in MODES else _ALIASES.get(word)


def mode(vault_dir: str, env: dict[str, str]) -> str:
    """The nudge mode in force; an unknown word falls through to the next source."""
    from_env = _word(env.get("OCM_NUDGES"))
    if from_env:
        return from_env
    try:
        with open(os.path.join(vault_dir, CONFIG), encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        return DEFAULT
    return (_word(config.get("nudges")) if isinstance(config, dict) else None) or DEFAULT
