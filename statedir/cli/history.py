"""History commands: diff, versions, rollback, verify, doctor (show/get --at and log's filters
live with their commands in read.py)."""
# Lazy imports: os, api.documents, api.texts, cli.common: imported by the command that uses them: `statedir COMMAND`
#   loads this module for any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

from itertools import groupby
from operator import itemgetter
from typing import Annotated, Any, Optional

from statedir.cli.common import (
    DEFAULT_ACTOR,
    ActorOpt,
    ExpectOpt,
    JsonOpt,
    RoleOpt,
    RunArg,
    StoreOpt,
    document,
    open_store,
)
from statedir.cli.registry import app
from statedir.cli.render import done, emit_json, table
from statedir.commands.params import Argument, Option


@app.command()
def diff(run_id: RunArg,
         start: Annotated[str, Argument(metavar="FROM", help="The earlier commit (anything git rev-parse takes).")],
         end: Annotated[Optional[str], Argument(metavar="[TO]", help="The later commit; default: the current state.")] = None,
         store: StoreOpt = None, json: JsonOpt = False) -> None:
    """What changed in a run between two commits: dotted paths, old and new values."""
    from statedir.api import texts

    result = document("diff", open_store(store), locals()).value
    if json:
        emit_json(result)
        return
    to = result["to"][:10] if result["to"] else "now"
    print(f"run {run_id}: {result['from'][:10]} -> {to}, {len(result['changes'])} change(s)")
    if result["changes"]:
        print(texts.changes(result["changes"]))


@app.command()
def versions(run_id: RunArg,
             material: Annotated[str, Argument(help="A series (e.g. research: all its versions) or a "
                                                      "material (e.g. bibliography: the versions holding it).")],
             store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Every version of a material, oldest first, with its passport and the commit that made it."""
    rows = document("versions", open_store(store), locals()).value
    if json:
        emit_json(rows)
        return
    flat = [{"version_label": r["version_label"], "status": r["passport"].get("verification_status"),
             "origin": r["passport"].get("origin_date"), "content_hash": (r["passport"].get("content_hash") or "")[:12],
             "commit": (r["commit"] or "(not committed)")[:10]} for r in rows]
    print(table(flat, ["version_label", "status", "origin", "content_hash", "commit"]) or f"no versions of {material} yet")


@app.command()
def rollback(run_id: RunArg,
             to: Annotated[str, Option("--to", metavar="REV", help="The commit to bring the run back to (an ancestor of HEAD).")],
             reason: Annotated[str, Option("--reason", help="Why (required; kept in the log and the commit).")],
             store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
             expect: ExpectOpt = None) -> None:
    """One new commit that brings the run back to REV; history is never rewritten."""
    done(document("rollback", open_store(store), locals()).value, json)


@app.command()
def verify(run_id: Annotated[Optional[str], Argument(help="Only this run's commits.")] = None,
           since: Annotated[Optional[str], Option(
               "--since", metavar="REV", envvar="PRE_COMMIT_FROM_REF", show_envvar=True,
               help="Only commits after REV (as a pre-commit pre-push hook: what the push sends).")] = None,
           acknowledge: Annotated[Optional[str], Option(
               "--acknowledge", metavar="SHA", help="Record (one commit, in acknowledged.yaml) that SHA's findings "
               "were reviewed and are accepted; needs --reason. verify then lists them apart and exits 0 for them.")] = None,
           reason: Annotated[Optional[str], Option("--reason", help="With --acknowledge: what the review found.")] = None,
           pushed: Annotated[bool, Option(
               "--pushed", help="Only what the push being made sends, as the pre-commit framework's pre-push stage "
               "says (PRE_COMMIT_LOCAL_BRANCH, PRE_COMMIT_FROM_REF, PRE_COMMIT_TO_REF): the commits after the "
               "remote's; nothing where the store is on a branch of its own that the push does not send.")] = False,
           store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR) -> int:
    """Replay history: exit 0 when every commit that touched the store is a legal transition, 1 with findings.

    A finding you reviewed and accept (a hand edit you checked, say) is acknowledged once with
    `statedir verify --acknowledge SHA --reason R`; later runs list it as acknowledged, not as a finding.
    """
    found = document("verify", open_store(store), locals())
    result = found.value
    if acknowledge is not None:
        done(result, json)
        return 0
    if result.get("pushed") is False:  # the push sends none of the store's commits
        if json:
            emit_json(result)
        else:
            import os

            print(f"verify: the push sends {os.environ.get('PRE_COMMIT_LOCAL_BRANCH')}, which holds none of the "
                  "store's commits; nothing to verify")
        return 0
    if json:
        emit_json(result)
    else:
        if result["findings"]:  # one write (escaped once), not one per finding: a store's history may hold 30,000
            print("\n".join(_finding_lines(result["findings"])))
        for f in result.get("repaired", []):
            print(f"{f['commit'][:10]}  repaired      {f['file']}: a hand-resolved merge, re-merged by doctor's "
                  f"commit {f['repaired_by'][:10]}")
        for f in result.get("not_counted", []):
            print(f"{f['commit'][:10]}  not counted   {f['file'] or '-'}: {f['kind']} acknowledged by {f['by']}, "
                  f"which does not count here: {f['reason']}")
        verdict = "clean" if result["clean"] else f"{len(result['findings'])} finding(s)"
        if result.get("acknowledged"):
            verdict += f" ({len(result['acknowledged'])} acknowledged finding(s) left out)"
        print(f"verified {result['checked']} commit(s): {verdict}")
    return int(found.code)


def _finding_lines(findings: list[dict[str, Any]]) -> list[str]:
    """`COMMIT  KIND FILE: MESSAGE` for each finding; a row of one commit's, kind's and message's
    (a commit of 30,000 files made by hand) shares its words, written once."""
    out: list[str] = []
    for (commit, kind, message), row in groupby(findings, key=itemgetter("commit", "kind", "message")):
        head, tail = f"{commit[:10]}  {kind:<13} ", f": {message}"
        out += [f"{head}{f['file'] or '-'}{tail}" for f in row]
    return out


@app.command()
def doctor(fix: Annotated[bool, Option("--fix", help="Repair what is found (each line says how).")] = False,
           store: StoreOpt = None, json: JsonOpt = False, expect: ExpectOpt = None) -> int:
    """Report (and with --fix repair) what a crash, a clone or a hand edit left behind."""
    from statedir.api.documents import doctor_at
    from statedir.cli.common import env_lock_timeout, store_path

    # Not open_store(): opening a StateDir rolls a dead writer's journal back, which doctor reports first.
    found = doctor_at(store_path(store), fix=fix, expect=expect, timeout=env_lock_timeout())
    result = found.value
    if json:
        emit_json(result)
    else:
        for f in result["repaired"]:
            print(f"fixed  {f['kind']:<12} {f['file'] or '-'}: {f['fix']}")
        for f in result["findings"]:
            print(f"{f['kind']:<12} {f['file'] or '-'}: {f['message']} (--fix: {f['fix']})")
        if result.get("backup"):
            print(f"your versions of restored files are in {result['backup']}")
        if not result["findings"]:
            print("doctor: nothing to repair")
    return int(found.code)
