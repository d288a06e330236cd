"""A stopped clock for the CLI in tests: with STATEDIR_TEST_NOW set (and this folder on
PYTHONPATH), every transition is made at that UTC second, so two machines can act "in the same
second" deterministically. git's own dates are pinned by GIT_AUTHOR_DATE/GIT_COMMITTER_DATE."""
from __future__ import annotations

import os

if os.environ.get("STATEDIR_TEST_NOW"):
    from statedir.engine import transaction

    transaction.utc_now = lambda: os.environ["STATEDIR_TEST_NOW"]
