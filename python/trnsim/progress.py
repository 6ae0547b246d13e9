"""Progress on long work: one helper for sweeps, calibration and anything else in Python.

On a terminal it is a rich bar with rate and ETA; otherwise plain lines on stderr (at most one
every few seconds, plus the last); in --json mode (``quiet=True``) nothing at all, so stdout and
stderr stay machine-readable.

    with Progress("sweep", total=64) as p:
        for point in points:
            run(point)
            p.advance()

C++ commands that want their progress shown by a Python caller print lines on stderr in the
form ``trnsim-progress: <done>/<total> <label>`` (see docs/reports-and-sweeps.md);
:func:`parse_progress_line` reads them back.
"""
from __future__ import annotations

import re
import sys
import time
from typing import IO, Optional

__all__ = ["Progress", "parse_progress_line", "progress_line"]

_LINE = re.compile(r"^trnsim-progress: (\d+)/(\d+|\?)(?: (.*))?$")


def progress_line(done: int, total: Optional[int], label: str = "") -> str:
    """The stderr line of the progress protocol: ``trnsim-progress: 3/64 label`` (``3/?``: total unknown)."""
    return f"trnsim-progress: {done}/{'?' if total is None else total}" + (f" {label}" if label else "")


def parse_progress_line(line: str) -> Optional[tuple[int, Optional[int], str]]:
    """(done, total or None when unknown, label) of a protocol line, or None for any other line."""
    m = _LINE.match(line.rstrip("\n"))
    if not m:
        return None
    return int(m.group(1)), None if m.group(2) == "?" else int(m.group(2)), m.group(3) or ""


class Progress:
    """A bar (terminal), plain lines (pipe, log file) or nothing (``quiet``), same calls for all.

    ``total`` may be None when unknown (a spinner with the count and rate).
    """

    def __init__(self, label: str, total: Optional[int] = None, *, quiet: bool = False,
                 stream: Optional[IO[str]] = None, min_interval_s: float = 5.0, unit: str = "points"):
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._quiet = quiet
        self._interval = min_interval_s
        self._t0 = self._last = time.monotonic()
        self._bar = None
        self._task = None
        self._tty = not quiet and hasattr(self._stream, "isatty") and self._stream.isatty()

    @property
    def mode(self) -> str:
        """'bar', 'lines' or 'quiet': what this instance shows."""
        return "quiet" if self._quiet else ("bar" if self._tty else "lines")

    def __enter__(self) -> "Progress":
        if self.mode == "bar":
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, SpinnerColumn,
                                       TextColumn, TimeElapsedColumn, TimeRemainingColumn)
            cols = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
            self._bar = RichProgress(*cols, console=Console(file=self._stream), transient=False)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, rate="")
        return self

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        now = time.monotonic()
        if self.mode == "bar":
            self._bar.update(self._task, advance=n, rate=self._rate_text(now),
                             description=f"{self.label} {note}".strip())
        elif self.mode == "lines" and (now - self._last >= self._interval or self.done == self.total):
            self._last = now
            self._stream.write(self._line(now, note) + "\n")
            self._stream.flush()

    def __call__(self, done: int, total: Optional[int] = None, note: str = "") -> None:
        """The calibration modules' callback, ``progress(done, total)``: moves to `done` of `total`."""
        if total is not None and total != self.total:
            self.set_total(total)
        if done > self.done:
            self.advance(done - self.done, note)

    def set_total(self, total: int) -> None:
        self.total = total
        if self._bar is not None:
            self._bar.update(self._task, total=total)

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
        elif self.mode == "lines" and self.done != self.total and self.done > 0:
            self._stream.write(self._line(time.monotonic(), "stopped") + "\n")

    def eta_s(self, now: Optional[float] = None) -> Optional[float]:
        """Seconds left at the mean rate so far; None without a total or before the first step."""
        now = time.monotonic() if now is None else now
        if not self.total or self.done <= 0:
            return None
        return (now - self._t0) / self.done * (self.total - self.done)

    def _rate_text(self, now: float) -> str:
        el = now - self._t0
        return f"{self.done / el:.2f} {self.unit}/s" if el > 0 and self.done else ""

    def _line(self, now: float, note: str) -> str:
        of = f"/{self.total}" if self.total else ""
        eta = self.eta_s(now)
        parts = [f"{self.label}: {self.done}{of} {self.unit}", self._rate_text(now),
                 f"elapsed {now - self._t0:.0f}s"]
        if eta is not None:
            parts.append(f"ETA {eta:.0f}s")
        if note:
            parts.append(note)
        return "  ".join(p for p in parts if p)
