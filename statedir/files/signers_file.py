"""The store's signers file: which actor is bound to which SSH public key.

`signers.yaml` is the one source of truth for the binding. git and ssh-keygen read the same
binding in their own allowed-signers format, which `allowed_signers()` renders from it (the
actor is the principal, the namespace is git's).
"""
# Lazy imports: hashlib (OpenSSL, about 3 ms), for a key's fingerprint: a transition asks for one only where a bound
#   actor's key is refused (statedir.store.commit_keys), and loads no hashlib otherwise (tests/test_architecture.py).
#   Base64 is binascii's (what base64's functions call), which the CLI loads anyway.
from __future__ import annotations

import binascii
from typing import Any

from statedir.errors import CorruptStore, InvalidValue
from statedir.files import schema, yaml, yaml_fast_reader

FILE = "signers.yaml"
KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
             "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com")


class Signers:
    """The parsed file: entries of {actor, key[, comment]}, keys as `type base64`, and the
    actors whose signed acknowledgements of verify findings count on every clone."""

    def __init__(self, entries: list[dict[str, str]] | None = None, acknowledgers: list[str] | None = None) -> None:
        self.entries = [] if entries is None else entries
        self.acknowledgers = [] if acknowledgers is None else acknowledgers

    def __eq__(self, other: object) -> bool:  # as a dataclass (whose import pulls in inspect) would be
        if other.__class__ is not Signers:
            return NotImplemented
        return (self.entries, self.acknowledgers) == (other.entries, other.acknowledgers)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"Signers(entries={self.entries!r}, acknowledgers={self.acknowledgers!r})"

    @classmethod
    def of(cls, data: Any) -> Signers:
        entries = data.get("signers") if isinstance(data, dict) else None
        acknowledgers = data.get("acknowledgers") if isinstance(data, dict) else None
        return cls([dict(e) for e in entries or []], [str(a) for a in acknowledgers or []])

    def acknowledging_keys(self) -> set[str]:
        """The keys whose signed acknowledgement counts on every clone: the acknowledgers' keys."""
        return {e["key"] for e in self.entries if e["actor"] in self.acknowledgers}

    def keys_of(self, actor: str) -> set[str]:
        return {e["key"] for e in self.entries if e["actor"] == actor}

    def actors_of(self, key: str) -> list[str]:
        return sorted({e["actor"] for e in self.entries if e["key"] == key})

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format_version": 1, "signers": self.entries}
        if self.acknowledgers:  # a file that names none keeps the bytes it always had
            out["acknowledgers"] = self.acknowledgers
        return out

    def allowed_signers(self) -> str:
        """git's allowed-signers format (ssh-keygen's ALLOWED SIGNERS): `principal namespaces="git" key`."""
        return "".join(f'{e["actor"]} namespaces="git" {e["key"]}\n' for e in self.entries)


def may_change(before: Signers | None, after: Signers) -> tuple[set[str], str, Signers]:
    """Who may sign the change of the file from `before` to `after`: (the keys, one of which
    must sign; the rule in words; the version that binds those keys). The write path and
    verify both ask it.

    - A first version (the file listed nobody before) is signed by a key it lists itself.
    - A change to an actor's binding (a key added, removed or its comment edited) is signed
      by one of that actor's own keys, so no other key can take an actor over.
    - Binding a new actor, or any other change, is signed by a key the file already trusts.
    - Changing who acknowledges (the acknowledgers, or a first key for an actor named one) is
      signed by an acknowledger's key where one is bound, else by a key the file already trusts.
    """
    if before is None or not before.entries:
        return {e["key"] for e in after.entries}, f"the first {FILE} must be signed by a key it lists", after
    keys = {e["key"] for e in before.entries}
    rules = []
    for actor in sorted({e["actor"] for e in [*before.entries, *after.entries]}):
        own = before.keys_of(actor)
        if own and _binding(before, actor) != _binding(after, actor):
            keys &= own
            rules.append(f"the binding of {actor} changes only with one of {actor}'s own keys")
    newly = {e["actor"] for e in after.entries} - {e["actor"] for e in before.entries}
    if before.acknowledgers != after.acknowledgers or newly & set(after.acknowledgers):
        acknowledging = before.acknowledging_keys()
        if acknowledging:
            keys &= acknowledging
            rules.append("who acknowledges changes only with an acknowledger's key")
    rule = "; ".join(rules) or f"a change to {FILE} must be signed by a key it already trusts"
    return keys, rule, before


