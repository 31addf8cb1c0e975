"""`make e2e`: install the pinned host programs from npm into a cache, then run the
end-to-end tests inside a fresh network namespace (only loopback, brought up) where the
machine allows it, so the programs can reach nothing but the mock model on 127.0.0.1.

Without node or npm it says so and exits 0 (nothing to test against). A program that fails
to install is reported and its tests skip; the others still run.

`--hosts WORDS` (`make e2e HOSTS=WORDS`) picks hosts and versions, comma-separated: `pinned`
(the default: every host at the version pinned in `hosts.py`), `latest` (every host at the
newest version npm publishes), host names (`claude-code,copilot`: only those, pinned), and
`name@version` or `name@latest` for one host."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests_e2e.hosts import CACHE, CHOSEN, PINNED, Host

NETNS = "OCM_E2E_NETNS"


def install(host: Host) -> bool:
    if host.installed_version() == host.version and host.exe.exists():
        return True
    host.prefix.mkdir(parents=True, exist_ok=True)
    manifest = host.prefix / "package.json"
    if not manifest.exists():  # npm wants one where a package has install scripts (droid)
        manifest.write_text('{"private": true}\n')
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


def newest(host: Host) -> str | None:
    """The version npm's `latest` tag names now (None when npm cannot say)."""
    out = subprocess.run(["npm", "view", host.package, "version"], capture_output=True,
                         text=True)
    version = out.stdout.strip().splitlines()[-1:] if out.returncode == 0 else []
    return version[0] if version else None


def choose(words: str) -> list[Host] | str:
    """The hosts `--hosts` names (see the module's doc), or a one-line error."""
    picked: dict[str, str] = {}
    every_latest = False
    for word in (w.strip() for w in words.split(",") if w.strip()):
        name, _, version = word.partition("@")
        if name in ("pinned", "latest") and not version:
            every_latest = every_latest or name == "latest"
            continue
        if name not in PINNED:
            return f"unknown host {name!r} in --hosts: expected {', '.join(PINNED)}, " \
                   "pinned or latest"
        picked[name] = version or ""
    names = list(picked) or list(PINNED)
    hosts = []
    for name in names:
        version = picked.get(name) or ("latest" if every_latest else PINNED[name].version)
        if version == "latest":
            found = newest(PINNED[name])
            if found is None:
                return f"npm could not tell the newest version of {PINNED[name].package}"
            version = found
        hosts.append(Host(name, PINNED[name].package, version, PINNED[name].binary))
    return hosts


def main(argv: list[str]) -> int:
    words = ""
    if argv[:1] == ["--hosts"]:
        words, argv = (argv[1] if len(argv) > 1 else ""), argv[2:]
    missing = [tool for tool in ("node", "npm") if not shutil.which(tool)]
    if missing:
        print(f"e2e: SKIPPED: {' and '.join(missing)} not found on PATH; the end-to-end "
              "tests drive the real host programs, which are installed from npm")
        return 0
    print(f"e2e: host programs cache: {CACHE}", flush=True)
    hosts = choose(words)
    if isinstance(hosts, str):
        print(f"e2e: {hosts}", file=sys.stderr)
        return 2
    print("e2e: hosts: " + ", ".join(f"{h.name} {h.version}" for h in hosts), flush=True)
    for host in hosts:
        install(host)
    prefix = namespace_prefix()
    env = dict(os.environ)
    env[CHOSEN] = ",".join(f"{h.name}@{h.version}" for h in hosts)
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
