"""A rule's gate (a cheap pattern that the lowered text holds wherever the rule matches,
redact.py) only skips work: where the gate is not found, the rule's own pattern finds nothing.
(tests/test_redact_scan.py checks every gate on a large corpus; these texts are .pgpass's.)"""

from __future__ import annotations

import random

from ocm.vault.secrets.redact import _gate, _lowered, find_secrets


def _gated():  # -> the rules that have a gate
    return [rule for rule in _gate().rules if rule.gate is not None]


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


def test_a_gated_rule_finds_nothing_where_its_gate_is_missing() -> None:
    rules = _gated()
    assert rules, "no rule has a gate: this test checks nothing"
    found = 0
    for rule in rules:
        for text in _texts():
            matched = rule.pattern.search(text) is not None
            assert rule.gate.search(_lowered(text)) is not None or not matched, (rule.kind, text)
            found += matched and rule.kind == "pgpass_password"
    assert found > 10  # the texts do hold matches, not only near misses


def test_a_pgpass_line_is_still_redacted_beside_timestamps() -> None:
    text = "started_at: 2025-09-02T16:18:39\ndb.example.com:5432:*:alice:s3cr3tPw\n"
    assert [kind for kind, _, _ in find_secrets(text)] == ["pgpass_password"]
    assert find_secrets("started_at: 2025-09-02T16:18:39\nended_at: 2025-09-02T16:35:39\n") == []


def test_a_pgpass_line_typed_into_a_note_never_reaches_the_index(project) -> None:
    """Typed into a note by hand beside the frontmatter's timestamps (which the gate's
    `:digits:` also meets), through a full rebuild: the note is indexed, its secret is not;
    a broken note beside it is reported and skipped, and breaks nothing."""
    import random as rand

    for i in range(3):
        project.remember(f"Fact {i} about the replica lag", "gotcha")
    root = project.vault.root
    notes = sorted((root / "memories" / "gotcha").glob("*.md"))
    rng = rand.Random(7)  # made at run time: nothing here for a secret scanner
    secret = "Zq" + "".join(rng.choice("abcdefghkmnpqrstuvwxyz23456789") for _ in range(14))
    notes[0].write_text(notes[0].read_text()
                        + f"\nreplica.example.com:5432:*:alice:{secret}\nzebra\n")
    broken = root / "memories" / "gotcha" / "broken-note.md"
    broken.write_text("---\nid: [unclosed\n---\nzebra\n")
    report = project.rebuild_index()
    assert "memories/gotcha/broken-note.md" in report.broken
    assert [hit.path for hit in project.search("zebra")] == [notes[0]]
    blobs = [p.read_bytes() for p in (root / ".index").rglob("*") if p.is_file()]
    assert blobs and not any(secret.encode() in b or secret.lower().encode() in b for b in blobs)
