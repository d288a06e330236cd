"""A function's parameters read from its code object, and a call's arguments bound to them by
name, as `inspect.signature` would give them without importing inspect (statedir.argument_checks
checks every public API method's arguments with them)."""
# Lazy imports: inspect, to word a call that does not fit: a call that fits is read off the code object (inspect with
#   dataclasses, about 10 ms a transition).
from __future__ import annotations

from collections.abc import Callable
from typing import Any

_VARARGS, _VARKEYWORDS = 0x04, 0x08  # inspect.CO_VARARGS, inspect.CO_VARKEYWORDS


class Parameters:
    """A function's parameters read from its code object, as inspect.signature would give them
    (inspect, with ast, dis and tokenize, costs a CLI transition more than its own rules)."""

    __slots__ = ("function", "positional", "names", "extra", "optional", "plain", "annotations")

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        while hasattr(function, "__wrapped__"):  # a method under @_reads: its own parameters, as inspect reads them
            function = function.__wrapped__
        code = function.__code__
        self.positional = code.co_varnames[:code.co_argcount]
        self.names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        varargs = bool(code.co_flags & _VARARGS)
        # The **name parameter (a research query's **filters), after the named ones and any *args.
        self.extra = code.co_varnames[len(self.names) + varargs] if code.co_flags & _VARKEYWORDS else None
        defaults = function.__defaults__ or ()
        self.optional = frozenset(self.positional[len(self.positional) - len(defaults):]) if defaults else frozenset()
        self.optional |= frozenset(function.__kwdefaults__ or ())
        self.plain = not varargs and not code.co_posonlyargcount  # else left to inspect
        self.annotations: dict[str, Any] = function.__annotations__

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The arguments given, by name in the parameters' order, and those the **name parameter
        takes; a call that does not fit raises the TypeError inspect.signature's bind() raises."""
        if self.plain and len(args) <= len(self.positional):
            given = dict(zip(self.positional, args, strict=False))  # args may stop short
            rest: dict[str, Any] = {}
            fits = True
            for key, value in kwargs.items():
                if key in given:
                    fits = False
                elif key in self.names:
                    given[key] = value
                elif self.extra is not None:
                    rest[key] = value
                else:
                    fits = False
            if fits and all(name in given or name in self.optional for name in self.names):
                return {name: given[name] for name in self.names if name in given}, rest
        import inspect  # a call that does not fit (or an unusual signature): inspect's own reading and words

        bound = inspect.signature(self.function).bind(*args, **kwargs)
        named = dict(bound.arguments)
        rest = named.pop(self.extra, {}) if self.extra is not None else {}
        return named, rest
