#!/usr/bin/env python3
"""Checks an smpipe HTML report: self-contained, and rendered by headless Chromium without a JS error.

    python3 tests/html/check_html.py REPORT.html [--expect-text TEXT ...] [--min-rects N] [--timeout S]

Exit status: 0 the report rendered (prints "ok: FILE rendered (N svg elements, M rects)"); 1 a check failed
(each failure is printed); 2 no Chromium was found (set $SMPIPE_CHROMIUM to the browser's path) or bad usage.
Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PLACEHOLDER = "/*@SMPIPE_DATA@*/null"

# Things a self-contained page must not hold (outside the embedded DATA, which is user text).
EXTERNAL = [
    (re.compile(r"""\b(?:src|href|poster)\s*=\s*["']?\s*(?:https?:)?//""", re.I), "a src=/href= to an external URL"),
    (re.compile(r"""url\(\s*["']?\s*(?:https?:)?//""", re.I), "a CSS url() to an external URL"),
    (re.compile(r"""<link\b[^>]*\brel\s*=\s*["']?stylesheet""", re.I), "a <link rel=stylesheet>"),
    (re.compile(r"@import\b", re.I), "a CSS @import"),
    (re.compile(r"\bfetch\s*\("), "a fetch() call"),
    (re.compile(r"\bXMLHttpRequest\b"), "an XMLHttpRequest"),
    (re.compile(r"\bnew\s+(?:WebSocket|EventSource)\b"), "a WebSocket/EventSource"),
]
VOID = ("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr")
JS_ERROR = re.compile(r"Uncaught|\b(?:SyntaxError|TypeError|ReferenceError|RangeError)\b")


def strip_data(text):
    """The page without the JSON after `const DATA =` (report data may mention URLs or 'fetch(')."""
    m = re.search(r"\bconst\s+DATA\s*=\s*", text)
    if not m:
        return text
    start = m.end()
    if text.startswith(PLACEHOLDER, start):
        return text[:start] + text[start + len(PLACEHOLDER):]
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return text
    return text[:start] + "null" + text[end:]


def static_problems(text):
    body = strip_data(text)
    return [f"not self-contained: {what} ({m.group(0)!r})" for rx, what in EXTERNAL for m in [rx.search(body)] if m]


def find_browser():
    env = os.environ.get("SMPIPE_CHROMIUM")
    if env:
        path = shutil.which(env) or (env if os.path.isfile(env) and os.access(env, os.X_OK) else None)
        if not path:
            print(f"error: $SMPIPE_CHROMIUM={env!r} is not an executable", file=sys.stderr)
        return path
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class Dom(HTMLParser):
    """Counts <svg>/<rect>, finds .render-error elements and body[data-rendered], collects visible text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.svg = self.rects = 0
        self.errors = []      # text of each .render-error element
        self.rendered = None  # body's data-rendered
        self.text = []
        self._skip = 0        # inside <script>/<style>
        self._err_depth = []  # open .render-error elements: [depth, [text]]
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svg += 1
        elif tag == "rect":
            self.rects += 1
        elif tag == "body":
            self.rendered = a.get("data-rendered")
        if tag in ("script", "style"):
            self._skip += 1
        if tag in VOID:
            return
        self._depth += 1
        if "render-error" in (a.get("class") or "").split():
            self._err_depth.append([self._depth, []])

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        if tag in VOID:
            return
        while self._err_depth and self._err_depth[-1][0] >= self._depth:
            self.errors.append(" ".join("".join(self._err_depth.pop()[1]).split()))
        self._depth -= 1

    def handle_data(self, data):
        if self._skip:
            return
        self.text.append(data)
        for _, parts in self._err_depth:
            parts.append(data)

    def close(self):
        super().close()
        while self._err_depth:
            self.errors.append(" ".join("".join(self._err_depth.pop()[1]).split()))


def run_browser(browser, path, timeout):
    """Runs headless Chromium on PATH; returns (exit status or None on timeout, dumped DOM, log)."""
    profile = tempfile.mkdtemp(prefix="smpipe-html-")
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--mute-audio",
           f"--user-data-dir={profile}", "--window-size=1400,2000", "--virtual-time-budget=5000",
           "--enable-logging=stderr", "--v=0", "--dump-dom", path.resolve().as_uri()]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the browser and its helper processes, all in its own session
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a helper outside the group still holds the pipes
            out, err = b"", b""
        status = None
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path)
    ap.add_argument("--expect-text", action="append", default=[], metavar="TEXT",
                    help="text the rendered page must show (repeatable)")
    ap.add_argument("--min-rects", type=int, default=0, metavar="N", help="the page must draw at least N <rect>s")
    ap.add_argument("--timeout", type=float, default=60.0, metavar="S", help="browser time limit (default 60)")
    args = ap.parse_args()

    try:
        text = args.html.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        print(f"FAIL: {args.html}: cannot read: {e}")
        return 1
    failures = static_problems(text)

    browser = find_browser()
    if not browser:
        print("error: no Chromium found (tried " + ", ".join(BROWSERS) + " on PATH and $SMPIPE_CHROMIUM); "
              "install it (Debian: apt-get install chromium) or set SMPIPE_CHROMIUM", file=sys.stderr)
        return 2

    status, dom_text, log = run_browser(browser, args.html, args.timeout)
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    if status is None:
        failures.append(f"the browser did not finish within {args.timeout:g} s")
    elif status != 0:
        tail = "\n    ".join(log.strip().splitlines()[-8:])
        failures.append(f"the browser exited with status {status}:\n    {tail}")
    js_errors = [line for line in console if JS_ERROR.search(line)]
    js_errors += [line for line in log.splitlines() if "Uncaught" in line and line not in js_errors]
    failures += [f"JS error: {line.strip()}" for line in js_errors]

    dom = Dom()
    dom.feed(dom_text)
    dom.close()
    if status is not None and not dom_text.strip():
        failures.append("the browser dumped no DOM")
    elif dom.rendered != "ok":
        failures.append(f'the page did not finish rendering: <body data-rendered="{dom.rendered}"> (expected "ok")'
                        if dom.rendered is not None else 'the page did not finish rendering: <body> has no data-rendered="ok"')
    failures += [f"render error shown: {e[:500]}" for e in dom.errors]
    page_text = " ".join("".join(dom.text).split())
    for want in args.expect_text:
        if " ".join(want.split()) not in page_text:
            failures.append(f"expected text not shown: {want!r}")
    if dom.rects < args.min_rects:
        failures.append(f"only {dom.rects} <rect> elements (expected at least {args.min_rects})")

    if failures:
        print(f"FAIL: {args.html}")
        for f in failures:
            print("  - " + f)
        if console:
            print("  browser console:")
            for line in console[:20]:
                print("    " + line.strip()[:400])
        return 1
    print(f"ok: {args.html} rendered ({dom.svg} svg elements, {dom.rects} rects)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
