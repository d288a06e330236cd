"""Why a push failed, in words: a pre-push hook that refused names itself and what it found (its
output), statedir's own verify hook as a rule refusal (VALIDATION_FAILED, exit 1) with the way on,
anything else as git's own reason (GIT_ERROR, exit 3)."""
from __future__ import annotations

import subprocess

from statedir.errors import GitError, StatedirError, ValidationFailed
from statedir.gitops import git
from statedir.hints import Hint, Placeholder

VERIFY_HOOK = "pre-push: statedir verify found the findings above"  # statedir.gitops.hooks' last line
SHOWN = 8  # the hook's lines a message quotes; details carry all of them


def _hook_lines(push: subprocess.CompletedProcess[bytes]) -> list[str]:
    """What the hooks printed: the push's output without git's own lines (porcelain, errors, hints)."""
    text = (push.stdout or b"").decode(errors="replace") + "\n" + (push.stderr or b"").decode(errors="replace")
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if (not stripped or stripped == "Done" or line.startswith(("To ", "\t", " \t", "!", "=", "*", "+", "-"))
                or stripped.startswith(("error:", "fatal:", "hint:", "remote:"))):
            continue
        out.append(" ".join(stripped.split()))
    return out


def _placeholder(n: int) -> str:
    return "{hint}" if n == 1 else "{hint:%d}" % n


def push_failed(remote: str, push: subprocess.CompletedProcess[bytes], tail: str, *tail_hints: Hint) -> StatedirError:
    """The error for a failed push to `remote`; `tail`: what the sync left as it was, and what next
    (its steps `tail_hints`, said by its first placeholders; the refusal's own come after them)."""
    said = _hook_lines(push)
    reason = git.gist(push.stderr or b"")
    if any(VERIFY_HOOK in line for line in said):
        findings = [line for line in said if VERIFY_HOOK not in line and not line.startswith("verified ")]
        shown = "; ".join(findings[:SHOWN]) + (f"; and {len(findings) - SHOWN} more" if len(findings) > SHOWN else "")
        own = [Hint("verify"), Hint("rollback"), Hint("doctor"),
               Hint("verify", {"acknowledge": Placeholder("SHA"), "reason": Placeholder("R")})]
        verify, rollback, doctor, acknowledge = (_placeholder(len(tail_hints) + n) for n in range(1, 5))
        return ValidationFailed(
            f"git push to {remote} was refused by the store's pre-push hook ({verify}): "
            f"{shown or 'findings in the commits it sends'}; {tail}. `{verify}` lists the findings: "
            f"put each right (`{rollback}`, `{doctor}`) or, reviewed and accepted, record it with "
            f"`{acknowledge}`, then sync again (exit 1: refused by the rules, "
            "not a git failure)", hint=[*tail_hints, *own], remote=remote, hook="pre-push", findings=findings)
    if said and "failed to push" in reason:  # a hook of the user's (a store on the user's branch) said no
        shown = "; ".join(said[:SHOWN])
        return GitError(f"git push to {remote} was refused by a pre-push hook: {shown}; {tail} (exit 3: the "
                        "push failed, not the rules; the hook is yours, `git push` runs it too)",
                        hint=tail_hints, remote=remote, hook="pre-push", output=said)
    return GitError(f"git push to {remote} failed: {reason}; {tail}", hint=tail_hints, remote=remote)
