"""A headless Chromium driven over the DevTools protocol on a pipe, with the standard library only.

``Browser()`` starts Debian's ``chromium`` with ``--remote-debugging-pipe`` (commands on
fd 3, replies and events on fd 4, each message JSON ended by a NUL byte) and a fresh
profile; ``open(url)`` loads a page in a fixed 1280x800 viewport and waits for its load
event. Clicks and keys are real input events (``Input.dispatchMouseEvent`` at an element's
centre, ``Input.dispatchKeyEvent``), so a test exercises the page as a person would.
Every network request the page makes and every script error it raises is recorded.
"""

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--no-default-browser-check", "--mute-audio", "--hide-scrollbars",
]
WIDTH, HEIGHT = 1280, 800


def find_chromium() -> str | None:
    """The path of a Chromium binary, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    """The browser did not answer, or answered with an error."""


class Browser:
    """One headless Chromium with one page (see the module docstring)."""

    def __init__(self, binary: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="tfexec-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        high_r, high_w = os.dup(to_child_r), os.dup(from_child_w)  # above 4, so the dup2s below cannot clash

        def wire() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={WIDTH},{HEIGHT}",
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=wire,  # Python's own fds are close-on-exec (PEP 446); 3 and 4 are not
        )
        for fd in (to_child_r, from_child_w, high_r, high_w):
            os.close(fd)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=WIDTH, height=HEIGHT,
                  deviceScaleFactor=1, mobile=False)

    # -- the protocol ------------------------------------------------------------------

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply (events that arrive meanwhile are kept)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        reply = self._wait(lambda m: m.get("id") == self._next)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def _wait(self, done: Any) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message: dict[str, Any] = json.loads(raw)
                if "method" in message:
                    self.events.append(message)
                if done(message):
                    return message
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_child], [], [], max(left, 0))
            if not ready:
                raise BrowserError(f"chromium did not answer within {self.timeout} s")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed its pipe")
            self._buffer += chunk

    # -- pages -------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` and wait for its load event."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self._wait(lambda m: m.get("method") == "Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (returned by value)."""
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str, *, at_start: bool = False) -> None:
        """A real left click on the first element ``selector`` matches: at the centre of its
        first line box, or (``at_start``) just inside its left end — where an element with
        nested elements (a source span and its operands) is itself under the pointer."""
        box = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                      " e.scrollIntoView({block: 'center'}); const b = e.getClientRects()[0];"
                      f" return [{'b.left + 2' if at_start else 'b.left + b.width / 2'}, b.top + b.height / 2]; }})()")
        if box is None:
            raise BrowserError(f"no element matches {selector}")
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button="left", clickCount=1)

    def key(self, key: str, code: str | None = None, key_code: int = 0) -> None:
        """A real key press (``ArrowDown``, ``]``, ...) to whatever has the focus."""
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=code or key,
                      windowsVirtualKeyCode=key_code, nativeVirtualKeyCode=key_code)

    def screenshot(self, path: Path) -> Path:
        """A PNG of the viewport."""
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def requests(self) -> list[str]:
        """The URLs of every request the current page made."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def errors(self) -> list[str]:
        """Script exceptions and console errors of the current page."""
        out = []
        for e in self.events:
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(str(e["params"]["exceptionDetails"]))
            elif e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error":
                out.append(str(e["params"].get("args")))
            elif e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error":
                out.append(str(e["params"]["entry"]))
        return out

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
