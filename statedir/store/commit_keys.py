"""The write side: whether a commit must be signed, and by which key, decided before anything
is written.

An actor is bound when `signers.yaml` as of HEAD (the commit's parent: what verify will hold
the commit to) lists a key for it. The key that signs comes from the process:
STATEDIR_SIGNING_KEY (a private key's path, a public key's path with the private half in
ssh-agent, or `key::<public key>` with ssh-agent, as git's user.signingKey takes), else git's
own `user.signingKey` where `gpg.format` is ssh.
"""
# Lazy imports: shutil and subprocess (ssh-keygen), where a signing key is checked: a transition in an unsigned store
#   loads neither (tests/test_architecture.py).
from __future__ import annotations

import os
from pathlib import Path

from statedir.errors import InvalidValue, MissingDependency, SigningKeyMismatch, SigningKeyMissing
from statedir.files import yaml
from statedir.files.signers_file import FILE, Signers, fingerprint, parse, public_key
from statedir.gitops import git, object_ids
from statedir.store import last_commit, layout
from statedir.store.store import Store

ENV = "STATEDIR_SIGNING_KEY"
HOW = (f"set {ENV} to your private key's path (or to key::<public key> with the key in ssh-agent), "
       "or `git config gpg.format ssh` and `git config user.signingKey PATH`")




def at_head(store: Store, head: str | None) -> Signers | None:
    """`signers.yaml` as of `head`, or None where there is none (no actor is bound). A store
    without the file in its work tree costs nothing more; one with it, a `git cat-file` the
    first time after a commit not statedir's (then statedir's record of HEAD knows its blob)."""
    if head is None:
        return None
    try:
        raw = (store.root / FILE).read_bytes()
    except FileNotFoundError:  # (deleted by hand but still at HEAD: verify reports the unsigned commits)
        return None
    except OSError as exc:
        raise InvalidValue(f"cannot read {FILE}: {exc.strerror}", file=FILE) from None
    path = store.git_path(FILE)
    known = last_commit.recall(store, head).get(path, False)  # what HEAD holds there, as statedir last saw it
    if known and known[0] == object_ids.blob_id(raw, len(head)):
        return parse(raw)
    if known is None:
        return None
    proc = git.run(store.worktree, "cat-file", "blob", f"{head}:{path}", check=False)
    at = proc.stdout if proc.returncode == 0 else None  # a copy edited by hand does not count: HEAD's does
    held = None if at is None else [object_ids.blob_id(at, len(head)), len(at)]
    last_commit.remember(store, head, head, {path: held})
    return None if at is None else parse(at)


def key_for(store: Store, actor: str, head: str | None) -> str | None:
    """The key that must sign `actor`'s commit on `head`, or None where the actor is not bound;
    refused (exit 3, nothing written) where it is bound and no key of its is at hand, and where
    statedir.yaml's `require_signed` names it and no key is bound to it."""
    signers = at_head(store, head)
    keys = signers.keys_of(actor) if signers else set()
    if not keys:
        if actor in required(store.config):
            raise SigningKeyMissing(f"{actor}'s transitions must be signed (require_signed in statedir.yaml), "
                                    f"and {FILE} binds no key to {actor}: bind its key first; nothing was changed",
                                    actor=actor)
        return None
    return usable(store.worktree, keys, f"actor {actor!r} is bound to a signing key in {FILE}, so its commits "
                                        "must be signed", actor=actor)


def required(config: dict[str, object]) -> set[str]:
    """The roles whose transitions must be signed (statedir.yaml `require_signed`)."""
    value = config.get("require_signed")
    return {str(role) for role in value} if isinstance(value, list) else set()


