"""The people methods of the Python API (mixed into StateDir): who may act in which roles
(statedir.yaml `people:`, statedir.engine.people), each change one commit made by the user."""
# Lazy imports: engine.people, engine.template: each method imports what its own call uses, so a call pays for its own
#   path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from typing import Any

from statedir.api.opened import Opened
from statedir.argument_checks import checked


@checked
class People(Opened):
    """Mixed into StateDir: the store's people, listed, added and removed."""

    def people(self) -> list[dict[str, Any]]:
        """The store's people as of HEAD: [{name, roles}] ([] where statedir.yaml lists none)."""
        from statedir.engine import people

        return people.listing(self.store)

    def add_person(self, name: str, roles: list[str], *, actor: str | None = None, role: str | None = None,
                   expect: str | None = None) -> dict[str, Any]:
        """List `name` as a person who may act in `roles` (added to those they hold): one commit by the
        user (`actor` user while nobody is listed; then a listed person who holds user)."""
        return self._change({"op": "add", "name": name, "roles": list(roles)}, actor, role, expect)

    def remove_person(self, name: str, roles: list[str] | None = None, *, actor: str | None = None,
                      role: str | None = None, expect: str | None = None) -> dict[str, Any]:
        """Take `roles` from `name` (default: all, and the person off the list): one commit by the user."""
        return self._change({"op": "remove", "name": name, "roles": list(roles or [])}, actor, role, expect)

    def _change(self, args: dict[str, Any], actor: str | None, role: str | None,
                expect: str | None) -> dict[str, Any]:
        from statedir.engine import people
        from statedir.engine.template import USER

        acted, who = self._acting(actor, role, USER)
        with self.store.expecting(expect):
            return people.change(self.store, args, acted, who.get("person"), self.lock_timeout)
