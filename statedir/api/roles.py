"""The roles an entry point's callers may act in, as data: the user's (`user`, whose answers only
the user gives) and statedir's own (`state_tracker`, the writer, as which no caller acts), and how
a refusal names several of them."""
from __future__ import annotations

from statedir.engine.admission import WRITER
from statedir.engine.template import USER
from statedir.engine.wording import either

__all__ = ["USER", "WRITER", "either"]
