"""The research ledger: research-lab-skills' Agent State (Project -> Question -> Hypothesis ->
Experiment -> Run -> Result, Sources, Evidence, Claims) as one YAML file per entity in the
store, every write one commit, queries from a disposable SQLite index."""
from __future__ import annotations

from statedir.research.ledger import Ledger

__all__ = ["Ledger"]
