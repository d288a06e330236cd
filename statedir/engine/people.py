"""`statedir people add|remove|list`: the store's people and the roles each may act in (statedir.yaml
`people:`), each change one commit (action `people`) that `verify` replays from its recorded request.

Who may change the map: the user. Before anyone is listed, a caller acting as `user` (the
default of `statedir people`); once someone is, a listed person who holds `user` (`--actor NAME`).
A change may not leave people listed of whom none holds `user` (nobody could change the map
again), nor name a role no template of the store declares, nor give a person a role's name. It
is no MCP tool: an agent never changes who may act.
"""
from __future__ import annotations

from typing import Any

from statedir.engine import template as template_mod
from statedir.engine.admission import WRITER
from statedir.engine.template import USER
from statedir.errors import InvalidValue, PermissionDenied, ValidationFailed
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.gitops import commit_message, git, identity
from statedir.hints import opt
from statedir.store import commit_keys, people
from statedir.store.layout import CONFIG, schema_ref
from statedir.store.store import Store
from statedir.store.write import persist

ACTION = "people"
SCHEMA_COPY = ".schemas/store-config.schema.json"


def listing(store: Store) -> list[dict[str, Any]]:
    """The people as of HEAD: each name with its roles."""
    with store.reading(None):
        held = people.at_head(store, git.head(store.worktree))
    return [{"name": name, "roles": roles} for name, roles in held.items()]


def applied(before: dict[str, list[str]], args: dict[str, Any]) -> dict[str, list[str]]:
    """The people map after one recorded change: {op: add, name, roles} (the roles added to the
    person's, a new person listed), or {op: remove, name[, roles]} (those roles taken away; all of
    them, and the person, where none is named or none is left)."""
    op, name, roles = args.get("op"), args.get("name"), args.get("roles") or []
    identity.check_name(name, "person")
    if not isinstance(roles, list):
        raise InvalidValue("the roles are a list of role names")
    for role in roles:
        identity.check_name(role, "role")
    out = {person: list(held) for person, held in before.items()}
    if op == "add":
        if not roles:
            raise InvalidValue(f"name the roles {name} may act in", argument="roles")
        out[name] = list(dict.fromkeys([*out.get(name, []), *roles]))
    elif op == "remove":
        if name not in out:
            raise InvalidValue(f"{name} is not one of the store's people" + (f" ({', '.join(out)})" if out else ""),
                               person=name)
        missing = [role for role in roles if role not in out[name]]
        if missing:
            raise InvalidValue(f"{name} holds no role {', '.join(missing)} (only {people.either(out[name])})",
                               person=name, roles=out[name])
        kept = [role for role in out[name] if role not in roles] if roles else []
        if kept:
            out[name] = kept
        else:
            del out[name]
    else:
        raise InvalidValue(f"unknown people change {op!r}")
    if out and not any(USER in held for held in out.values()):
        raise InvalidValue(f"after this change nobody listed holds {USER}, and only a person who does may change "
                           f"the people map: keep (or add) one who does", argument="roles")
    return out


def may_change(before: dict[str, list[str]], actor: str, person: str | None) -> None:
    """The user changes the people map: acting as `user`, and once anyone is listed, as a listed
    person who holds `user`. PERMISSION_DENIED otherwise (the write path and verify both ask)."""
    holders = [name for name, roles in before.items() if USER in roles]
    if actor != USER:
        named = f" ({people.either(holders)}, named with {{opt:actor}})" if holders else f", acting as {USER}"
        raise PermissionDenied(f"{actor} may not change the store's people; the user may{named}",
                               actor=actor, allowed=[USER])
    if before and person is None:
        raise PermissionDenied(f"the store lists people, so only one of them who holds {USER} may change them: "
                               f"act as {people.either(holders)} (named with {opt('actor')})", actor=actor, allowed=holders)


def known_roles(store: Store) -> set[str]:
    """Every role a template of the store (its own, and those statedir ships) declares, and the user."""
    names = {*template_mod.shipped(), *(p.stem for p in (store.root / "templates").glob("*.yaml"))}
    roles = {USER}
    for name in sorted(names):
        roles |= set(template_mod.load(name, store.root / "templates", store.cache_dir).roles)
    return roles - {WRITER}


