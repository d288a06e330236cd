"""verify's check of the template files a commit stores: a name and version keep the content
they were first seen with, shipped or stored (statedir.engine.template.identity); a commit
storing other content under them is `illegal`, whoever made it."""
from __future__ import annotations

from typing import Any

from statedir.engine.template import identity as template_identity
from statedir.history.snapshot import CommitReader
from statedir.store.recorded import Commit
from statedir.store.store import Store


class Identities:
    """The names and versions seen so far in verify's walk, with their content; read when first
    asked (a merge, a stored template), so a span that stores none walks no history for them."""

    def __init__(self, store: Store, since: str | None,
                 seen: list[tuple[tuple[str, str], template_identity.Seen]] | None = None) -> None:
        self._store, self._since, self._seen = store, since, seen
        self._known: template_identity.Known | None = None

    @property
    def known(self) -> template_identity.Known:
        if self._known is None:
            if self._seen is None:  # shipped, and what history held before `since` (a walk of it)
                self._known = template_identity.known(self._store, self._since)
            else:  # shipped, and what history held, as a verify up to `since` remembered it (verified_cache)
                self._known = template_identity.shipped_known(self._store.cache_dir)
                for key, first in self._seen:
                    self._known.setdefault(key, first)
        return self._known

    def stored(self) -> list[tuple[tuple[str, str], template_identity.Seen]]:
        """The names and versions seen in history (not shipped), in the order first seen."""
        return [(key, first) for key, first in self.known.items() if first.commit is not None]

    def check(self, reader: CommitReader, commit: Commit) -> list[dict[str, Any]]:
        out = []
        for rel, (status, _, new) in sorted(commit.changed.items()):
            if status == "D" or not rel.startswith("templates/") or not rel.endswith(".yaml"):
                continue
            found = template_identity.identity(reader.raw(new), reader.store.cache_dir)
            if found is None:
                continue
            name, version, digest = found
            first = template_identity.conflict(self.known, name, version, digest)
            if first is None:
                self.known.setdefault((name, version), template_identity.Seen(
                    digest, f"commit {commit.sha[:10]} stored it as {rel}", commit.sha))
                continue
            out.append({"commit": commit.sha, "kind": "illegal", "file": rel,
                        "message": f"stores template {name!r} version {version} with other content than it has "
                                   f"({first.where}): a name and version never change content, so a run on "
                                   "it would follow other rules"})
        return out


def combined(own: list[dict[str, Any]], forged: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A commit's findings, a forged template's in place of a lesser word on its file (a replay
    that already calls the file illegal says so in its own words)."""
    illegal = {f["file"] for f in own if f["kind"] == "illegal"}
    forged = [f for f in forged if f["file"] not in illegal]
    files = {f["file"] for f in forged}
    return [f for f in own if f["file"] not in files] + forged
