"""What `ocm-hook` reads from stdin: at most `MAX_PAYLOAD_BYTES` (a larger payload is logged
and ignored). Its own module, without imports, so the entry point (ocm/hook.py) can read
stdin before it decides whether to load the dispatcher at all."""

MAX_PAYLOAD_BYTES = 8_000_000