def _declared(roles: list[str], known: set[str]) -> None:
    unknown = [role for role in roles if role not in known]
    if unknown:
        raise InvalidValue(f"no template of the store declares the role {', '.join(unknown)}; its roles: "
                           f"{', '.join(sorted(known))}", roles=unknown, known=sorted(known))


def rewritten(raw: bytes, after: dict[str, list[str]]) -> bytes:
    """statedir.yaml's bytes with the people map `after` (a hand-commented file keeps its comments)."""
    ref = schema_ref(CONFIG)
    own = yaml_fast_reader.read_own(raw, ref)
    if own is yaml_fast_reader.FOREIGN:
        loaded = yaml.load(raw, CONFIG)
        plain = yaml.to_plain(loaded)
    else:
        loaded, plain = None, own
    data = {key: value for key, value in plain.items() if key != people.KEY}
    if after:
        data[people.KEY] = after
    problems = schema.validate("store-config", data, CONFIG)
    if problems:
        raise InvalidValue(str(problems[0]), file=CONFIG)
    return yaml.dump(data if loaded is None else yaml.merge(loaded, data), ref).encode()


def change(store: Store, args: dict[str, Any], actor: str, person: str | None,
           timeout: float | None) -> dict[str, Any]:
    """One change to the people map, one commit; refused (nothing written) as `applied` and
    `may_change` say, and for a role no template declares or a person named as a role."""
    with store.locked(timeout, scope=CONFIG):
        head = git.head(store.worktree)
        before = people.at_head(store, head)
        may_change(before, actor, person)
        try:
            after = applied(before, args)
        except InvalidValue:
            if args["op"] == "add" and isinstance(args.get("roles"), list):
                _declared(args["roles"], known_roles(store))  # an unknown role is named before what it leaves
            raise
        if args["op"] == "add":
            known = known_roles(store)
            _declared(args["roles"], known)
            if args["name"] in known:
                raise InvalidValue(f"{args['name']} is a role's name; a person's name is not one ({opt('actor')} NAME "
                                   "names either)", person=args["name"])
        raw = store.read_bytes(CONFIG)
        writes = {CONFIG: rewritten(raw, after)}
        shipped = schema.schema_path("store-config").read_bytes()
        if store.read_bytes(SCHEMA_COPY) != shipped:
            writes[SCHEMA_COPY] = shipped
        summary = _summary(args)
        trailers = identity.trailers({"person": person} if person else {})
        message = commit_message.message(summary, "-", actor, ACTION, request={"args": args}, trailers=trailers)
        sha = persist(store, writes=writes, message=message, author=actor,
                      signing_key=commit_keys.key_for(store, actor, head))
        store.reopened_config()
    return {"commit": sha, "summary": summary, "name": args["name"], "roles": after.get(args["name"], []),
            "people": len(after)}


def _summary(args: dict[str, Any]) -> str:
    roles = ", ".join(args.get("roles") or [])
    if args["op"] == "add":
        return f"people: {args['name']} may act as {roles}"
    return f"people: {args['name']} no longer acts as {roles}" if roles else f"people: {args['name']} removed"


def replay(reader: Any, commit: Any) -> dict[str, bytes]:
    """verify's replay of a people commit: the recorded change, by the user as `may_change` says,
    applied to the parent's statedir.yaml."""
    args = (commit.request or {}).get("args")
    if not isinstance(args, dict):
        raise ValidationFailed("the commit records no people change (Statedir-Request)")
    found = reader.objects.read(reader.spec(commit.parent, CONFIG)) if commit.parent else None
    if not found:
        raise ValidationFailed(f"a people change in a store with no {CONFIG}")
    before = people.of(yaml.to_plain(yaml.load(found[2], CONFIG)))
    may_change(before, commit.actor, commit.who.get("person"))
    out = {CONFIG: rewritten(found[2], applied(before, args))}
    if SCHEMA_COPY in commit.changed:
        out[SCHEMA_COPY] = schema.schema_path("store-config").read_bytes()
    return out