def usable(worktree: Path, trusted: set[str], why: str, **details: str) -> str:
    """The configured signing key when its public half is one of `trusted`, as git's
    user.signingKey takes it; else SIGNING_KEY_MISSING / SIGNING_KEY_MISMATCH."""
    spec, source = configured(worktree)
    if spec is None:
        raise SigningKeyMissing(f"{why}, and no signing key is set: {HOW}; nothing was changed", **details)
    import shutil

    if shutil.which("ssh-keygen") is None:
        raise MissingDependency("signing needs ssh-keygen (OpenSSH's client tools), which is not on PATH; "
                                "nothing was changed")
    public = public_of(spec, source)
    if public not in trusted:
        raise SigningKeyMismatch(f"{why}, but the key {source} names ({fingerprint(public)}) is not one {FILE} "
                                 f"trusts for that; nothing was changed", key=fingerprint(public), **details)
    if _through_agent(spec) and not os.environ.get("SSH_AUTH_SOCK"):
        raise SigningKeyMissing(f"{why}; {source} names a public key only ({fingerprint(public)}), whose private "
                                "half must be in ssh-agent, and no agent is running (SSH_AUTH_SOCK is not set); "
                                "nothing was changed", key=fingerprint(public), **details)
    return spec


def _through_agent(spec: str) -> bool:
    """Whether git can sign with `spec` only through ssh-agent: a public key with no private
    key file beside it (ssh-keygen finds one at the path without `.pub`)."""
    if spec.startswith("key::"):
        return True
    path = Path(spec)
    try:
        head = path.read_bytes()[:64]
    except OSError:
        return False
    private_beside = path.suffix == ".pub" and path.with_suffix("").is_file()
    return not head.lstrip().startswith(b"-----BEGIN") and not private_beside


def configured(worktree: Path) -> tuple[str | None, str]:
    """(the signing key as git's user.signingKey takes it, where it came from)."""
    value = os.environ.get(ENV, "").strip()
    if value:
        return _absolute(value), ENV
    proc = git.run(worktree, "config", "-z", "--get-regexp", r"^(user\.signingkey|gpg\.format)$", check=False)
    found = dict(item.split("\n", 1) for item in proc.stdout.decode(errors="replace").split("\0") if "\n" in item)
    if found.get("gpg.format") == "ssh" and found.get("user.signingkey", "").strip():
        return _absolute(found["user.signingkey"].strip()), "git's user.signingKey"
    return None, ""


def _absolute(spec: str) -> str:
    """A key path made absolute (git signs in the work tree's directory, not the caller's)."""
    if spec.startswith("key::") or spec.startswith(("ssh-", "ecdsa-", "sk-")):
        return spec if spec.startswith("key::") else f"key::{spec}"
    return str(Path(spec).expanduser().absolute())


def public_of(spec: str, source: str = ENV) -> str:
    """The `type base64` public half of a signing key spec."""
    if spec.startswith("key::"):
        return _public(spec[5:], source)
    path = Path(spec)
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise SigningKeyMissing(f"{source} names {path}, which cannot be read ({exc.strerror}); {HOW}",
                                path=str(path)) from None
    if not text.lstrip().startswith("-----BEGIN"):
        return _public(text, source)
    pub = path.with_name(path.name + ".pub")
    if pub.is_file():
        return _public(pub.read_text(errors="replace"), source)
    import subprocess  # a passphrase-less private key named alone: rare

    proc = subprocess.run(["ssh-keygen", "-y", "-P", "", "-f", str(path)], capture_output=True,
                          stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        raise SigningKeyMissing(f"cannot read the public half of {path} (a passphrase-protected key needs its "
                                ".pub file beside it, or ssh-agent and key::<public key>)", path=str(path))
    return _public(proc.stdout.decode(errors="replace"), source)


def _public(text: str, source: str) -> str:
    try:
        return public_key(text)[0]
    except InvalidValue as exc:
        raise SigningKeyMissing(f"{source}: {exc.message}") from None


def dump(signers: Signers) -> bytes:
    """The file's bytes, as statedir writes it."""
    return yaml.dump(signers.data(), layout.schema_ref(FILE)).encode()
