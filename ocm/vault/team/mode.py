"""Team mode: the project vault committed to git, so a team shares its memory.

`ocm team on` (or `ocm init --team`) writes two files inside the vault and edits one
outside it:

* `<vault>/.gitignore` keeps what is per machine out of the repository: the index, locks,
  the hook journal, temp and state files, Obsidian's settings, transcripts, and session
  notes unless they are shared (`--sessions`);
* `<vault>/.gitattributes` sends every note through ocm's merge driver (`merge=ocm-note`);
* the project's `.gitignore` stops ignoring the vault (the `.openCodeMemory/` line that
  `ocm init` added goes; `ocm team off` puts it back).

The driver itself is registered in the clone's `.git/config` (`merge.ocm-note.driver`), which
git never shares: every teammate runs `ocm init` once after cloning (it sees the vault is a
team vault and registers the driver). Without it git falls back to its ordinary line merge.
User-scope memories live in `~/.openCodeMemory`, outside every repository, and never go in.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..atomic import atomic_write_text
from ..errors import InvalidInput

MARKER = "# ocm team vault"
DRIVER = "ocm-note"
ATTRIBUTES = f"""{MARKER}: every note merges through ocm (`ocm init` registers the driver).
*.md merge={DRIVER}
"""
if TYPE_CHECKING:
    import subprocess

PER_MACHINE = ".install-manifest.json"  # what `ocm init --agents` wrote on this machine
_ALWAYS_IGNORED = [".index/", ".locks/", ".hooks/", ".ocm-state.json", ".ocm-tmp-*",
                   ".obsidian/", "transcripts/", PER_MACHINE]


def ignore_text(share_sessions: bool) -> str:
    lines = [f"{MARKER} (written by `ocm team on`): what stays on this machine.",
             "# Derived or per machine: the index, locks, the hook journal, temp and state",
             "# files, Obsidian's settings, conversation transcripts.",
             *_ALWAYS_IGNORED]
    if not share_sessions:
        lines += ["# Session notes are kept private (`ocm team on --sessions` shares them).",
                  "sessions/"]
    return "\n".join(lines) + "\n"


def is_team(vault_root: Path) -> bool:
    try:
        return (vault_root / ".gitignore").read_text(encoding="utf-8").startswith(MARKER)
    except (OSError, UnicodeDecodeError):
        return False


def shares_sessions(vault_root: Path) -> bool:
    try:
        text = (vault_root / ".gitignore").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return text.startswith(MARKER) and "sessions/" not in text.splitlines()


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import subprocess  # (here: a search, which imports this module, starts no git)

    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          timeout=30, check=False)


def in_git(root: Path) -> bool:
    out = _git(root, "rev-parse", "--is-inside-work-tree")
    return out.returncode == 0 and out.stdout.strip() == "true"


def driver_command(ocm_command: str) -> str:
    """The driver line git runs (through the shell). A driver that dies before it answers
    (kill -9, out of memory, an `ocm` path left stale after ocm moved: any exit above 1)
    must not leave the note as our side alone, which git would then keep silently: git's
    own line merge then writes both sides, with conflict markers, and the note stays
    unmerged for `ocm team resolve`. Exit 0 is a clean merge, 1 a conflict ocm wrote."""
    return (f"{ocm_command} merge-note %O %A %B %P; s=$?; [ $s -le 1 ] && exit $s; "
            "git merge-file -L ours -L base -L theirs %A %O %B; exit 1")


def register_driver(root: Path, ocm_command: str) -> bool:
    """Register the merge driver in this clone's git config; False if it already was."""
    driver = driver_command(ocm_command)
    current = _git(root, "config", "--local", "--get", f"merge.{DRIVER}.driver")
    if current.returncode == 0 and current.stdout.strip() == driver:
        return False
    for key, value in ((f"merge.{DRIVER}.name", "ocm note merge (fields and sections)"),
                       (f"merge.{DRIVER}.driver", driver)):
        out = _git(root, "config", "--local", key, value)
        if out.returncode != 0:
            raise InvalidInput(f"cannot register the merge driver: {out.stderr.strip()}")
    return True


