"""The Stage 5 entry advisories and compliance reports of the Python API (mixed into StateDir):
`advisory` and `compliance`, each one commit or a refusal that changes nothing. Their files are
read here (inside the repository, a regular file, within the size limit) and handed to the rules
as their path, SHA-256 and, for a report the rules read, its parsed content."""
# Lazy imports: json, api.caller_inputs, files.yaml: each method imports what its own call uses, so a call pays for
#   its own path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from typing import Any

from statedir.api.opened import Opened
from statedir.argument_checks import checked
from statedir.errors import InvalidValue

REPORT_LIMIT = 1 << 20  # a report the rules read (JSON or YAML), at most 1 MiB


def _report(path: str, what: str) -> Any:
    """The parsed report at `path` (JSON, else YAML), refused past the limit or unparsable."""
    import json

    from statedir.api.caller_inputs import open_regular
    from statedir.files import yaml

    with open_regular(path, what) as f:
        try:
            raw = f.read(REPORT_LIMIT + 1)
        except OSError as exc:
            raise InvalidValue(f"cannot read {what} {path}: {exc.strerror}", file=path) from None
    if len(raw) > REPORT_LIMIT:
        raise InvalidValue(f"{what} {path} is over the size limit ({REPORT_LIMIT} bytes)", file=path,
                           limit=REPORT_LIMIT)
    try:
        return json.loads(raw)
    except ValueError:
        pass
    try:
        return yaml.to_plain(yaml.load(raw, path, quote=False))
    except Exception:  # noqa: BLE001 - any parse failure is the caller's bad file
        raise InvalidValue(f"{what} {path} is neither JSON nor YAML", file=path) from None


@checked
class EntryGates(Opened):
    """`advisory` (Stage 5 entry advisories) and `compliance` (reports, and the user's acknowledgement of a block)."""

    def advisory(self, run_id: str, kind: str, *, file: str | None = None, unavailable: str | None = None,
                 actor: str | None = None, expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        """A Stage 5 entry advisory (academic-pipeline: tortured_phrase, then cross_document; with the
        claim_audit setting also claim_audit, whose report names its `classes`), bound to the
        current draft's version label and SHA-256: its report `file`, or the `unavailable` CODE."""
        from statedir.api import caller_inputs

        if (file is None) == (unavailable is None):
            raise InvalidValue("give the advisory's report ({opt:file} F) or why it is unavailable "
                               "({opt:unavailable} CODE), one of the two", argument="file")
        args: dict[str, Any] = {"kind": kind, "unavailable": unavailable, "file": None, "classes": None}
        if file is not None:
            args["file"] = caller_inputs.file_hash(file, self.store.files_worktree)
            report = _report(file, "{opt:file}")
            args["classes"] = report.get("classes") if isinstance(report, dict) else None
        return self._do(run_id, "advisory", actor, expect=expect, role=role, **args)

    def compliance(self, run_id: str, stage: str, *, report: str | None = None, override: bool = False,
                   reason: str | None = None, actor: str | None = None, expect: str | None = None,
                   role: str | None = None, channel: str | None = None) -> dict[str, Any]:
        """A compliance report at an integrity stage (`report`, JSON: mode, frameworks with their
        item verdicts and decision, overall_decision, tier; actor compliance_agent), or with
        `override` the user's acknowledgement of a blocking one (the override ladder's reason; the
        user's whoever relays it, with the `channel` it came by, default cli), which statedir
        appends to its action-receipt log and binds beside the report."""
        from statedir.api import caller_inputs

        if override == (report is not None):
            raise InvalidValue("compliance takes a report ({opt:report} F.json) or the user's {opt:override}, one of "
                               "the two", argument="report")
        if override:
            who = {"answered_by": "user", "channel": channel} if channel else None
            return self._do(run_id, "compliance_override", actor, reason, expect=expect, role=role, who=who,
                            stage=stage, answered_by="user", store_prefix=self._receipt_root())
        if reason is not None:
            raise InvalidValue("{opt:reason} belongs to {opt:override} (the user's acknowledgement of a block)",
                               argument="reason")
        assert report is not None
        where = caller_inputs.file_hash(report, self.store.files_worktree, what="{opt:report}")
        return self._do(run_id, "compliance", actor, expect=expect, role=role, stage=stage, file=where,
                        report=_report(report, "{opt:report}"))
