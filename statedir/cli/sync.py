"""`statedir sync` (fetch, merge, validate, verify, push) and `statedir merge-driver` (what git runs)."""
# Lazy imports: api.places, cli.render, errors: imported by the command that uses them: `statedir COMMAND` loads this
#   module for any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

from typing import Annotated, Optional

from statedir.cli.common import DEFAULT_ACTOR, JsonOpt, StoreOpt, env_lock_timeout, store_path
from statedir.cli.registry import app
from statedir.cli.render import done
from statedir.commands.params import Argument, Option

# sync's own words: its actor is only recorded (no template's roles are asked), and its --expect is
# about the whole store (a sync writes no one run or bus session).
SyncActorOpt = Annotated[str, Option(
    "--actor", envvar="STATEDIR_ACTOR", show_envvar=True,
    help="Who syncs: named on the merge commit (Statedir-Actor); not checked against any template's roles.")]
SyncExpectOpt = Annotated[Optional[str], Option(
    "--expect", metavar="REV", help="Compare-and-swap: refuse (HEAD_MOVED, nothing fetched into the store, "
    "nothing merged or pushed) if anything in the store changed after REV, the commit you last read.")]


@app.command()
def sync(remote: Annotated[Optional[str], Option(
             "--remote", metavar="NAME", help="The git remote; default: the branch's upstream remote, else origin.")] = None,
         replay: Annotated[bool, Option(
             "--replay", help="Where the merge is refused: decide this branch's unpublished transitions again, "
             "oldest first, on top of the remote's state (each a new commit with Statedir-Replayed-From), report "
             "those the rules now refuse, keep the originals under refs/statedir/replayed/, and push.")] = False,
         store: StoreOpt = None, json: JsonOpt = False, actor: SyncActorOpt = DEFAULT_ACTOR,
         expect: SyncExpectOpt = None) -> int:
    """Fetch, merge (never rebase) with the statedir merge driver, validate and verify, push.

    A refused merge changes nothing and names the next step: `statedir sync --replay`."""
    from statedir.api import syncing
    from statedir.cli import render
    from statedir.errors import MergeRefused

    try:  # a Store, not a StateDir: a sync uses none of the engine StateDir's import loads
        opened = syncing.opened(store_path(store), env_lock_timeout())
        for message in opened.standing:
            render.warn(message)
        result = syncing.sync(opened, remote, actor=actor, expect=expect, replay=replay,
                              lock_timeout=env_lock_timeout())
    except MergeRefused as exc:
        if not json:  # the conflict report is the command's output; the error line goes to stderr
            for item in exc.details.get("conflicts", []):
                where = f"run {item['run']}  {item['file']}" if item["run"] else item["file"]
                print(f"conflict  {where}" + (f": {item['reason']}" if item.get("reason") else ""))
                for field in item["fields"]:
                    print(f"  {field['field']} ({field['rule']}): ours {field['ours']!r}, theirs {field['theirs']!r}")
            for problem in exc.details.get("problems", []):
                print(f"illegal   {problem}")
            for finding in exc.details.get("findings", []):
                print(f"verify    {finding['commit'][:10]} {finding['kind']} {finding['file']}: {finding['message']}")
        return render.error(exc, json)
    if not json and result.get("status") == "replayed":
        for item in result["replayed"]:
            print(f"replayed  {item['from'][:10]} -> {(item['commit'] or 'no commit')[:10]}  {item['summary']}")
        for item in result["refused"]:
            print(f"refused   {item['commit'][:10]} {item['action']} on {item['run']}: {item['code']}: {item['message']}")
        for item in result["skipped"]:
            print(f"skipped   {item['commit'][:10]} {item['reason']}")
    done(result, json)
    return 0


@app.command("merge-driver")
def merge_driver(base: Annotated[str, Argument(metavar="BASE", help="git's %O: the common ancestor's version.")],
                 ours: Annotated[str, Argument(metavar="OURS", help="git's %A: our version; the result is written here.")],
                 theirs: Annotated[str, Argument(metavar="THEIRS", help="git's %B: their version.")],
                 path: Annotated[str, Argument(metavar="PATH", help="git's %P: the file's path in the repository.")]) -> int:
    """The merge driver git runs for store files (registered by init and doctor --fix); exit 1 on a refusal."""
    from statedir.api import places

    return places.merge_driver(base, ours, theirs, path)
