"""`statedir signers add|remove|list`: each change to signers.yaml one commit, signed as
`signers.may_change` says (a binding by a key of the actor it binds; a new actor by a key the
file already trusts; its first version, or one after the last signer was removed, by a key that
version lists), and replayable by verify from its recorded request."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.argument_checks import names_a_file
from statedir.errors import InvalidValue, PermissionDenied, SigningKeyMismatch, ValidationFailed
from statedir.files import schema
from statedir.files.signers_file import FILE, Signers, fingerprint, may_change, parse, public_key
from statedir.gitops import commit_message, git
from statedir.store import commit_keys
from statedir.store.store import Store
from statedir.store.write import persist

ACTION = "signers"
SCHEMA_COPY = ".schemas/signers.schema.json"


def listing(store: Store) -> list[dict[str, Any]]:
    """The signers as of HEAD: actor, key type, fingerprint, comment, key."""
    with store.reading(None):
        signers = commit_keys.at_head(store, git.head(store.worktree)) or Signers()
    return [{"actor": e["actor"], "type": e["key"].split()[0], "fingerprint": fingerprint(e["key"]),
             "comment": e.get("comment", ""), "key": e["key"], "acknowledger": e["actor"] in signers.acknowledgers}
            for e in signers.entries]


def acknowledgers(store: Store) -> list[str]:
    """The actors signers.yaml names for acknowledging verify findings, as of HEAD."""
    with store.reading(None):
        signers = commit_keys.at_head(store, git.head(store.worktree)) or Signers()
    return list(signers.acknowledgers)


def read_key(value: str) -> tuple[str, str]:
    """A public key given as its text or as the path of a .pub file (whose content no error
    repeats: the path may name any file the process can read)."""
    if not names_a_file("key", value):
        return public_key(value)
    path = Path(value).expanduser()
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise InvalidValue(f"cannot read the public key {value}: {exc.strerror}", path=value) from None
    try:
        return public_key(text)
    except InvalidValue as exc:
        raise InvalidValue(f"{value}: {exc.message}", path=value) from None


def applied(signers: Signers | None, args: dict[str, Any]) -> Signers:
    """The signers after one recorded change ({op: add|remove, actor, key[, comment]}, or
    {op: acknowledgers, actors: [...]}: who acknowledges)."""
    entries = [dict(e) for e in (signers.entries if signers else [])]
    acknowledgers = list(signers.acknowledgers) if signers else []
    op, actor, key = args.get("op"), str(args.get("actor")), args.get("key")
    if op == "acknowledgers":
        named = args.get("actors")
        if not isinstance(named, list) or not all(isinstance(a, str) for a in named):
            raise InvalidValue("the acknowledgers are a list of actor names")
        acknowledgers = list(dict.fromkeys(named))
    elif op == "add":
        if any(e["key"] == key for e in entries):
            owner = ", ".join(e["actor"] for e in entries if e["key"] == key)
            raise InvalidValue(f"that key is already bound (to {owner}); a key signs for one actor", actor=owner)
        entry = {"actor": actor, "key": str(key)}
        if args.get("comment"):
            entry["comment"] = str(args["comment"])
        entries.append(entry)
    elif op == "remove":
        kept = [e for e in entries if not (e["actor"] == actor and (key is None or e["key"] == key))]
        if len(kept) == len(entries):
            raise InvalidValue(f"{actor!r} has {'no such key' if key else 'no key'} in {FILE}", actor=actor)
        entries = kept
    else:
        raise InvalidValue(f"unknown signers change {op!r}")
    result = Signers(entries, acknowledgers)
    problems = schema.validate("signers", result.data(), FILE)
    if problems:
        raise InvalidValue(str(problems[0]), actor=actor)
    return result


def change(store: Store, args: dict[str, Any], by: str, timeout: float | None) -> dict[str, Any]:
    """Add or remove a binding in one commit, signed by a trusted key (checked before writing)."""
    with store.locked(timeout, scope=FILE):
        head = git.head(store.worktree)
        before = commit_keys.at_head(store, head)
        after = applied(before, args)
        if not after.entries and (before is None or not before.entries):
            raise ValidationFailed(f"{FILE} lists no signers")
        trusted, why, _ = may_change(before, after)
        if before is not None and before.keys_of(by):  # a bound actor's commits are signed by its own keys
            trusted &= before.keys_of(by)
            why += f", and {by!r} is bound, so by one of its keys"
        if not trusted:
            raise PermissionDenied(f"{why}: no key may make this change as {by!r}; nothing was changed",
                                   actor=args.get("actor"))
        try:
            signing_key = commit_keys.usable(store.worktree, trusted, why)
        except SigningKeyMismatch as exc:
            raise PermissionDenied(exc.message, **exc.details) from None
        writes = {FILE: commit_keys.dump(after)}
        shipped = schema.schema_path("signers").read_bytes()
        if store.read_bytes(SCHEMA_COPY) != shipped:
            writes[SCHEMA_COPY] = shipped
        summary = _summary(args)
        message = commit_message.message(summary, "-", by, ACTION, request={"args": args})
        sha = persist(store, writes=writes, message=message, author=by, signing_key=signing_key)
    return {"commit": sha, "summary": summary, "actor": args.get("actor"), "signers": len(after.entries),
            "acknowledgers": after.acknowledgers}


def _summary(args: dict[str, Any]) -> str:
    if args["op"] == "acknowledgers":
        return f"signers: acknowledgers {', '.join(args['actors']) or 'none'}"
    verb = "bind" if args["op"] == "add" else "unbind"
    what = fingerprint(args["key"]) if args.get("key") else "every key"
    return f"signers: {verb} {args['actor']} {'to' if verb == 'bind' else 'from'} {what}"


def replay(reader: Any, commit: Any) -> dict[str, bytes]:
    """verify's replay of a signers commit: the recorded change applied to the parent's file."""
    args = (commit.request or {}).get("args")
    if not isinstance(args, dict):
        raise ValidationFailed("the commit records no signers change (Statedir-Request)")
    found = reader.objects.read(reader.spec(commit.parent, FILE)) if commit.parent else None
    out = {FILE: commit_keys.dump(applied(parse(found[2]) if found else None, args))}
    if SCHEMA_COPY in commit.changed:
        out[SCHEMA_COPY] = schema.schema_path("signers").read_bytes()
    return out
