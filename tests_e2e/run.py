"""`make e2e`: install the pinned host programs from npm into a cache, then run the
end-to-end tests inside a fresh network namespace (only loopback, brought up) where the
machine allows it, so the programs can reach nothing but the mock model on 127.0.0.1.

Without node or npm it says so and exits 0 (nothing to test against). A program that fails
to install is reported and its tests skip; the others still run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests_e2e.hosts import CACHE, HOSTS, Host

NETNS = "OCM_E2E_NETNS"


def install(host: Host) -> bool:
    if host.installed_version() == host.version and host.exe.exists():
        return True
    host.prefix.mkdir(parents=True, exist_ok=True)
    print(f"e2e: installing {host.package}@{host.version} into {host.prefix}", flush=True)
    out = subprocess.run(["npm", "install", "--prefix", str(host.prefix), "--no-audit",
                          "--no-fund", "--no-save", "--loglevel=error",
                          f"{host.package}@{host.version}"], capture_output=True, text=True)
    if out.returncode != 0 or not host.exe.exists():
        print(f"e2e: could not install {host.package}@{host.version}: "
              f"{(out.stderr or out.stdout).strip().splitlines()[-1:]}", flush=True)
        return False
    return True


def namespace_prefix() -> list[str]:
    """`unshare -n` (as root) or `unshare -rn` (user namespace), with loopback up; [] when
    neither works here."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        return []
    up = ["sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    for flags in (["-n"], ["-r", "-n"]):
        probe = subprocess.run(["unshare", *flags, *up, "true"], capture_output=True)
        if probe.returncode == 0:
            return ["unshare", *flags, *up]
    return []


def main(argv: list[str]) -> int:
    missing = [tool for tool in ("node", "npm") if not shutil.which(tool)]
    if missing:
        print(f"e2e: SKIPPED: {' and '.join(missing)} not found on PATH; the end-to-end "
              "tests drive the real host programs, which are installed from npm")
        return 0
    print(f"e2e: host programs cache: {CACHE}", flush=True)
    for host in HOSTS.values():
        install(host)
    prefix = namespace_prefix()
    env = dict(os.environ)
    if prefix:
        env[NETNS] = "1"
        print("e2e: running in a new network namespace (loopback only)", flush=True)
    else:
        print("e2e: WARNING: cannot create a network namespace here (unshare -n); the "
              "programs run on the host network, pointed at the mock on 127.0.0.1", flush=True)
    cmd = [*prefix, sys.executable, "-m", "pytest", "tests_e2e", "-o", "addopts=", "-v", "-rs",
           "-p", "no:cacheprovider",
           # Kept until the next run: each host's project, HOME and requests.jsonl.
           f"--basetemp={CACHE / 'last-run'}", *argv]
    return subprocess.run(cmd, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
