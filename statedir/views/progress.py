"""A progress bar on stderr for work over many files, drawn only when stderr is a terminal."""
from __future__ import annotations

import sys
from typing import TextIO

MIN_TOTAL = 100  # fewer items finish before a bar could be read
WIDTH = 30


class Bar:
    """Call with (done, total) as items finish; `close` clears the line. Redraws only when the
    whole percentage changes, so thousands of items cost at most a hundred writes."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.shown = -1
        self.drawn = False

    @staticmethod
    def wanted(stream: TextIO | None = None) -> bool:
        stream = stream if stream is not None else sys.stderr
        return bool(getattr(stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int) -> None:
        if total < MIN_TOTAL:
            return
        percent = done * 100 // total
        if percent == self.shown:
            return
        self.shown = percent
        filled = WIDTH * done // total
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} files")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
