"""`statedir signers add|remove|list`: bind actors to SSH signing keys (signers.yaml); each
change one signed commit (a binding by a key of the actor it binds)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

from statedir.cli.common import DEFAULT_ACTOR, ActorOpt, ExpectOpt, JsonOpt, StoreOpt, open_store
from statedir.cli.registry import SUBCOMMANDS, app, sub_group, typed
from statedir.cli.render import done, emit_json, say, table
from statedir.commands.params import Argument, Option

if TYPE_CHECKING:
    import typer

HELP = ("Bind actors to SSH signing keys (signers.yaml in the store). A bound actor's transitions are signed by "
        "git with the key STATEDIR_SIGNING_KEY (or git's user.signingKey) names, and `statedir verify` reports a "
        "bound actor's commit that is unsigned or signed by another key. Each change here is one signed commit: an "
        "actor's binding changes only with one of that actor's keys, a new actor is bound with a key the file already "
        "trusts, the first binding with the key it adds.")


def _group() -> typer.Typer:
    """The signers' typer sub-group, built when typer reads a call."""
    signers = sub_group("signers", HELP)
    for name, function in SUBCOMMANDS["signers"].items():
        signers.command(name)(typed(function))
    return signers


ActorArg = Annotated[str, Argument(metavar="ACTOR", help="The actor to bind (as its transitions name it: Statedir-Actor).", show_default=False)]


@app.subcommand("signers", "add")
def add(bound: ActorArg,
        key: Annotated[str, Argument(metavar="PUBLIC_KEY", help="The actor's SSH public key: a .pub file's path, or its text ('ssh-ed25519 AAAA...').", show_default=False)],
        store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
        expect: ExpectOpt = None) -> None:
    """Bind ACTOR to a public key: from then on its transitions must be signed by that key (one signed commit)."""
    done(open_store(store).add_signer(bound, key, actor=actor, expect=expect), json)


@app.subcommand("signers", "remove")
def remove(bound: ActorArg,
           key: Annotated[Optional[str], Argument(metavar="[PUBLIC_KEY]", help="Only this key (a .pub file's path or its text); default: every key of ACTOR.")] = None,
           store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
           expect: ExpectOpt = None) -> None:
    """Unbind ACTOR's key(s) (one signed commit); an actor with no key left signs nothing."""
    done(open_store(store).remove_signer(bound, key, actor=actor, expect=expect), json)


@app.subcommand("signers", "list")
def list_(allowed_signers: Annotated[bool, Option("--allowed-signers", help="Print the list in git's allowed-signers format instead (for gpg.ssh.allowedSignersFile).")] = False,
          store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The bound actors and their keys' fingerprints, as of the last commit."""
    rows = open_store(store).signers()
    if allowed_signers:
        from statedir.files.signers_file import Signers

        say(Signers(rows).allowed_signers(), end="")
        return
    if json:
        emit_json(rows)
        return
    print(table(rows, ["actor", "type", "fingerprint", "comment"]) or "no actor is bound to a signing key")


app.group("signers", _group, help=HELP)
