"""A rule's gate (a cheap pattern every match of the rule contains, redact.py) only skips
work: on any text, the rule finds exactly what its own pattern finds without the gate."""

from __future__ import annotations

import random

from ocm.vault.secrets.redact import _gate, find_secrets


def _gated():  # -> the rules that have a gate
    return [rule for rule in _gate()[0] if rule.gate is not None]


def _texts() -> list[str]:
    rng = random.Random(29)
    # The characters a .pgpass line is made of, and what ends or breaks one.
    alphabet = "a1f9Z:*.@-_\\ \t\n\"'>:::5432"
    texts = ["db.example.com:5432:*:alice:s3cr3tPw\n", "localhost:*:app:bob:pa55w0rd",
             'x "host:1:db:user:Passw0rd!" y', "started_at: 2025-09-02T16:18:39\n",
             "fe80:0:0:0:beef1234", "h:99999:d:u:zz9zz9zz", "h:123456:d:u:zz9zz9zz"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
              for _ in range(2000)]

    def word() -> str:
        return "".join(rng.choice("aZ9f.*-_@\\:") for _ in range(rng.randint(0, 9)))

    # .pgpass-shaped lines, then each with a few characters changed.
    for _ in range(2000):
        secret = "".join(rng.choice("aZ9xq@.-") for _ in range(rng.randint(3, 12)))
        line = ":".join([word(), rng.choice(["5432", "*", "123456", "", "x"]), word(),
                         word(), rng.choice([word(), secret])])
        chars = list(rng.choice(["", " ", '"', ">", "x"]) + line + rng.choice(["", "\n", "'"]))
        for _ in range(rng.randint(0, 2)):
            chars[rng.randrange(len(chars))] = rng.choice(alphabet)
        texts.append("".join(chars))
    return texts


def test_a_gated_rule_finds_what_its_pattern_finds() -> None:
    rules = _gated()
    assert rules, "no rule has a gate: this test checks nothing"
    found = 0
    for rule in rules:
        gate = rule.gate
        for text in _texts():
            with_gate = rule.spans(text)
            rule.gate = None
            try:
                assert rule.spans(text) == with_gate, (rule.kind, text)
            finally:
                rule.gate = gate
            found += bool(with_gate)
    assert found > 10  # the texts do hold matches, not only near misses


def test_a_pgpass_line_is_still_redacted_beside_timestamps() -> None:
    text = "started_at: 2025-09-02T16:18:39\ndb.example.com:5432:*:alice:s3cr3tPw\n"
    assert [kind for kind, _, _ in find_secrets(text)] == ["pgpass_password"]
    assert find_secrets("started_at: 2025-09-02T16:18:39\nended_at: 2025-09-02T16:35:39\n") == []
