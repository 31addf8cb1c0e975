"""`make e2e`'s browser step: the dashboard tests (tests_e2e/test_ui_browser.py) in a fresh
network namespace where the machine allows it (loopback only: the browser reaches nothing but
`ocm ui` on 127.0.0.1), with Debian's chromium (the Makefile installs it with apt-get)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests_e2e.run import namespace_prefix

CHROMIUM = "/usr/bin/chromium"


def main(argv: list[str]) -> int:
    chromium = os.environ.get("OCM_CHROMIUM") or CHROMIUM
    if not shutil.which(chromium):
        print(f"e2e ui: SKIPPED: no chromium at {chromium} (apt-get install chromium)")
        return 0
    env = {**os.environ, "OCM_E2E_BROWSER": "1", "OCM_CHROMIUM": chromium}
    prefix = namespace_prefix()
    print("e2e ui: " + ("in a new network namespace (loopback only)" if prefix else
                        "WARNING: no network namespace here; the browser runs on the host "
                        "network and is pointed at 127.0.0.1 only"), flush=True)
    cmd = [*prefix, sys.executable, "-m", "pytest", "tests_e2e/test_ui_browser.py", "-o",
           "addopts=", "-v", "-rs", "-p", "no:cacheprovider", *argv]
    return subprocess.run(cmd, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
