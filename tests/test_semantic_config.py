"""The vault's `semantic` switch (config.json) is read again only when the file changed,
and every change is seen: a new file, a rewrite of the same size (also one whose mtime was
set back), a deleted or unreadable one."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path

import pytest

from ocm.indexer import embed


@pytest.fixture(autouse=True)
def _no_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embed.SEMANTIC_ENV, raising=False)


def _write(path: Path, text: str, age_s: float = 0.0) -> None:
    path.write_text(text, encoding="utf-8")
    if age_s:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - int(age_s * 1e9)))


def test_every_change_of_config_json_is_seen(tmp_path: Path) -> None:
    config = tmp_path / embed.CONFIG
    assert embed.enabled(tmp_path)  # no file: on
    _write(config, '{"semantic":false}')  # 18 bytes, just written
    assert not embed.enabled(tmp_path)
    _write(config, '{"semantic": true}')  # same size, same inode, within the racy window
    assert embed.enabled(tmp_path)
    _write(config, '{"semantic":false}', age_s=2.0)  # an older file: kept after this read
    assert not embed.enabled(tmp_path)
    assert not embed.enabled(tmp_path)
    # Rewritten in place at the same size with its mtime put back: its ctime moved.
    before = config.stat()
    _write(config, '{"semantic": true}')
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert config.stat().st_size == before.st_size
    assert config.stat().st_mtime_ns == before.st_mtime_ns
    assert embed.enabled(tmp_path)
    config.unlink()
    assert embed.enabled(tmp_path)
    config.mkdir()  # unreadable: the default
    assert embed.enabled(tmp_path)
    config.rmdir()
    _write(config, "{not json", age_s=2.0)
    assert embed.enabled(tmp_path)
    assert embed.switch(tmp_path) == "default"


def test_an_unchanged_config_json_is_not_read_again(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / embed.CONFIG, json.dumps({"semantic": False}), age_s=2.0)
    opened: list[str] = []

    def counting_open(file, *args, **kwargs):  # noqa: ANN001, ANN202 - open's own signature
        opened.append(str(file))
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(embed, "open", counting_open, raising=False)
    assert [embed.enabled(tmp_path) for _ in range(3)] == [False, False, False]
    assert embed.switch(tmp_path) == '"semantic": false in config.json'
    assert opened.count(str(tmp_path / embed.CONFIG)) == 1
    # A file just written is read each time until it is older than the racy window.
    _write(tmp_path / embed.CONFIG, json.dumps({"semantic": True}))
    opened.clear()
    assert [embed.enabled(tmp_path) for _ in range(2)] == [True, True]
    assert opened.count(str(tmp_path / embed.CONFIG)) == 2
