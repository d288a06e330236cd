"""`statedir people add|remove|list`: the store's people and the roles each may act in
(statedir.yaml `people:`); each change one commit, made by the user."""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

from statedir.cli.common import ActorOpt, ExpectOpt, JsonOpt, RoleOpt, StoreOpt, open_store
from statedir.cli.registry import SUBCOMMANDS, app, sub_group, typed
from statedir.cli.render import done, emit_json
from statedir.commands.params import Argument

if TYPE_CHECKING:
    import typer

HELP = ("Name the store's people and the roles each may act in (statedir.yaml people:). A listed person acts with "
        "--actor NAME (and --role ROLE where they hold several): the commit records the role (Statedir-Actor) and "
        "the person (Statedir-Person), and a role not theirs is refused. Each change is one commit, made by the "
        "user: acting as user while nobody is listed, then as a listed person who holds user; `statedir verify` "
        "replays it, and a people map changed any other way is illegal. Without people, --actor names a role.")
USER = "user"  # who changes the people map (statedir.engine.people)
NameArg = Annotated[str, Argument(metavar="NAME", help="The person (letters, digits and ._@+-; not a role's name).", show_default=False)]


def _group() -> typer.Typer:
    """The people's typer sub-group, built when typer reads a call."""
    people = sub_group("people", HELP)
    for name, function in SUBCOMMANDS["people"].items():
        people.command(name)(typed(function))
    return people


@app.subcommand("people", "add")
def add(name: NameArg,
        roles: Annotated[list[str], Argument(metavar="ROLE...", help="The roles NAME may act in (added to those they hold): roles a template of the store declares.", show_default=False)],
        store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = USER, as_role: RoleOpt = None,
        expect: ExpectOpt = None) -> None:
    """List NAME as a person who may act in the roles named (one commit, by the user)."""
    done(open_store(store).add_person(name, roles, actor=actor, role=as_role, expect=expect), json)


@app.subcommand("people", "remove")
def remove(name: NameArg,
           roles: Annotated[Optional[list[str]], Argument(metavar="[ROLE]...", help="Only these roles; default: every role, and NAME off the list.")] = None,
           store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = USER, as_role: RoleOpt = None,
           expect: ExpectOpt = None) -> None:
    """Take roles from NAME, or NAME off the list (one commit, by the user)."""
    done(open_store(store).remove_person(name, roles, actor=actor, role=as_role, expect=expect), json)


@app.subcommand("people", "list")
def list_(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The store's people and the roles each may act in, as of the last commit."""
    rows = open_store(store).people()
    if json:
        emit_json(rows)
        return
    if not rows:
        print("the store lists no people: --actor names a role (statedir people add NAME ROLE... lists one)")
        return
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        print(f"{row['name'].ljust(width)}  {', '.join(row['roles'])}")


app.group("people", _group, help=HELP)
