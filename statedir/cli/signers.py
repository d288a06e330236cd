"""`statedir signers add|remove|list`: bind actors to SSH signing keys (signers.yaml); each
change one signed commit (a binding by a key of the actor it binds)."""
# Lazy imports: api.documents_writes: imported by the command that uses them: `statedir COMMAND` loads this module for
#   any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

from statedir.cli.common import DEFAULT_ACTOR, ActorOpt, ExpectOpt, JsonOpt, StoreOpt, document, open_store
from statedir.cli.registry import SUBCOMMANDS, app, sub_group, typed
from statedir.cli.render import done, emit_json, say, table
from statedir.commands.params import Argument, Option

if TYPE_CHECKING:
    import typer

HELP = ("Bind actors to SSH signing keys (signers.yaml in the store). A bound actor's transitions are signed by "
        "git with the key STATEDIR_SIGNING_KEY (or git's user.signingKey) names, and `statedir verify` reports a "
        "bound actor's commit that is unsigned or signed by another key. Each change here is one signed commit: an "
        "actor's binding changes only with one of that actor's keys, a new actor is bound with a key the file already "
        "trusts, the first binding with the key it adds. `signers acknowledgers` names the actors whose signed "
        "acknowledgements of verify findings count on every clone.")


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
    done(document("signers_add", open_store(store), locals()).value, json)


@app.subcommand("signers", "remove")
def remove(bound: ActorArg,
           key: Annotated[Optional[str], Argument(metavar="[PUBLIC_KEY]", help="Only this key (a .pub file's path or its text); default: every key of ACTOR.")] = None,
           store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
           expect: ExpectOpt = None) -> None:
    """Unbind ACTOR's key(s) (one signed commit); an actor with no key left signs nothing."""
    done(document("signers_remove", open_store(store), locals()).value, json)


@app.subcommand("signers", "list")
def list_(allowed_signers: Annotated[bool, Option("--allowed-signers", help="Print the list in git's allowed-signers format instead (for gpg.ssh.allowedSignersFile).")] = False,
          store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The bound actors and their keys' fingerprints, as of the last commit."""
    sd = open_store(store)
    listed = document("signers_list", sd, locals())
    rows = listed.value
    if allowed_signers:
        say(rows, end="")
        return
    if json:
        emit_json(rows)
        return
    print(table(rows, ["actor", "type", "fingerprint", "comment"]) or "no actor is bound to a signing key")
    named = sd.acknowledgers()
    print(f"acknowledgers: {', '.join(named)}" if named else "acknowledgers: none (an acknowledgement counts only on "
          "the clone that made it)")


@app.subcommand("signers", "acknowledgers")
def acknowledgers(named: Annotated[Optional[list[str]], Argument(metavar="[ACTOR]...", help="The actors to name, replacing those named before.", show_default=False)] = None,
                  none: Annotated[bool, Option("--none", help="Name nobody: an acknowledgement then counts only on the clone that made it.")] = False,
                  store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
                  expect: ExpectOpt = None) -> None:
    """Name the actors whose acknowledgements of verify findings, in commits signed by their keys, count on every clone (one signed commit)."""
    from statedir.api.documents_writes import acknowledgers_named

    acknowledgers_named(named, none)  # before the store is opened
    done(document("signers_acknowledgers", open_store(store), locals()).value, json)


app.group("signers", _group, help=HELP)
