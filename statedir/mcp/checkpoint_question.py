"""A MANDATORY checkpoint is the user's to answer, never the agent's: the question the server puts
to the user (through the client's elicitation form) before `confirm` runs there, and their answer.
What is asked is the API's (statedir.api.users_questions); the form's refusals and the call the
answer makes are the server's. No MCP SDK here."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from statedir.api import users_questions
from statedir.api.users_questions import Asked
from statedir.errors import InvalidValue, StatedirError, UserAnswerRequired, UserDeclined
from statedir.mcp.tools import EXPECT_HEAD


@dataclass(frozen=True)
class Question(Asked):
    """What the user is asked (the API's `Asked`: the message, the responses the checkpoint takes,
    the stages `next` may name, with the template's default stage preset, never anything the agent
    proposed: the form is the user's), with HEAD when it was asked and the run's state then (its
    folder's tree): the answer is written only on the run as the user saw it."""

    head: str | None = None
    state: str | None = None

    @classmethod
    def of(cls, asked: Asked, head: str | None, state: str | None = None) -> Question:
        """The question the API says the user is asked, as asked at HEAD `head` on the run's state `state`."""
        return cls(**{f.name: getattr(asked, f.name) for f in fields(Asked)}, head=head, state=state)

    @property
    def title(self) -> str:
        """The form's title; naming the run's state, so an answer to the run as it was is never
        taken for the run as it is (a question asked again whenever the run changed)."""
        what = "Checkpoint" if self.about == "checkpoint" else self.about[:1].upper() + self.about[1:]
        return f"{what} of run {self.run_id}" + (f" (state {self.state[:12]})" if self.state else "")

    def unaskable(self) -> StatedirError:
        """The refusal for a client that cannot ask its user (no elicitation)."""
        what = (f"the checkpoint after stage {self.stage} of run {self.run_id} is MANDATORY" if self.about == "checkpoint"
                else f"the {self.about} at stage {self.stage} of run {self.run_id} is the user's decision")
        return UserAnswerRequired(
            f"{what}: only the user may answer "
            "it, and this client cannot ask them (it does not support elicitation). Ask the user: show them "
            f"`status {{run_id: {self.run_id}}}`, and have them answer it themselves (a client that can show them "
            f"the form, or statedir's command line), with {self.answers} {' or '.join(self.responses)}; do not "
            "answer it for them",
            run_id=self.run_id, stage=self.stage, responses=list(self.responses), choices=list(self.choices))

    def misfit(self, wrong: dict[str, Any]) -> StatedirError:
        """The refusal for an accepted form whose answer it does not take: `wrong` maps each field
        to the value given (None: left out); nothing changed."""
        allowed = {self.answers: list(self.responses), "next": list(self.choices),
                   **{name: list(options) for name, options, _ in self.picks}}
        said = "; ".join(f"{name} was left out" if given is None else f"{name} {given!r} is not one of the choices"
                         for name, given in wrong.items())
        choices = "; ".join(f"{name}: {', '.join(allowed.get(name, []))}" for name in wrong)
        return InvalidValue(f"the user's answer did not fit the checkpoint's form ({said}; the choices are "
                            f"{choices}); nothing changed. Ask the user again",
                            run_id=self.run_id, stage=self.stage,
                            fields={name: {"given": given, "allowed": allowed.get(name, [])}
                                    for name, given in wrong.items()})

    def declined(self, action: str) -> StatedirError:
        """The refusal for a question the user declined or cancelled: nothing changed."""
        said = {"decline": "declined", "cancel": "cancelled"}.get(action, action)
        what = (f"the MANDATORY checkpoint after stage {self.stage}" if self.about == "checkpoint"
                else f"the {self.about} at stage {self.stage}")
        return UserDeclined(f"the user {said} {what} of run "
                            f"{self.run_id}; nothing changed. Do not answer it for them: ask what they want",
                            run_id=self.run_id, stage=self.stage, action=action)


@dataclass(frozen=True)
class Answer:
    """The user's answer to `question`: a response, and the next stage where the graph offers a choice."""

    question: Question
    response: str
    next: str | None = None
    free: tuple[tuple[str, str | None], ...] = ()  # the free-text fields as the user filled them
    picked: tuple[tuple[str, str | None], ...] = ()  # the question's picks as the user chose them

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments with the user's answer in place of the agent's (its free text and
        picks too: a reason or a citation style the agent wrote is not the user's), expecting the
        run as it was when the user was asked (a change since is HEAD_MOVED: the answer was to it)."""
        mine = {*self.question.free, *(name for name, _, _ in self.question.picks)}
        out = {**{k: v for k, v in arguments.items() if k not in mine}, **dict(self.picked),
               self.question.answers: dict(self.question.values).get(self.response, self.response),
               **dict(self.free), EXPECT_HEAD: self.question.head}
        if self.question.answers == "response":
            out["next"] = self.next or self.question.next_default
        return {key: value for key, value in out.items() if value is not None}


def question(command: str, t: Any, run: Any, arguments: dict[str, Any], head: str | None,
             state: str | None = None) -> Question | None:
    """The user's question where command `command` would answer one on run `run` (of template `t`,
    as the API loaded them), asked at `head` on the run's state `state`; None otherwise. The agent's
    `arguments` never fill the user's form: its response is not the user's answer."""
    asked = users_questions.asked(command, t, run, arguments)
    return Question.of(asked, head, state) if asked is not None else None
