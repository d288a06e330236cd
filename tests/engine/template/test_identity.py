"""A template's identity (name, version, content digest) remembered by content under a store's
cache directory: read back without parsing the file again, the same as parsed, and an entry
not as it is written read again from the bytes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statedir.engine import template
from statedir.engine.template import identity as template_identity
from statedir.files import yaml
from tests.support.util import ROOT

LINEAR = (ROOT / "templates" / "linear.yaml").read_bytes()


def _unparsable(*_: object, **__: object) -> object:
    raise AssertionError("parsed with ruamel")


def test_an_identity_is_read_back_from_the_cache_without_parsing(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = template.parse(LINEAR, "linear.yaml")
    want = ("linear", str(parsed.doc["version"]), parsed.digest)
    assert template_identity.identity(LINEAR, tmp_path) == want
    shipped = template_identity.shipped_known(tmp_path)
    assert shipped[("linear", want[1])].digest == want[2]
    assert len(list((tmp_path / "identities").rglob("*.json"))) == len(template.shipped_files())
    template_identity.identity.cache_clear()  # a new process: only the disk remembers
    monkeypatch.setattr(yaml, "load", _unparsable)
    assert template_identity.identity(LINEAR, tmp_path) == want
    assert template_identity.shipped_known(tmp_path) == shipped
    with pytest.raises(AssertionError):  # without the cache the bytes are parsed
        template_identity.identity(LINEAR + b"\n")


def test_a_file_that_is_no_template_is_remembered_as_none_and_a_damaged_entry_is_read_again(
        tmp_path: Path) -> None:
    assert template_identity.identity(b"just: data\n", tmp_path) is None
    assert template_identity.identity(b"just: data\n", tmp_path) is None
    raw = LINEAR + b"# another copy\n"
    want = template_identity.identity(raw)
    assert template_identity.identity(raw, tmp_path) == want
    template_identity.identity.cache_clear()
    entries = list((tmp_path / "identities").rglob("*.json"))
    for entry in entries:
        kind, canonical, plain = json.loads(entry.read_bytes())
        if plain is not None:
            entry.write_text(json.dumps([kind, canonical, ["linear", 1, "sha256:x"]]))  # not as written
    assert template_identity.identity(raw, tmp_path) == want
