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


def _config(vault_dir: str) -> dict[str, object]:
    try:
        with open(os.path.join(vault_dir, CONFIG), encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}


def mode(vault_dir: str, env: dict[str, str]) -> str:
    """The nudge mode in force; an unknown word falls through to the next source."""
    from_env = _word(env.get("OCM_NUDGES"))
    if from_env:
        return from_env
    return _word(_config(vault_dir).get("nudges")) or DEFAULT


# Count-based fallback (seed 004 §15): edits without a checkpoint before the next prompt
# asks for one. 10: the recorded and e2e sessions make 2-5 edits for a small fix, so one
# small task never triggers it, while a feature-sized change (tens of edits) is saved every
# ten edits or so: one extra model turn per such stretch, not per prompt.
EDITS_DEFAULT = 10


def edits_threshold(vault_dir: str, env: dict[str, str]) -> int:
    """`OCM_NUDGE_EDITS`, then `nudge_edits` in config.json, then EDITS_DEFAULT; a value
    that is not a whole number >= 1 falls through to the next source."""
    for value in (env.get("OCM_NUDGE_EDITS"), _config(vault_dir).get("nudge_edits")):
        try:
            number = int(str(value).strip()) if value is not None and value is not True else 0
        except ValueError:
            continue
        if number >= 1:
            return number
    return EDITS_DEFAULT


SUPPORT = ("Claude Code, Codex and Gemini CLI (checked with the real programs) and Cursor "
           "(from its documentation) take one more turn to save the session; Copilot CLI is "
           "asked at the next prompt after OCM_NUDGE_EDITS edits; OpenCode, VS Code and "
           "Windsurf get none")
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
