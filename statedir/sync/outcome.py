"""The result a sync reports: plain data, importable by the no-op's short path (statedir.sync.unmoved)
without the store."""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a no-op sync's short path loads none)
if TYPE_CHECKING:
    from typing import Any


def result(name: str, branch: str, status: str, head: str | None, attempts: int, *, pushed: bool) -> dict[str, Any]:
    summary = {"replayed": f"replayed onto {name}/{branch}",
               "up_to_date": f"up to date with {name}/{branch}", "pushed": f"pushed to {name}/{branch}",
               "fast_forward": f"fast-forwarded to {name}/{branch}", "merged": f"merged {name}/{branch}"}[status]
    if pushed and status != "pushed":
        summary += " and pushed"
    return {"remote": name, "branch": branch, "status": status, "pushed": pushed, "commit": head,
            "attempts": attempts, "summary": summary}
