"""`make demo`: the main job on a throwaway git project, printed as a user would see it.

init → two checkpoints → remember → search → show, each through the real `ocm` command.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

OCM = str(Path(sys.executable).parent / "ocm")


def run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> None:
    shown = " ".join(shlex.quote(part) for part in ["ocm", *cmd[1:]])
    bold, plain = ("\033[1m", "\033[0m") if sys.stdout.isatty() else ("", "")
    print(f"\n{bold}$ {shown}{plain}", flush=True)
    subprocess.run(cmd, cwd=cwd, env=env, check=True, input=stdin, text=True)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ocm-demo-") as tmp:
        project = Path(tmp) / "shop"
        project.mkdir()
        env = {**os.environ, "OCM_HOME": str(Path(tmp) / "home"), "COLUMNS": "100"}
        git(project, "init", "-q", "-b", "main")
        git(project, "config", "user.email", "demo@example.com")
        git(project, "config", "user.name", "Demo")
        (project / "app.py").write_text("print('shop')\n")
        git(project, "add", "app.py")
        git(project, "commit", "-q", "-m", "init")
        print(f"Demo project: {project} (a throwaway git repo)")

        run([OCM, "init"], project, env)
        run([OCM, "checkpoint", "--tool", "claude-code", "--slug", "stripe-webhooks",
             "--goal", "Make Stripe webhook handling idempotent and verify signatures.",
             "--done", "Added signature verification in src/payments/webhooks.py",
             "--pending", "Store idempotency keys in Redis",
             "--pending", "Replay the dead-letter queue",
             "--decision", "**Verify on the raw body:** FastAPI re-serialises parsed JSON"],
            project, env)
        (project / "src" / "payments").mkdir(parents=True)
        (project / "src" / "payments" / "webhooks.py").write_text("def handle(): ...\n")
        run([OCM, "checkpoint", "--done", "Store idempotency keys in Redis",
             "--summary", "Idempotency keys live 24 h in Redis (Stripe retries for 3 days "
             "but dedupes within 24 h)", "--status", "closed"], project, env)
        run([OCM, "remember", "Stripe's signature check needs the raw request body: read "
             "`await request.body()` before parsing JSON.", "--type", "gotcha",
             "--file", "src/payments/webhooks.py", "--tag", "stripe"], project, env)
        run([OCM, "search", "stripe signature webhooks"], project, env)
        run([OCM, "recall"], project, env)
        listed = subprocess.run([OCM, "list", "--json", "--limit", "1"], cwd=project, env=env,
                                check=True, capture_output=True, text=True).stdout
        session_id = __import__("json").loads(listed)[0]["id"]
        run([OCM, "show", session_id], project, env)
        print("\nThe notes are plain Markdown under "
              f"{project / '.openCodeMemory'}; delete .index/ and nothing is lost.")


if __name__ == "__main__":
    main()
