"""The store's people: who may act, each in the roles statedir.yaml's `people:` lists for them
(`statedir people add|remove`), read as HEAD holds the file, never as a copy edited and not
committed: what `verify` holds the next commit to.

Without a `people` map, `--actor` names the role a transition is made in, as it always did. With
one, `--actor NAME` names a person, who acts in one of their roles (`--role`, needed where they hold
several); a name that is no person still names a role (an agent acting in it).
"""
from __future__ import annotations

import re
from typing import Any

from statedir.errors import InvalidValue, PermissionDenied
from statedir.files import yaml
from statedir.gitops import git, identity, object_ids
from statedir.hints import HINT, Hint, Placeholder, opt
from statedir.store import last_commit
from statedir.store.layout import CONFIG

ADD_PERSON = Hint("people add", {"name": Placeholder("NAME"), "roles": Placeholder("ROLE...")})
from statedir.store.store import Store

KEY = "people"
_PERSON_LINE = re.compile(rf"^{identity.PERSON}: (.*)$", re.MULTILINE)


def of(config: Any) -> dict[str, list[str]]:
    """The people map of a statedir.yaml's data ({} where it names none)."""
    people = config.get(KEY) if isinstance(config, dict) else None
    if not isinstance(people, dict):
        return {}
    return {str(name): [str(role) for role in roles] for name, roles in people.items() if isinstance(roles, list)}


def either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def at_head(store: Store, head: str | None) -> dict[str, list[str]]:
    """The people map as of `head` ({} before the store's first commit). The work tree's copy is
    read where it is HEAD's (as statedir last committed it); any other, from git."""
    if head is None:
        return {}
    path = store.git_path(CONFIG)
    raw = store.config_bytes
    known = last_commit.recall(store, head).get(path, False)
    if known and known[0] == object_ids.blob_id(raw, len(head)):
        return of(store.config)
    proc = git.run(store.worktree, "cat-file", "blob", f"{head}:{path}", check=False)
    if proc.returncode != 0:
        return {}
    last_commit.remember(store, head, head, {path: [object_ids.blob_id(proc.stdout, len(head)), len(proc.stdout)]})
    if proc.stdout == raw:
        return of(store.config)
    return of(yaml.to_plain(yaml.load(proc.stdout, CONFIG)))


def acting(store: Store, actor: str, role: str | None) -> tuple[str, str | None]:
    """(the role, the person) `--actor actor [--role role]` names: a person's one role, or the role
    they name; else `actor` itself, a role. INVALID_VALUE for a --role without people or a person of
    several roles who names none; PERMISSION_DENIED for a role the person does not hold, and for a
    --role given with a name that is no person's."""
    identity.check_name(actor, "actor")
    if role is not None:
        identity.check_name(role, "role")
    if role is None and not of(store.config):  # no people in the work tree's copy: none to look for at HEAD
        return actor, None
    people = at_head(store, git.head(store.worktree))
    if not people:
        if role is None:
            return actor, None
        raise InvalidValue(f"{opt('role')} names the role a person acts in, and this store lists no people "
                           f"(`{HINT}`): without them {opt('actor')} names the role itself",
                           argument="role", role=role, hint=ADD_PERSON)
    return held(people, actor, role)


def held(people: dict[str, list[str]], actor: str, role: str | None) -> tuple[str, str | None]:
    """`acting`'s answer on a known people map."""
    roles = people.get(actor)
    if roles is None:
        if role is None:
            return actor, None
        raise PermissionDenied(f"{actor} is not one of the store's people ({', '.join(people)}), so holds no role "
                               f"to act in; `{HINT}` lists them", actor=actor, role=role,
                               roles=[], people=list(people), hint=Hint("people add", {"name": actor, "roles": [role]}))
    if role is None:
        if len(roles) == 1:
            return roles[0], actor
        raise InvalidValue(f"{actor} acts as {either(roles)}: say which with {opt('role')}", argument="role", actor=actor,
                           roles=roles)
    if role not in roles:
        raise PermissionDenied(f"{actor} may act as {either(roles)} only, not as {role}", actor=actor, role=role,
                               roles=roles)
    return role, actor


def require(store: Store, message: str, author: str, head: str | None) -> None:
    """A commit naming a person (Statedir-Person) holds to the people map as of its parent: the
    person listed, with the role it is made in. Checked by the write path under the store lock."""
    named = _PERSON_LINE.findall(message)
    if not named:
        return
    people = at_head(store, head)
    if not people:
        raise PermissionDenied(f"this store lists no people, so no commit names a person ({named[0]})",
                               person=named[0])
    held(people, named[0], author)
