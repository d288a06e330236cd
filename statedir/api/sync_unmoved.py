"""A plain `statedir sync` where nothing moved since the last: answered from the record that sync
left (statedir.sync.unmoved) with one `git ls-remote`, before the CLI loads the command's module,
the store or the sync; None sends the call the whole way (statedir.api.syncing)."""
# Lazy imports: errors, gitops.identity: only where STATEDIR_ACTOR is set (its check compiles a pattern; the short
#   path's start-up is most of its cost, docs/reliability.md).
from __future__ import annotations

from statedir.sync import unmoved

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a no-op sync's short path loads none)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# What the whole sync reads of its environment and this path does not: where one is set, it decides.
_WHOLE_WAY = ("STATEDIR_LOCK_TIMEOUT", "STATEDIR_FAULT")


def answer(store: str | None, cwd: str, environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The result of `sync` with no options but --json, in the store `store` names (STATEDIR_STORE) or
    the nearest at or above `cwd`, where nothing moved; None where the whole sync must decide."""
    if store == "" or any(name in environ for name in _WHOLE_WAY):
        return None
    actor = environ.get("STATEDIR_ACTOR")
    if actor is not None:
        from statedir.errors import InvalidId
        from statedir.gitops.identity import check_name

        try:
            check_name(actor, "actor")
        except InvalidId:  # the whole sync refuses it, in its words
            return None
    root = unmoved.store_root(store, cwd)
    return unmoved.answer(root, environ) if root is not None else None
