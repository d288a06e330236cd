"""signers.may_change for who acknowledges: once an acknowledger is bound, only an acknowledger's
key changes the acknowledgers (or gives a first key to an actor named one); before, a key the
file already trusts. Pure data, no keys made."""
from __future__ import annotations

from statedir.files.signers_file import Signers, may_change, parse
from statedir.store import commit_keys

ALICE, BOB, MALLORY = (f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{c * 43}" for c in "ABC")


def test_naming_acknowledgers_needs_a_trusted_key_until_one_is_bound() -> None:
    before = Signers([{"actor": "orch", "key": ALICE}, {"actor": "reviewer", "key": BOB}])
    keys, _, _ = may_change(before, Signers(before.entries, ["reviewer"]))
    assert keys == {ALICE, BOB}


def test_once_bound_only_an_acknowledgers_key_changes_who_acknowledges() -> None:
    before = Signers([{"actor": "orch", "key": ALICE}, {"actor": "reviewer", "key": BOB}], ["reviewer"])
    keys, rule, _ = may_change(before, Signers(before.entries, ["reviewer", "orch"]))
    assert keys == {BOB} and "acknowledger's key" in rule
    named_unbound = Signers(before.entries, ["reviewer", "mallory"])
    assert may_change(before, named_unbound)[0] == {BOB}
    # a first key for an actor already named an acknowledger is the acknowledgers' to give
    waiting = Signers(before.entries, ["reviewer", "mallory"])
    bound = Signers([*before.entries, {"actor": "mallory", "key": MALLORY}], ["reviewer", "mallory"])
    assert may_change(waiting, bound)[0] == {BOB}


def test_a_file_that_names_none_keeps_its_bytes_and_one_that_does_round_trips() -> None:
    plain = Signers([{"actor": "orch", "key": ALICE}])
    assert b"acknowledgers" not in commit_keys.dump(plain)
    named = Signers(plain.entries, ["orch"])
    assert parse(commit_keys.dump(named)) == named and parse(commit_keys.dump(plain)) == plain
