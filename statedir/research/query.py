"""Reading the ledger through its index: `--query` (one filter, the record and its children),
`--report` (plain text) and `--rebuild-index`."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from statedir.errors import InvalidValue
from statedir.hints import opt
from statedir.research.index import Index, path_of, using
from statedir.research.kinds import KINDS
from statedir.store.store import Store

FILTERS = ("run_id", "question_id", "project_id", "hypothesis_id", "experiment_id", "source_id", "skill", "since")


def _select(kind: str, where: str, order: str | None = None) -> str:
    k = KINDS[kind]
    sql = f"SELECT {', '.join(k.columns)} FROM {k.folder} WHERE {where}"
    return sql + (f" ORDER BY {order}, id" if order else "")


# filter -> [(result key, kind, where, order)]: the named record first, then its children.
SHAPES: dict[str, list[tuple[str, str, str, str | None]]] = {
    "run_id": [("runs", "run", "id = ?", None), ("results", "result", "run_id = ?", "ts"),
               ("claims", "claim", "run_id = ?", "ts")],
    "question_id": [("questions", "question", "id = ?", None),
                    ("hypotheses", "hypothesis", "question_id = ?", "created_at"),
                    ("evidence", "evidence", "question_id = ?", "created_at"),
                    ("runs", "run", "question_id = ?", "started_at")],
    "project_id": [("projects", "project", "id = ?", None),
                   ("questions", "question", "project_id = ?", "created_at"),
                   ("sources", "source", "project_id = ?", "created_at")],
    "hypothesis_id": [("hypotheses", "hypothesis", "id = ?", None),
                      ("experiments", "experiment", "hypothesis_id = ?", "created_at"),
                      ("evidence", "evidence", "hypothesis_id = ?", "created_at")],
    "experiment_id": [("experiments", "experiment", "id = ?", None),
                      ("runs", "run", "experiment_id = ?", "started_at")],
    "source_id": [("sources", "source", "id = ?", None), ("evidence", "evidence", "source_id = ?", "created_at")],
    "skill": [("runs", "run", "skill = ?", "started_at")],
    "since": [("runs", "run", "started_at >= ?", "started_at")],
}


def normalize_since(since: str) -> str:
    """An ISO date stays a date; a date-time becomes UTC `...Z`, comparable with stored times."""
    text = since.strip()
    try:
        if len(text) == 10:
            datetime.strptime(text, "%Y-%m-%d")
            return text
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidValue(f"{opt('since')} {since!r} is not an ISO date (2026-11-30) or date-time",
                           since=since) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def query(store: Store, **filters: str | None) -> dict[str, list[dict[str, Any]]]:
    """The records for exactly one filter: the named record and its children."""
    given = {k: v for k, v in filters.items() if v is not None}
    unknown = set(given) - set(FILTERS)
    if unknown or len(given) != 1:
        raise InvalidValue(f"{opt('query')} takes exactly one of " + ", ".join(opt(f) for f in FILTERS),
                           given=sorted(given))
    (name, value), = given.items()
    if name == "since":
        value = normalize_since(value)
    return using(store, lambda index: {key: index.rows(_select(kind, where, order), (value,))
                                       for key, kind, where, order in SHAPES[name]})


def every(store: Store, kind: str) -> list[dict[str, Any]]:
    """Every record of `kind` (a singular kind name), oldest first."""
    if kind not in KINDS:
        raise InvalidValue(f"unknown research kind {kind!r}; one of {', '.join(KINDS)}", kind=kind)
    columns = KINDS[kind].columns
    order = next((c for c in ("created_at", "started_at", "ts") if c in columns), None)
    return using(store, lambda index: index.rows(_select(kind, "1 = 1", order)))


def rebuild(store: Store, *, full: bool = False) -> dict[str, Any]:
    """Bring the index up to date (`full`: reread every file); what was read and what it holds."""
    fresh = not path_of(store).exists()

    def counted(index: Index) -> tuple[dict[str, Any], dict[str, int]]:
        return index.last_sync, {k.folder: index.rows(f"SELECT count(*) AS n FROM {k.folder}")[0]["n"]
                                 for k in KINDS.values()}

    synced, counts = using(store, counted, full=full)
    mode = "full" if full or fresh or synced["rebuilt"] == "full" else "incremental"
    return {"rebuilt": mode, "shards_scanned": synced["files_read"], "files_read": synced["files_read"],
            "records": counts}


def report(store: Store, since: str | None = None) -> str:
    """Runs newest first with their Result and Claim counts, for people."""
    where, params = ("WHERE started_at >= ?", (normalize_since(since),)) if since else ("", ())
    runs = using(store, lambda index: index.rows(
        "SELECT r.id, r.skill, r.status, r.started_at, "
        "(SELECT count(*) FROM results WHERE run_id = r.id) AS results, "
        f"(SELECT count(*) FROM claims WHERE run_id = r.id) AS claims FROM runs r {where} "
        "ORDER BY r.started_at DESC, r.id DESC", params))
    lines = [f"{len(runs)} run(s){f' since {since}' if since else ''}:"]
    lines += [f"  [{run['status']:>9}] {run['skill']} ({run['id']}) started {run['started_at']} -- "
              f"{run['results']} result(s), {run['claims']} claim(s)" for run in runs]
    return "\n".join(lines)