def _binding(signers: Signers, actor: str) -> list[tuple[str, str]]:
    return sorted((e["key"], e.get("comment", "")) for e in signers.entries if e["actor"] == actor)


def parse(raw: bytes) -> Signers:
    """The file's bytes, checked against its schema (CORRUPT_STORE where they fail it)."""
    ref = ".schemas/signers.schema.json"
    data = yaml_fast_reader.read_own(raw, ref)
    if data is yaml_fast_reader.FOREIGN:  # edited by hand: ruamel reads it
        data = yaml.to_plain(yaml.load(raw, FILE))
    problems = schema.validate("signers", data, FILE)
    if problems:
        raise CorruptStore(f"{problems[0]}", file=FILE)
    return Signers.of(data)


def public_key(text: str) -> tuple[str, str]:
    """(`type base64`, comment) of a public key as a .pub file or `ssh-add -L` writes it;
    INVALID_VALUE where it is not one (a private key, a fingerprint, a truncated paste). The
    text may be any file's: no message repeats it (only a key type it recognised)."""
    parts = text.strip().split(None, 2)
    if "PRIVATE KEY" in text:
        raise InvalidValue("that is a private key; give the public key (the .pub file)")
    if len(parts) < 2 or parts[0] not in KEY_TYPES:
        raise InvalidValue(f"not an SSH public key (expected one line like 'ssh-ed25519 AAAA... comment'; "
                           f"types: {', '.join(KEY_TYPES)})")
    try:
        blob = binascii.a2b_base64(parts[1], strict_mode=True)  # base64.b64decode(validate=True)
    except (binascii.Error, ValueError):
        raise InvalidValue(f"the {parts[0]} key's base64 is damaged") from None
    if _string(blob, 0)[0] != parts[0].encode():
        raise InvalidValue(f"the key's data is not a {parts[0]} key (damaged or edited)")
    return f"{parts[0]} {parts[1]}", (parts[2].strip() if len(parts) > 2 else "")


def key_of_blob(blob: bytes) -> str:
    """`type base64` of a public key's wire blob."""
    kind = _string(blob, 0)[0].decode("ascii", "replace")
    return f"{kind} {binascii.b2a_base64(blob, newline=False).decode()}"  # base64.b64encode


def fingerprint(key: str) -> str:
    """ssh-keygen's SHA256 fingerprint of a `type base64` key."""
    import hashlib

    blob = binascii.a2b_base64(key.split()[1])  # base64.b64decode
    return "SHA256:" + binascii.b2a_base64(hashlib.sha256(blob).digest(), newline=False).decode().rstrip("=")


def _string(data: bytes, pos: int) -> tuple[bytes, int]:
    """One SSH wire-format string at `pos`: (its bytes, the position after it)."""
    if pos + 4 > len(data):
        raise InvalidValue("truncated SSH data")
    size = int.from_bytes(data[pos:pos + 4], "big")  # struct's ">I"
    if pos + 4 + size > len(data):
        raise InvalidValue("truncated SSH data")
    return data[pos + 4:pos + 4 + size], pos + 4 + size


def signature_key(armored: bytes) -> str:
    """The public key an SSH signature (`-----BEGIN SSH SIGNATURE-----`) names as its signer,
    read from the signature's own header (checking it is ssh-keygen's work); INVALID_VALUE
    where it is no SSH signature."""
    lines = armored.strip().splitlines()
    if not lines or lines[0].strip() != b"-----BEGIN SSH SIGNATURE-----":
        raise InvalidValue("not an SSH signature")
    try:
        blob = binascii.a2b_base64(b"".join(line.strip() for line in lines[1:-1]), strict_mode=True)
    except (binascii.Error, ValueError):
        raise InvalidValue("the SSH signature's base64 is damaged") from None
    if blob[:6] != b"SSHSIG":
        raise InvalidValue("not an SSH signature")
    key, _ = _string(blob, 10)  # after the magic and the version
    return key_of_blob(key)