def driver_registered(root: Path) -> bool:
    """The driver is registered, with its fallback (a line from before it is not)."""
    out = _git(root, "config", "--local", "--get", f"merge.{DRIVER}.driver")
    return out.returncode == 0 and "git merge-file" in out.stdout


def _project_ignore_lines(text: str, entry: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines())
            if line.strip() in (entry, entry.rstrip("/"), "/" + entry, "/" + entry.rstrip("/"))]


def enable(vault_root: Path, project_root: Path, ocm_command: str,
           share_sessions: bool = False) -> dict[str, object]:
    """Turn team mode on (again: brings the files up to date, changes nothing else)."""
    if not in_git(project_root):
        raise InvalidInput(f"{project_root} is not a git repository: team memory is shared "
                           "through git (run `git init` first)")
    if vault_root.parent != project_root:
        raise InvalidInput(f"the vault {vault_root} is not at the project root: only "
                           f"{project_root}/.openCodeMemory can be shared through its repo")
    changed: list[str] = []
    for name, text in ((".gitignore", ignore_text(share_sessions)),
                       (".gitattributes", ATTRIBUTES)):
        target = vault_root / name
        old = target.read_text(encoding="utf-8") if target.is_file() else None
        if old != text:
            atomic_write_text(target, text)
            changed.append(f"{vault_root.name}/{name}")
    gitignore = project_root / ".gitignore"
    if gitignore.is_file():
        raw = gitignore.read_bytes().decode("utf-8")
        hits = _project_ignore_lines(raw, f"{vault_root.name}/")
        if hits:
            lines = raw.splitlines(keepends=True)
            atomic_write_text(gitignore, "".join(ln for i, ln in enumerate(lines)
                                                 if i not in hits))
            changed.append(".gitignore")
    # Committed before the vault's .gitignore named it, git keeps tracking it (a teammate's
    # init shows it modified, an uninstall deleted): out of the index, kept on disk.
    manifest = f"{vault_root.name}/{PER_MACHINE}"
    if _git(project_root, "ls-files", "--error-unmatch", "--", manifest).returncode == 0:
        out = _git(project_root, "rm", "--cached", "-q", "--", manifest)
        if out.returncode == 0:
            changed.append(f"{manifest} (no longer tracked by git; the file stays)")
    registered = register_driver(project_root, ocm_command)
    return {"team": True, "share_sessions": share_sessions, "changed": changed,
            "driver_registered": registered}


def disable(vault_root: Path, project_root: Path) -> dict[str, object]:
    """Team mode off: the vault is ignored again; the notes stay where they are."""
    changed: list[str] = []
    for name in (".gitignore", ".gitattributes"):
        target = vault_root / name
        if target.is_file() and target.read_text(encoding="utf-8").startswith(MARKER):
            target.unlink()
            changed.append(f"{vault_root.name}/{name}")
    gitignore = project_root / ".gitignore"
    entry = f"{vault_root.name}/"
    raw = gitignore.read_bytes().decode("utf-8") if gitignore.is_file() else ""
    if not _project_ignore_lines(raw, entry):
        newline = "\r\n" if "\r\n" in raw else "\n"
        sep = "" if not raw or raw.endswith("\n") else newline
        atomic_write_text(gitignore, raw + sep + entry + newline)
        changed.append(".gitignore")
    _git(project_root, "config", "--local", "--remove-section", f"merge.{DRIVER}")
    tracked = _git(project_root, "ls-files", "--", vault_root.name).stdout.strip()
    return {"team": False, "changed": changed,
            "still_tracked": bool(tracked),
            "hint": (f"the notes are still in git: `git rm -r --cached {vault_root.name}` "
                     "stops tracking them (the files stay)") if tracked else ""}
