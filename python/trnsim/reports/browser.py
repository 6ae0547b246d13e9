"""Opening a report in headless Chromium, as a user's browser would, over the DevTools protocol
on a pipe (--remote-debugging-pipe: no websocket library, no port). Collects console errors and
uncaught exceptions, the page's own self-check (every plot drawn with data), the wall time from
navigation to the last plot drawn, and a full-page screenshot.
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> Optional[str]:
    """$TRNSIM_CHROMIUM, else the first Chromium-family browser on PATH, else None."""
    env = os.environ.get("TRNSIM_CHROMIUM")
    if env:
        return env
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


@dataclass
class PageCheck:
    console_errors: list[str] = field(default_factory=list)
    plots: list[dict] = field(default_factory=list)
    open_s: float = 0.0  # navigation to the last plot drawn, wall clock
    render_ms: float = 0.0  # the page's own performance.now() at that moment
    screenshot: Optional[Path] = None
    tiles: list[Path] = field(default_factory=list)  # the screenshot in pieces a person can read

    @property
    def empty_plots(self) -> list[str]:
        return [p.get("title") or p["id"] for p in self.plots if not (p["points"] > 0 and p["drawn_traces"] > 0)]


class _Cdp:
    """The DevTools protocol over the pipe pair: NUL-terminated JSON messages on fds 3 and 4."""

    def __init__(self, exe: str, user_dir: str):
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()

        def child_fds():  # fds 3 and 4 of the browser, whatever numbers the pipes got here
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--hide-scrollbars", "--remote-debugging-pipe",
                f"--user-data-dir={user_dir}", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: Optional[dict] = None, session: Optional[str] = None,
             timeout_s: float = 30.0) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            m = self._next(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error'].get('message')}")
                return m.get("result", {})
            self.events.append(m)

    def _next(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_r], [], [], left)[0]:
                raise TimeoutError("the browser did not answer in time")
            chunk = os.read(self._from_r, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed its DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout_s=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_w)
        os.close(self._from_r)


def _errors(events: list[dict]) -> list[str]:
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description", "")))
                                                               for a in p.get("args", [])))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append("log: " + p["entry"].get("text", ""))
    return out


class Chromium:
    """One headless browser for several pages: ``with Chromium() as b: b.check(path, shot)``."""

    def __init__(self, exe: Optional[str] = None, width: int = 1400):
        self.exe = exe or find_chromium()
        if not self.exe:
            raise FileNotFoundError("no Chromium found (install Debian's `chromium`, or set TRNSIM_CHROMIUM)")
        self.width = width

    def __enter__(self) -> "Chromium":
        self._dir = tempfile.TemporaryDirectory(prefix="trnsim-chromium-")
        self._cdp = _Cdp(self.exe, self._dir.name)
        try:
            targets = self._cdp.send("Target.getTargets", timeout_s=60)["targetInfos"]
            page = next(t for t in targets if t["type"] == "page")
            self._sid = self._cdp.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
            for m in ("Runtime.enable", "Page.enable", "Log.enable"):
                self._cdp.send(m, session=self._sid)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._cdp.close()
        self._dir.cleanup()

    def check(self, html: Path, screenshot: Optional[Path] = None, timeout_s: float = 60.0,
              tile_height: int = 0) -> PageCheck:
        """Opens `html`, waits for its plots, and returns what it found (and the screenshot, if asked)."""
        self._cdp.events.clear()
        return _check(self._cdp, self._sid, Path(html).resolve(), screenshot, timeout_s, self.width, tile_height)


def open_report(html: Path, screenshot: Optional[Path] = None, timeout_s: float = 60.0, width: int = 1400,
                exe: Optional[str] = None, tile_height: int = 0) -> PageCheck:
    """Opens `html` in a fresh headless Chromium; raises FileNotFoundError if there is none."""
    with Chromium(exe, width) as b:
        return b.check(html, screenshot, timeout_s, tile_height)


def _check(cdp: _Cdp, sid: str, html: Path, screenshot: Optional[Path], timeout_s: float, width: int,
           tile_height: int) -> PageCheck:
    cdp.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                    "mobile": False}, session=sid)
    # The previous page must not pass for this one while the navigation is under way.
    cdp.send("Runtime.evaluate", {"expression": "document.body && (document.body.dataset.rendered = '')"}, session=sid)
    t0 = time.monotonic()
    cdp.send("Page.navigate", {"url": html.as_uri()}, session=sid)
    deadline = t0 + timeout_s
    while True:
        r = cdp.send("Runtime.evaluate", {"expression": "document.body && document.body.dataset.rendered || ''",
                                          "returnByValue": True}, session=sid)
        if r.get("result", {}).get("value") == "1":
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"{html}: the plots were not all drawn within {timeout_s:.0f} s")
        time.sleep(0.02)
    check = PageCheck(open_s=time.monotonic() - t0)
    r = cdp.send("Runtime.evaluate", {"expression": "document.getElementById('trnsim-selfcheck').textContent",
                                      "returnByValue": True}, session=sid)
    selfcheck = json.loads(r["result"]["value"])
    check.plots, check.render_ms = selfcheck["plots"], selfcheck.get("render_ms", 0.0)
    check.console_errors = _errors(cdp.events) + [f"page: {e}" for e in selfcheck["errors"]]
    if screenshot is not None:
        h = cdp.send("Page.getLayoutMetrics", session=sid)["cssContentSize"]["height"]
        cdp.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": int(min(h, 12000)),
                                                        "deviceScaleFactor": 1, "mobile": False}, session=sid)
        time.sleep(0.3)  # plotly's responsive resize
        png = cdp.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=sid,
                       timeout_s=timeout_s)["data"]
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.write_bytes(base64.b64decode(png))
        check.screenshot = screenshot
        for i, y in enumerate(range(0, int(min(h, 12000)), tile_height) if tile_height else []):
            clip = {"x": 0, "y": y, "width": width, "height": min(tile_height, int(h) - y), "scale": 1}
            png = cdp.send("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True},
                           session=sid, timeout_s=timeout_s)["data"]
            tile = screenshot.with_name(f"{screenshot.stem}-{i + 1:02d}.png")
            tile.write_bytes(base64.b64decode(png))
            check.tiles.append(tile)
    check.console_errors += [e for e in _errors(cdp.events) if e not in check.console_errors]
    return check
