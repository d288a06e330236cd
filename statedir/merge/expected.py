"""What a merge must hold, decided from its sides' bytes: a file changed on one side only is that
side's, a file changed on both is the driver's merge (statedir.merge.driver), and a run whose
versions both sides registered has its state, stages and passports merged as one folder
(statedir.merge.versions). verify holds a merge commit to it (statedir.history.merge_check), and
sync settles a conflicted merge by it (statedir.sync.versions); `fixed` says what a file of a merge
resolved by hand must hold once repaired (statedir.history.merge_repair, repaired_view)."""
from __future__ import annotations

import re
from pathlib import Path

from statedir.merge import driver
from statedir.store import layout

# A run's files that carry versions: where both sides registered one, merged as one folder.
VERSIONED = re.compile(r"^runs/(?P<run>[^/]+)/(state\.yaml|stages/[^/]+\.yaml|materials/[^/]+\.yaml)$")


def registered_on_both(both: set[str]) -> set[str]:
    """Runs with a passport changed on both sides (where two versions may claim one label)."""
    return {m["run"] for rel in both if (m := VERSIONED.match(rel)) and "/materials/" in rel}


def expected(rel: str, base: bytes | None, ours: bytes | None, theirs: bytes | None,
             root: Path) -> bytes | None | bool:
    """What the merge must hold: one side where only the other changed, else the driver's
    merge (False where the driver refuses: no content is legal)."""
    if base == theirs:
        return ours
    if base == ours or ours == theirs:
        return theirs
    if ours is None or theirs is None:
        return False  # changed on one side, deleted on the other
    outcome = driver.merge_file(rel, base, ours, theirs, root)
    return outcome.data if outcome.clean else False


def fixed(rel: str, want: bytes | None | bool, merged: bytes | None, now: bytes | None) -> bytes | None | str:
    """What `rel` must hold where the hand merge holds `merged`, the driver gives `want` and a
    later commit holds `now`; a string: why it cannot be said (the file changed since)."""
    if want is False or want is True:
        return "the merge's parents conflict on it (the rules refuse to merge them): resolve by hand"
    if now == merged or now == want:
        return want
    kind = layout.schema_for(rel) or ""
    if kind.startswith("log-") and want is not None and merged is not None and now is not None \
            and now.startswith(merged):  # transitions appended since: kept after the re-merged entries
        return want + now[len(merged):]
    return "changed since the merge: repair it by hand"
