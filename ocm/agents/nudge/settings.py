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


SUPPORT = ("Claude Code, Codex and Gemini CLI (checked with the real programs) and Cursor "
           "(from its documentation) take one more turn to save the session; OpenCode, "
           "VS Code and Windsurf get none")
COST = "one extra model turn per turn with unsaved work (the saving calls and a closing word)"


def describe(vault_dir: str, env: dict[str, str]) -> tuple[str, str]:
    """`ocm doctor`'s line: (what is in force and what it costs, how to change it)."""
    current = mode(vault_dir, env)
    source = "OCM_NUDGES" if _word(env.get("OCM_NUDGES")) else "config.json or default"
    if current == OFF:
        return (f"off ({source}): the model is never asked to save the session",
                'OCM_NUDGES=end or {"nudges": "end"} in config.json')
    return (f"{current} ({source}): at the end of a turn with unsaved work, {SUPPORT}; "
            f"cost: {COST}", 'OCM_NUDGES=off or {"nudges": "off"} in config.json')
