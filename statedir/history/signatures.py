"""verify's signature check: each commit against the signers trusted as of its parent, as
`trust.Trust` replays them from the root of trust (the file as of the parent, unless a change
to it was made by a key not allowed to make it).

- A commit whose Statedir-Actor is bound must be signed by one of that actor's keys.
- A commit that changes the file must be signed as `signers.may_change` says: a binding by
  one of its own actor's keys, a new actor by a key already trusted, a first version (nobody
  trusted before) by a key it lists itself.

The signer's key is read from the signature's own header; ssh-keygen then checks the signature
over the commit (one `ssh-keygen -Y verify` per signed commit that needs checking, run on
every core while verify reads on; commits of unbound actors cost nothing). The commit
objects come through verify's one `git cat-file`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

from statedir.errors import InvalidValue, MissingDependency, StatedirError
from statedir.files import yaml
from statedir.files.signers_file import FILE, Signers, fingerprint, signature_key
from statedir.gitops.objects import ObjectReader
from statedir.history.entry import Entry
from statedir.signing.trust import Trust
from statedir.store.commit_keys import required
from statedir.store.layout import CONFIG
from statedir.store.recorded import Commit
from statedir.store.store import Store

KIND = "signature"
_SIG_HEADERS = (b"gpgsig", b"gpgsig-sha256")


def split(raw: bytes) -> tuple[bytes | None, bytes]:
    """(the signature, the signed payload) of a commit object: git signs the commit without its
    gpgsig header (a SHA-256 repository's gpgsig-sha256 one)."""
    head, sep, body = raw.partition(b"\n\n")
    kept: list[bytes] = []
    sig: list[bytes] | None = None
    inside = False
    for line in head.split(b"\n"):
        name = line.partition(b" ")[0]
        if name in _SIG_HEADERS and (sig is None or name == b"gpgsig"):
            sig, inside = [line[len(name) + 1:]], True
            continue
        if inside and line.startswith(b" "):
            assert sig is not None
            sig.append(line[1:])
            continue
        inside = False
        kept.append(line)
    return (b"\n".join(sig) + b"\n" if sig else None), b"\n".join(kept) + sep + body


class Auditor:
    """Checks commits in history order against the signers replayed from the root of trust."""

    def __init__(self, store: Store, objects: ObjectReader) -> None:
        self.store = store
        self.objects = objects
        self.path = store.git_path(FILE)
        self.trust = Trust(store, objects, self._judge)
        self._tmp: Path | None = None
        self._after: tuple[str, str | None] | None = None  # (commit, its signers.yaml blob id)
        self._pool: ThreadPoolExecutor | None = None
        self.entry = Entry(self)
        # A store whose configuration now requires signed roles reads each commit's parent's (cached by blob).
        self.requiring = bool(required(store.config))
        self._configs: dict[str, set[str]] = {}

    def __enter__(self) -> Auditor:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    @staticmethod
    def resolved(items: Iterable[Any]) -> list[dict[str, Any]]:
        """Findings in order, each pending signature check waited for (call inside the `with`)."""
        out: list[dict[str, Any]] = []
        for item in items:
            out += item.result() if isinstance(item, Future) else [item]
        return out

    def check(self, commit: Commit) -> list[Any]:
        """This commit's findings: dicts, and Futures of a list of them (see `resolved`)."""
        if len(commit.parents) > 1:  # a merge: each side's commits were checked on their own, and
            self._after = None  # now where they enter (git log --raw lists no files for it: the next
            return self.entry.merge(commit)  # commit looks its parent up)
        before = self._blob_at(commit.parent)
        change = commit.changed.get(FILE)
        self._after = (commit.sha, (None if change[0] == "D" else change[2]) if change else before)
        must = commit.actor in self._required(commit.parent) if commit.actor and self.requiring else False
        if before is None and change is None and not self.trust.loaded and not must:
            self.entry.note(commit, set())
            return []  # no signers.yaml here and none met so far: nobody is bound, nothing to read
        out: list[Any] = self.trust.findings(commit.sha, commit.parents) if change is not None else []
        trusted = self.trust.at(commit.parent, before) if commit.parent else None
        bound = trusted.keys_of(commit.actor) if trusted and commit.actor else set()
        self.entry.note(commit, bound)
        if bound:
            assert trusted is not None
            signature, payload = self._signature(commit.sha)
            out += self._signed_by(commit.sha, signature, payload, trusted, bound, None,
                                   f"{commit.actor!r} is bound to a signing key in {FILE} (as of the parent)")
        elif must and change is not None and change[0] != "D" and (after := self.trust.at(commit.sha, change[2])) \
                and after.keys_of(commit.actor):
            # the role's first binding, made by the role itself: signed by the key it binds, as the write required
            signature, payload = self._signature(commit.sha)
            out += self._signed_by(commit.sha, signature, payload, after, after.keys_of(commit.actor), None,
                                   f"{commit.actor!r} must sign (require_signed in {CONFIG}) and binds its key here")
        elif must:
            out.append(_finding(commit.sha, None, f"{commit.actor}'s transitions must be signed (require_signed in "
                                                  f"{CONFIG} as of the parent), but {FILE} binds no key to it"))
        return out

    def trusted_at(self, sha: str | None) -> Signers | None:
        """The signers trusted as of commit `sha` (replayed from the root of trust)."""
        return self.trust.at(sha, self._blob_at(sha)) if sha else None

    def signed(self, sha: str, keys: set[str], signers: Signers, rule: str, file: str | None = None) -> list[Any]:
        """[] when commit `sha` carries a good signature by one of `keys` (bound in `signers`),
        else the finding saying what is wrong (`rule` says why it must be signed)."""
        return self.resolved(self.pending(sha, keys, signers, rule, file))

    def pending(self, sha: str, keys: set[str], signers: Signers, rule: str, file: str | None = None) -> list[Any]:
        """`signed`'s answer as findings and Futures of them (see `resolved`)."""
        signature, payload = self._signature(sha)
        return self._signed_by(sha, signature, payload, signers, keys, file, rule)

    def _required(self, parent: str | None) -> set[str]:
        """The roles statedir.yaml as of `parent` requires signed (none before the store was made)."""
        found = self.objects.read(f"{parent}:{self.store.git_path(CONFIG)}") if parent else None
        if found is None:
            return set()
        if found[0] not in self._configs:
            try:
                self._configs[found[0]] = required(yaml.to_plain(yaml.load(found[2], CONFIG)) or {})
            except StatedirError:
                self._configs[found[0]] = set()
        return self._configs[found[0]]

    def _judge(self, sha: str, keys: set[str], rule: str, signers: Signers) -> list[dict[str, Any]]:
        """A change to the file, checked now (what follows it depends on the answer)."""
        return self.signed(sha, keys, signers, rule, FILE)

    def _signature(self, sha: str) -> tuple[bytes | None, bytes]:
        found = self.objects.read(sha)
        return split(found[2]) if found and found[1] == "commit" else (None, b"")

    def _blob_at(self, parent: str | None) -> str | None:
        if parent is None:
            return None
        if self._after is not None and self._after[0] == parent:  # history read in order: no lookup
            return self._after[1]
        return self.trust.blob(parent)

    def _signed_by(self, sha: str, signature: bytes | None, payload: bytes, signers: Signers,
                   keys: set[str], file: str | None, rule: str) -> list[Any]:
        """A finding unless `signature` is a good signature of `payload` by one of `keys` (that
        last check a Future: ssh-keygen runs while verify reads on)."""
        if signature is None:
            return [_finding(sha, file, f"{rule}, but the commit is not signed")]
        try:
            key = signature_key(signature)
        except InvalidValue as exc:
            return [_finding(sha, file, f"{rule}, but the commit's signature is not usable: {exc.message} "
                                           "(statedir signs with SSH keys: gpg.format=ssh)")]
        if key not in keys:
            others = signers.actors_of(key)
            whose = f"a key {FILE} binds to {', '.join(others)}" if others else f"a key {FILE} does not list"
            return [_finding(sha, file, f"{rule}, but the commit is signed by {fingerprint(key)}, {whose}")]
        bad = _finding(sha, file, f"the signature by {fingerprint(key)} does not verify: the commit was "
                                     "changed after it was signed, or the signature is forged")
        allowed = self._allowed(signers)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
        return [self._pool.submit(_check_signature, allowed, signers.actors_of(key)[0], signature, payload, bad)]

    def _allowed(self, signers: Signers) -> Path:
        """A file of `signers` in git's allowed-signers format, for ssh-keygen."""
        if self._tmp is None:
            if shutil.which("ssh-keygen") is None:
                raise MissingDependency(f"checking the signatures {FILE} asks for needs ssh-keygen (OpenSSH's "
                                        "client tools), which is not on PATH")
            self._tmp = Path(tempfile.mkdtemp(prefix="statedir-verify-"))
        allowed = self._tmp / f"allowed-{id(signers)}"
        if not allowed.exists():
            allowed.write_text(signers.allowed_signers())
        return allowed


def _check_signature(allowed: Path, principal: str, signature: bytes, payload: bytes,
                     bad: dict[str, Any]) -> list[dict[str, Any]]:
    """ssh-keygen's check of the signature over the payload for `principal`: [] or [bad]."""
    sig = allowed.parent / f"{bad['commit']}-{id(bad)}.sig"
    sig.write_bytes(signature)
    try:
        proc = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", principal, "-n", "git",
                               "-s", str(sig)], input=payload, capture_output=True, check=False)
    except OSError as exc:
        raise MissingDependency(f"cannot run ssh-keygen to check a signature: {exc.strerror}") from None
    finally:
        sig.unlink(missing_ok=True)
    return [] if proc.returncode == 0 else [bad]


def _finding(sha: str, file: str | None, message: str) -> dict[str, Any]:
    return {"commit": sha, "kind": KIND, "file": file, "message": message}
