#!/usr/bin/python3
"""report.html in a real browser: Debian's headless Chromium driven over its DevTools protocol (a pipe, so the
Python standard library suffices). Runs the quickstart, Stream's fused ResNet-18 and a small search with the CLI,
opens their report.html files and checks: no console errors or exceptions, the number of CN rectangles and of
scatter points, a tooltip on hover, per-pixel-column drawing when zoomed out and exact rectangles when zoomed in,
the details of a clicked Pareto point (with the schedule of the point kept in best/).

  report_browser_test.py --monet build/bin/monet --source .           the ctest test (exit 77: no chromium)
  report_browser_test.py --screenshots DIR --monet ... --source ...    also writes a PNG of each view (docs)
  report_browser_test.py --open-time FILE [FILE ...]                   time to open each page, file size
"""
import argparse
import base64
import csv
import fcntl
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium; commands and events over --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-separated JSON)."""

    def __init__(self, exe, width=1400, height=1000):
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # Move the child's ends above 4 so that dup2 onto 3 and 4 cannot clobber one with the other.
        child_in = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)
        self.profile = tempfile.mkdtemp(prefix="monet-chromium-")
        args = [exe, "--headless", "--remote-debugging-pipe", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--user-data-dir=" + self.profile,
                "--window-size=%d,%d" % (width, height), "--hide-scrollbars", "--mute-audio",
                "--disable-background-networking", "--disable-dev-shm-usage"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox

        def wire():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.proc = subprocess.Popen(args + ["about:blank"], pass_fds=(3, 4), preexec_fn=wire,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(child_in)
        os.close(child_out)
        self.write = to_child_w
        self.read = from_child_r
        self.next_id = 0
        self.replies = {}
        self.events = queue.Queue()
        self.lock = threading.Condition()
        threading.Thread(target=self._reader, daemon=True).start()
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable", session=True)

    def _reader(self):
        buffer = b""
        while True:
            chunk = os.read(self.read, 1 << 16)
            if not chunk:
                with self.lock:
                    self.replies[None] = "closed"
                    self.lock.notify_all()
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self.lock:
                        self.replies[message["id"]] = message
                        self.lock.notify_all()
                else:
                    self.events.put(message)

    def call(self, method, session=False, timeout=20, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self.write, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        with self.lock:
            while self.next_id not in self.replies:
                if None in self.replies or not self.lock.wait(max(0.01, deadline - time.time())) and time.time() > deadline:
                    raise RuntimeError("chromium did not answer " + method)
            reply = self.replies.pop(self.next_id)
        if "error" in reply:
            raise RuntimeError(method + ": " + json.dumps(reply["error"]))
        return reply.get("result", {})

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(expression + ": " + json.dumps(r["exceptionDetails"])[:400])
        return r["result"].get("value")

    def drain_errors(self):
        """Console errors and uncaught exceptions since the last call."""
        errors = []
        while not self.events.empty():
            e = self.events.get()
            method, p = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append("exception: " + json.dumps(p["exceptionDetails"])[:400])
            elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console.error: " + json.dumps(p.get("args"))[:400])
            elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
                errors.append("log: " + p["entry"].get("text", ""))
        return errors

    def open(self, path, timeout=15):
        """Opens a file and waits until the page says it is ready; returns the milliseconds it reported."""
        self.call("Page.navigate", session=True, url="file://" + os.path.abspath(path))
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = self.evaluate("window.monetReport ? [window.monetReport.ready, window.monetReport.readyMs || 0,"
                                  " window.monetReport.errors] : [false, 0, []]")
            if state and state[0]:
                return state[1]
            if state and state[2]:
                raise RuntimeError("page error: " + "; ".join(state[2]))
            time.sleep(0.05)
        raise RuntimeError(path + " did not become ready in %d s" % timeout)

    def mouse(self, kind, x, y):
        params = {"type": kind, "x": x, "y": y}
        if kind != "mouseMoved":
            params.update(button="left", clickCount=1)
        self.call("Input.dispatchMouseEvent", session=True, **params)

    def click(self, x, y, shift=False):
        self.mouse("mouseMoved", x, y)
        extra = {"modifiers": 8} if shift else {}  # 8: Shift (DevTools Input domain)
        self.call("Input.dispatchMouseEvent", session=True, type="mousePressed", x=x, y=y, button="left", clickCount=1, **extra)
        self.call("Input.dispatchMouseEvent", session=True, type="mouseReleased", x=x, y=y, button="left", clickCount=1, **extra)

    def screenshot(self, file, full_page=True):
        params = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            metrics = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": metrics["width"], "height": min(metrics["height"], 6000), "scale": 1}
        data = self.call("Page.captureScreenshot", session=True, **params)["data"]
        with open(file, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.write)
        shutil.rmtree(self.profile, ignore_errors=True)


failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)


def hover_tooltip(b, center_expression):
    """Moves the pointer to the point the expression gives (viewport coordinates) and returns the tooltip text."""
    b.evaluate("window.scrollTo(0, 0)")
    xy = b.evaluate(center_expression)
    if xy is None:
        return None, None
    b.mouse("mouseMoved", xy[0], xy[1])
    return xy, b.evaluate("(t => t.hidden ? null : t.textContent)(document.getElementById('tooltip'))")


def scroll_to(b, canvas_expression):
    b.evaluate("(%s).scrollIntoView({block: 'center'})" % canvas_expression)


def run_monet(monet, args):
    r = subprocess.run([monet] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("monet " + " ".join(args) + " failed:\n" + r.stdout)


def test_run_report(b, folder, shots):
    b.open(os.path.join(folder, "report.html"))
    check(not b.drain_errors(), "run report: no console errors on load")
    results = json.load(open(os.path.join(folder, "results.json")))
    cores = {c["name"] for c in results["architecture"]["cores"]}
    with open(os.path.join(folder, "schedule.csv")) as f:
        expected = sum(1 for row in csv.DictReader(f) if row["core"] in cores and int(row["latency_cycles"]) > 0)
    rects = b.evaluate("+monetReport.gantt.canvas.dataset.cnRects")
    mode = b.evaluate("monetReport.gantt.canvas.dataset.mode")
    check(mode == "exact" and rects == expected, "run report: %s CN rectangles drawn exactly (schedule.csv: %d)" % (rects, expected))
    memories = b.evaluate("document.querySelectorAll('canvas[data-role=memory]').length")
    check(memories == len(cores) + 1, "run report: %d memory panels (cores + off chip)" % memories)
    scroll_to(b, "monetReport.gantt.canvas")
    name = b.evaluate("monetReport.gantt.cnName(0)")
    xy = b.evaluate("monetReport.gantt.cnCenter(0)")
    b.mouse("mouseMoved", xy[0], xy[1])
    text = b.evaluate("(t => t.hidden ? null : t.textContent)(document.getElementById('tooltip'))")
    check(text is not None and text.startswith(name) and "cycles" in text and "energy" in text,
          "run report: hovering CN 0 shows its tooltip (%r)" % (text or "")[:60])
    if shots:
        b.screenshot(os.path.join(shots, "report_run.png"))
    # Zooming in (wheel) keeps exact rectangles and fewer of them.
    b.call("Input.dispatchMouseEvent", session=True, type="mouseWheel", x=xy[0], y=xy[1], deltaX=0, deltaY=-800)
    zoomed = b.evaluate("+monetReport.gantt.canvas.dataset.cnRects")
    check(0 < zoomed <= rects, "run report: zooming in draws %d of the %d rectangles" % (zoomed, rects))
    # Dragging pans: the window moves later in time by what the pointer moved left, its span unchanged.
    before = b.evaluate("[+monetReport.gantt.canvas.dataset.t0, +monetReport.gantt.canvas.dataset.t1]")
    b.mouse("mousePressed", xy[0], xy[1])
    b.mouse("mouseMoved", xy[0] - 120, xy[1])
    b.mouse("mouseReleased", xy[0] - 120, xy[1])
    after = b.evaluate("[+monetReport.gantt.canvas.dataset.t0, +monetReport.gantt.canvas.dataset.t1]")
    check(after[0] > before[0] and abs((after[1] - after[0]) - (before[1] - before[0])) < 1e-6 * before[1],
          "run report: dragging left pans later (cycles %.0f-%.0f -> %.0f-%.0f)" % (before[0], before[1], after[0], after[1]))
    check(not b.drain_errors(), "run report: no console errors after hover and zoom")


def test_large_run_report(b, folder, shots):
    """More rectangles than the page draws one by one: per pixel column when zoomed out, exact when zoomed in."""
    b.open(os.path.join(folder, "report.html"))
    check(not b.drain_errors(), "large run report: no console errors on load")
    if shots:
        b.screenshot(os.path.join(shots, "report_run_large.png"))
    check(b.evaluate("monetReport.gantt.canvas.dataset.mode") == "aggregated",
          "large run report: %s items in view drawn per pixel column" % b.evaluate("monetReport.gantt.canvas.dataset.inView"))
    scroll_to(b, "monetReport.gantt.canvas")
    box = b.evaluate("(r => [r.left, r.top, r.width, r.height])(monetReport.gantt.canvas.getBoundingClientRect())")
    x, y = box[0] + box[2] * 0.5, box[1] + 17  # the first core's row, mid-schedule
    b.mouse("mouseMoved", x, y)
    text = b.evaluate("(t => t.hidden ? null : t.textContent)(document.getElementById('tooltip'))") or ""
    check("pixel column" in text and "zoom in" in text, "large run report: a column's tooltip says what it aggregates (%r)" % text[:50])
    for _ in range(12):
        if b.evaluate("monetReport.gantt.canvas.dataset.mode") == "exact":
            break
        b.call("Input.dispatchMouseEvent", session=True, type="mouseWheel", x=x, y=y, deltaX=0, deltaY=-600)
    check(b.evaluate("monetReport.gantt.canvas.dataset.mode") == "exact",
          "large run report: exact after zooming in (%s items in view)" % b.evaluate("monetReport.gantt.canvas.dataset.inView"))
    drawn = b.evaluate("monetReport.gantt.drawnCns(1)")
    if drawn:
        xy = b.evaluate("monetReport.gantt.cnCenter(%d)" % drawn[0])
        b.mouse("mouseMoved", xy[0], xy[1])
        text = b.evaluate("(t => t.hidden ? null : t.textContent)(document.getElementById('tooltip'))") or ""
    check(bool(drawn) and text.startswith(b.evaluate("monetReport.gantt.cnName(%d)" % drawn[0])),
          "large run report: zoomed in, a CN's tooltip names it (%r)" % text[:50])
    check(not b.drain_errors(), "large run report: no console errors after zooming")


def test_search_report(b, folder, shots):
    b.open(os.path.join(folder, "report.html"))
    check(not b.drain_errors(), "search report: no console errors on load")
    with open(os.path.join(folder, "evaluations.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(folder, "pareto.csv")) as f:
        front_rows = list(csv.DictReader(f))
    points = b.evaluate("+monetReport.scatter.canvas.dataset.points")
    front = b.evaluate("+monetReport.scatter.canvas.dataset.front")
    check(points == len(rows), "search report: %s points drawn (evaluations.csv: %d)" % (points, len(rows)))
    check(front == len(front_rows), "search report: %s front points (pareto.csv: %d)" % (front, len(front_rows)))
    scroll_to(b, "monetReport.scatter.canvas")
    front_ids = b.evaluate("monetReport.scatter.front")
    best = b.evaluate("monetReport.scatter.best")
    other = next((i for i in front_ids if i != best), front_ids[0])
    xy = b.evaluate("monetReport.scatter.pointCenter(%d)" % other)
    b.mouse("mouseMoved", xy[0], xy[1])
    text = b.evaluate("(t => t.hidden ? null : t.textContent)(document.getElementById('tooltip'))") or ""
    genes = [k for k in rows[0].keys() if k not in ("id", "batch", "feasible", "violation", "reason")]
    check(all(g + " = " in text or g + ": " in text for g in genes) and "Pareto front" in text,
          "search report: hovering a front point shows its genes and objectives (%r)" % text[:80])
    b.click(xy[0], xy[1])
    details = b.evaluate("document.getElementById('details').textContent")
    check(("Point %d" % other) in details and "feasible" in details, "search report: clicking front point %d shows its details" % other)
    kept = "front/point-%d" % other
    check(os.path.exists(os.path.join(folder, kept, "report.html")) and (kept + "/report.html") in details,
          "search report: front point %d links to its kept report (%s/report.html)" % (other, kept))
    scroll_to(b, "monetReport.scatter.canvas")
    xy = b.evaluate("monetReport.scatter.pointCenter(%d)" % best)
    b.click(xy[0], xy[1], shift=True)
    rows_compared = b.evaluate("(t => t ? t.rows.length : 0)(document.querySelector('#details table[data-role=compare]'))")
    check(rows_compared == 1 + len(genes) + 2 and b.evaluate("document.querySelectorAll('#details td.diff').length") > 0,
          "search report: shift-clicking the best point compares it with point %d side by side (%d rows)" % (other, rows_compared))
    check(best is not None and best in front_ids, "search report: the point kept in best/ (%s) is on the front" % best)
    scroll_to(b, "monetReport.scatter.canvas")
    xy = b.evaluate("monetReport.scatter.pointCenter(%d)" % best)
    b.click(xy[0], xy[1])
    rects = b.evaluate("monetReport.bestRun ? +monetReport.bestRun.gantt.canvas.dataset.cnRects : -1")
    with open(os.path.join(folder, "best", "schedule.csv")) as f:
        expected = sum(1 for row in csv.DictReader(f) if int(row["latency_cycles"]) > 0 and row["core"] != "")
    check(rects > 0 and rects <= expected, "search report: clicking the best point shows its schedule (%d CN rectangles)" % rects)
    if shots:
        b.screenshot(os.path.join(shots, "report_search.png"))
    b.evaluate("document.querySelector('input[type=checkbox]').click()")  # hide infeasible points
    check(not b.drain_errors(), "search report: no console errors after hover, clicks and filters")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--monet")
    ap.add_argument("--source")
    ap.add_argument("--screenshots")
    ap.add_argument("--open-time", nargs="+")
    args = ap.parse_args()
    exe = find_chromium()
    if exe is None:
        print("chromium is not installed: skipped (apt-get install chromium)")
        return SKIP
    start = time.time()
    b = Browser(exe)
    try:
        if args.open_time:
            for f in args.open_time:
                t0 = time.time()
                ms = b.open(f, timeout=60)
                wall = time.time() - t0
                errors = b.drain_errors()
                print("%s: %.1f MB, ready %.0f ms after navigation start (%.2f s wall)%s" % (
                    f, os.path.getsize(f) / 1e6, ms, wall, "; ERRORS " + "; ".join(errors) if errors else ""))
            return 0
        work = tempfile.mkdtemp(prefix="monet-report-test-")
        try:
            run_monet(args.monet, ["run", os.path.join(args.source, "experiments/tiny_cnn_dual_core.toml"), "--out", os.path.join(work, "quickstart")])
            run_monet(args.monet, ["run", os.path.join(args.source, "tests/data/search/small_allocation.toml"), "--out", os.path.join(work, "search"),
                                   "--set", "search.plugin=\"nsga2\"", "--set", "search.population=16", "--set", "search.generations=6"])
            run_monet(args.monet, ["run", os.path.join(args.source, "experiments/reference/stream_resnet18_fused.toml"),
                                   "--out", os.path.join(work, "stream"), "--set", "output.artifacts=[\"report\"]"])
            test_run_report(b, os.path.join(work, "quickstart"), args.screenshots)
            test_large_run_report(b, os.path.join(work, "stream"), args.screenshots)
            test_search_report(b, os.path.join(work, "search"), args.screenshots)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        b.close()
    print("%d failure(s), %.1f s" % (len(failures), time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
