"""The record a sync that found nothing to exchange leaves for the next (statedir.sync.unmoved):
written only where everything its answer read was read plainly from the repository's files (the
upstream, the remote's URL and the commit verified last from the config file, no URL rewrite, no
merge-driver registration or warning read from that file alone, the refs loose or packed), so that the same files say the same again."""
from __future__ import annotations

from _sha1 import sha1

from statedir.gitops import config_file, merge_driver_config
from statedir.store.store import Store
from statedir.sync import unmoved
from statedir.sync.remote import remote_dir

VERIFIED = "statedirVerified"  # branch.<name>.statedirVerified: statedir.sync.verified


def _plain(values: dict[str, str | object] | None, local: str, name: str, branch: str, head: str) -> bool:
    """Whether the config file alone says `name`/`branch` is the upstream, the remote's URL, and `head`
    as the commit verified last."""
    if values is None or any(key.endswith(("insteadof", "pushinsteadof")) for key in values):
        return False
    url = config_file.get(values, f"remote.{name}.url")
    return (config_file.get(values, f"branch.{local}.remote") == name
            and config_file.get(values, f"branch.{local}.merge") == f"refs/heads/{branch}"
            and isinstance(url, str) and bool(url)
            and config_file.get(values, f"branch.{local}.{VERIFIED}", own=True) == head)


def remember(store: Store, name: str, branch: str, url: str, head: str) -> None:
    """After a sync found `head` to be the remote `name`'s `branch` (at `url`) and verified: the
    record, where the files say so plainly; else none."""
    now = unmoved.state(str(store.root))
    if now is None:
        return
    try:  # the very bytes the record's digest is of
        with open(f"{now[4]}/config", "rb") as f:
            config = f.read()
        text = config.decode("utf-8")
        values = config_file.parse(text) if sha1(config).hexdigest() == now[7] else None
    except (OSError, UnicodeDecodeError):
        text, values = "", None
    if merge_driver_config.names_driver(store.root) and not merge_driver_config.said_by_file(text):
        values = None  # the merge driver's warning rests on config outside the file (git's global, an include)
    words = [name, branch, str(remote_dir(store, name, url))]  # where git reaches the remote from
    if (store.standing or now[6] != head or unmoved.tracked(now[4], name, branch) != head
            or not _plain(values, now[5], name, branch, head) or any("\n" in word or not word for word in words)):
        unmoved.discard(now[3])
        return
    unmoved.write([*now, *words])
