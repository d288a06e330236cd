"""The handoff bus: hasbrains-agent-kit's pipeline-state (run variables, per-phase entries, evidence
paths passed by lookup) as `bus/<session>.yaml` files of the store, each change one commit."""
from __future__ import annotations

from statedir.bus.errors import EvidenceMissing, UnknownSession, WrongType
from statedir.bus.ops import Bus

__all__ = ["Bus", "EvidenceMissing", "UnknownSession", "WrongType"]
