"""The report pages in a real browser: Debian's chromium, headless, driven over the DevTools protocol.

Run by `./noxw -s browser` (not by selftest: it needs `apt-get install -y chromium`). The
protocol is spoken over `--remote-debugging-pipe` (JSON messages on file descriptors 3 and
4), so nothing beyond the standard library is needed and no browser is ever downloaded.
Screenshots are kept in reports/browser/ for a person to look at.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from fanin.model import matrix
from fanin.model.results import HAZARDS
from fanin.model.source import REPO_ROOT
from fanin.report import build as report
from fanin.report import documents, legend, outputs

pytestmark = pytest.mark.skipif(
    os.environ.get("FANIN_BROWSER") != "1", reason="run by ./noxw -s browser (needs Debian's chromium)"
)

CHROMIUM = os.environ.get("FANIN_CHROMIUM", "/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    # Chromium ignores navigations past 200 in 10 s ("throttling navigation"); the anchor test sets
    # location.hash once per probe section, and the catalogue has more sections than that.
    "--disable-ipc-flooding-protection",
    "--remote-debugging-pipe",
)
SHOTS = Path(os.environ.get("FANIN_REPORTS", REPO_ROOT / "reports")) / "browser"
WORDS = [legend.HAZARD_STYLES[h].word for h in HAZARDS]


class Browser:
    """A headless chromium and one page in it, spoken to with the DevTools protocol over a pipe."""

    def __init__(self, profile: Path) -> None:
        low_r, self._to_browser = os.pipe()
        self._from_browser, low_w = os.pipe()
        # Above 9, so that putting them on 3 and 4 in the child cannot overwrite one with the other.
        to_browser_r, from_browser_w = fcntl.fcntl(low_r, fcntl.F_DUPFD, 10), fcntl.fcntl(low_w, fcntl.F_DUPFD, 10)
        os.close(low_r)
        os.close(low_w)

        def on_3_and_4() -> None:  # the browser reads commands on fd 3 and writes answers on fd 4
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=on_3_and_4,
            close_fds=False,  # fanin's own descriptors are close-on-exec; 3 and 4 must stay open
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self.session, **params)

    def wait_for(self, event: str) -> None:
        while True:
            for index, found in enumerate(self.events):
                if found.get("method") == event:
                    del self.events[: index + 1]
                    return
            self.events.append(self._read())

    def size(self, width: int, height: int = 900) -> None:
        self.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=width < 600
        )

    def open(self, url: str) -> None:
        self.events.clear()
        started = self.send("Page.navigate", url=url)
        if "loaderId" in started:  # a new document; a fragment of the same one loads nothing
            self.wait_for("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}…: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, full: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        shot = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=full)
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


@pytest.fixture(scope="module")
def pages() -> Iterator[Path]:
    """The reference rendered as a self-contained bundle (matrix.html, compare/) into a temporary directory."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with tempfile.TemporaryDirectory(prefix="fanin-browser-") as tmp:
        rep = report.build(matrix.REFERENCE_RESULTS, matrix.load(), reference=True)
        for path, text in outputs.bundle(rep, Path(tmp)).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        yield Path(tmp)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with tempfile.TemporaryDirectory(prefix="fanin-chromium-") as profile:
        started = Browser(Path(profile))
        try:
            yield started
        finally:
            started.close()


def _matrix(browser: Browser, pages: Path, width: int, fragment: str = "") -> None:
    browser.send("Emulation.setEmulatedMedia", media="screen")
    browser.size(width)
    browser.open((pages / "matrix.html").as_uri() + fragment)


@pytest.mark.parametrize("width", [1440, 390])
def test_the_page_never_overflows_the_viewport(browser: Browser, pages: Path, width: int) -> None:
    _matrix(browser, pages, width)
    overflow = browser.js("[document.documentElement.scrollWidth, window.innerWidth]")
    assert overflow[0] <= overflow[1], f"page is {overflow[0]} px wide in a {overflow[1]} px viewport"
    wider = browser.js(
        "Array.from(document.querySelectorAll('body *')).filter(e => !e.closest('.wrap, .matrix-wrap, pre'))"
        ".filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).map(e => e.tagName + '.' + e.className)"
        ".slice(0, 5)"
    )
    assert wider == [], f"elements outside the viewport at {width} px: {wider}"
    browser.screenshot(SHOTS / f"matrix-{width}.png")
    browser.js("document.querySelector('.matrix-wrap').scrollIntoView()")
    browser.screenshot(SHOTS / f"matrix-{width}-table.png")


@pytest.mark.parametrize("width", [1440, 390])
def test_the_header_row_and_first_column_stay_in_view_when_the_matrix_scrolls(
    browser: Browser, pages: Path, width: int
) -> None:
    _matrix(browser, pages, width)
    found = browser.js(
        """(() => {
        const out = [];
        for (const wrap of document.querySelectorAll('.matrix-wrap')) {
          if (wrap.scrollHeight <= wrap.clientHeight + 1) continue;  // a short matrix fits its box: nothing to stick
          wrap.scrollIntoView();
          wrap.scrollTop = Math.min(600, wrap.scrollHeight - wrap.clientHeight);
          wrap.scrollLeft = Math.min(400, wrap.scrollWidth - wrap.clientWidth);
          const box = wrap.getBoundingClientRect();
          const head = wrap.querySelector('thead th:nth-child(2)').getBoundingClientRect();
          const rows = Array.from(wrap.querySelectorAll('tbody th[scope=row]'));
          const visible = rows.find(r => r.getBoundingClientRect().bottom > head.bottom + 5);
          const first = visible.getBoundingClientRect();
          out.push({scrolled: wrap.scrollTop, left: wrap.scrollLeft, boxTop: box.top, headTop: head.top,
                    boxLeft: box.left, rowLeft: first.left, inView: head.bottom <= box.bottom});
        }
        return out;
        })()"""
    )
    assert len(found) >= 2  # the LangGraph and ADK matrices are taller than their boxes
    for matrix_box in found:
        assert matrix_box["scrolled"] > 0, "the matrix box does not scroll: the header cannot stick inside it"
        assert abs(matrix_box["headTop"] - matrix_box["boxTop"]) <= 2, matrix_box
        assert matrix_box["inView"], matrix_box
        if matrix_box["left"] > 0:
            assert abs(matrix_box["rowLeft"] - matrix_box["boxLeft"]) <= 2, matrix_box
    browser.screenshot(SHOTS / f"matrix-{width}-scrolled.png")


def test_every_probe_anchor_lands_on_its_section(browser: Browser, pages: Path) -> None:
    probe = "langgraph/join/separate-edges"
    _matrix(browser, pages, 1440, f"#{probe}")
    landed = browser.js(
        "[document.querySelector(':target') && document.querySelector(':target').id, "
        "document.querySelector(':target').getBoundingClientRect().top]"
    )
    assert landed[0] == probe and 0 <= landed[1] <= 20
    browser.screenshot(SHOTS / "probe-section-1440.png")
    missed = browser.js(
        """(() => {
        const missed = [];
        const ids = Array.from(document.querySelectorAll('section.probe[id], h4[id]')).map(e => e.id);
        for (const id of ids) {
          location.hash = id;
          const target = document.querySelector(':target');
          const top = target ? target.getBoundingClientRect().top : -1;
          const atEnd = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1;
          const inView = top >= -1 && (top <= 40 || (atEnd && top < window.innerHeight - 40));
          if (!target || target.id !== id || !inView) missed.push([id, top]);
        }
        return [ids.length, missed.slice(0, 5)];
        })()"""
    )
    rep = report.build(matrix.REFERENCE_RESULTS, matrix.load(), reference=True)
    expected = sum(len(p.matrix_variants) for v in rep.frameworks for p in v.probes)
    assert missed == [expected, []]
    outlined = browser.js("getComputedStyle(document.querySelector(':target')).outlineStyle")
    assert outlined == "solid", "the section jumped to is highlighted (:target)"


def test_every_matrix_cell_states_its_hazard_in_words(browser: Browser, pages: Path) -> None:
    _matrix(browser, pages, 1440)
    cells = browser.js(
        """Array.from(document.querySelectorAll('table.matrix tbody td')).map(td => [
          td.className, (td.querySelector('.hz') || td).textContent.trim().toLowerCase(),
          td.querySelector('summary') ? td.querySelector('summary').tabIndex : null])"""
    )
    assert cells
    for css, word, tab in cells:
        if "h-none" in css:
            assert word == legend.NOT_OBSERVED
            continue
        assert word in WORDS, (css, word)
        assert css.split()[1] == "h-" + word.replace("/", ""), (css, word)
        assert tab == 0, "the cell's detail opens from the keyboard"


def test_details_open_by_keyboard(browser: Browser, pages: Path) -> None:
    _matrix(browser, pages, 1440)
    browser.js("document.querySelector('table.matrix td.obs summary').focus()")
    browser.send(
        "Input.dispatchKeyEvent", type="keyDown", key="Enter", code="Enter", windowsVirtualKeyCode=13, text="\r"
    )
    browser.send("Input.dispatchKeyEvent", type="keyUp", key="Enter", code="Enter", windowsVirtualKeyCode=13)
    assert browser.js("document.querySelector('table.matrix td.obs details').open") is True


def test_print_shows_everything_and_repeats_the_header(browser: Browser, pages: Path) -> None:
    _matrix(browser, pages, 1440)
    browser.send("Emulation.setEmulatedMedia", media="print")
    styles = browser.js(
        """(() => {
        const wrap = document.querySelector('.matrix-wrap');
        const detail = document.querySelector('table.matrix td.obs details p');
        return [getComputedStyle(wrap).overflowY, getComputedStyle(wrap).maxHeight,
                getComputedStyle(document.querySelector('table.matrix thead')).display,
                detail.getBoundingClientRect().height > 0,
                getComputedStyle(document.querySelector('.toc')).display];
        })()"""
    )
    assert styles == ["visible", "none", "table-header-group", True, "none"]
    browser.js("document.querySelector('.matrix-wrap').scrollIntoView()")
    browser.screenshot(SHOTS / "print-1440.png")
    pdf = browser.send("Page.printToPDF", printBackground=True)
    (SHOTS / "matrix.pdf").write_bytes(base64.b64decode(pdf["data"]))
    assert base64.b64decode(pdf["data"]).startswith(b"%PDF")
    browser.send("Emulation.setEmulatedMedia", media="screen")


def test_compare_pages_open_from_the_matrix_and_fit(browser: Browser, pages: Path) -> None:
    _matrix(browser, pages, 390)
    href = browser.js("document.querySelector('a.cmp').getAttribute('href')")
    assert href.startswith("compare/compare-")
    browser.open((pages / href).as_uri())
    sizes = browser.js("[document.documentElement.scrollWidth, window.innerWidth, document.title]")
    assert sizes[0] <= sizes[1], sizes
    assert "→" in sizes[2]
    browser.screenshot(SHOTS / "compare-390.png")


PICK = """(args => {
  const [a, b, between] = args;
  const form = document.querySelector('form.pick');
  if (form.hidden) return 'hidden';
  form.reset();
  form.elements.a.value = String(a); form.elements.b.value = String(b);
  form.elements.page.checked = false; form.elements.between.checked = between;
  form.requestSubmit();
  const table = document.getElementById(form.dataset.table);
  const seen = e => !e.hidden && e.getBoundingClientRect().width > 0;
  const heads = Array.from(table.querySelectorAll('thead th[data-col]'));
  const rows = Array.from(table.querySelectorAll('tbody tr:not(.topic)'));
  const shown = rows.filter(seen);
  return {
    columns: heads.filter(seen).map(h => h.firstChild.textContent),
    options: [a, b].map(i => form.elements.a.options[i].textContent),
    all: heads.length, rows: rows.length, shown: shown.length,
    // every row shown fills exactly the columns shown, and differs in them
    widths: Array.from(new Set(shown.map(r => Array.from(r.querySelectorAll('td')).filter(seen)
      .reduce((n, c) => n + c.colSpan, 0)))),
    alike: shown.filter(r => new Set(Array.from(r.querySelectorAll('td')).filter(seen)
      .map(c => c.dataset.same)).size < 2).length,
    gap: (() => { const s = heads.filter(seen).map(h => h.getBoundingClientRect());
      return s.length > 1 ? Math.round(s[1].left - s[0].right) : null; })(),
    said: form.querySelector('output').textContent,
    deltas: Array.from(table.querySelectorAll('.delta')).filter(seen).length,
  };
})"""


def _pick(browser: Browser, a: int, b: int, between: bool) -> dict[str, Any]:
    picked = browser.js(f"{PICK}({json.dumps([a, b, between])})")
    assert picked != "hidden", "the picker shows when JavaScript runs"
    return picked  # type: ignore[no-any-return]


def test_the_picker_shows_exactly_the_two_versions_picked_side_by_side(browser: Browser, pages: Path) -> None:
    """ "My team runs the oldest and wants the newest": two columns next to each other, the rows that differ."""
    _matrix(browser, pages, 1440)
    last = browser.js("document.querySelector('form.pick').elements.a.options.length") - 1
    assert last >= 3, "the first matrix has versions between the two picked"
    picked = _pick(browser, 0, last, between=False)
    assert picked["columns"] == picked["options"], picked  # exactly the two picked, oldest first
    assert picked["all"] == last + 1 and len(picked["columns"]) == 2
    assert picked["gap"] is not None and abs(picked["gap"]) <= 2, "the two columns are side by side"
    assert 0 < picked["shown"] < picked["rows"] and picked["widths"] == [2] and picked["alike"] == 0, picked
    assert picked["said"] == f"{picked['shown']} rows differ between {picked['options'][0]} and {picked['options'][1]}"
    assert picked["deltas"] == 0, "a Δ speaks of the version before, which is not shown"
    browser.js("document.querySelector('form.pick').scrollIntoView()")
    browser.screenshot(SHOTS / "picker-two-1440.png")
    # picked newest first, the columns still read oldest → newest
    assert _pick(browser, last, 0, between=False)["columns"] == picked["options"]
    browser.js("document.querySelector('form.pick').reset()")
    restored = browser.js(
        "new Promise(r => setTimeout(() => r([document.querySelectorAll('table.matrix thead th[data-col]:not([hidden])').length,"
        " document.querySelectorAll('table.matrix tbody tr[hidden], table.matrix td[hidden]').length]), 0))"
    )
    assert (
        restored[0]
        == sum(browser.js("Array.from(document.querySelectorAll('form.pick')).map(f => f.elements.a.options.length)"))
        and restored[1] == 0
    )


def test_the_picker_shows_the_versions_between_on_request(browser: Browser, pages: Path) -> None:
    _matrix(browser, pages, 1440)
    last = browser.js("document.querySelector('form.pick').elements.a.options.length") - 1
    picked = _pick(browser, 0, last, between=True)
    assert len(picked["columns"]) == last + 1 and picked["widths"] == [last + 1] and picked["alike"] == 0, picked
    assert picked["said"].startswith(f"{picked['shown']} rows change from {picked['options'][0]} to ")
    assert picked["deltas"] > 0, "with every version between, each Δ is next to the version it speaks of"
    inner = _pick(browser, 1, last - 1, between=True)
    assert len(inner["columns"]) == last - 1 and inner["widths"] == [last - 1], inner
    assert inner["columns"][0] == inner["options"][0] and inner["columns"][-1] == inner["options"][1]
    two = _pick(browser, 1, last - 1, between=False)
    assert two["shown"] <= inner["shown"]  # a row that changes and changes back differs only with the versions between
    browser.js("document.querySelector('form.pick').scrollIntoView()")
    browser.screenshot(SHOTS / "picker-between-1440.png")


def test_chromium_is_driven_without_downloading_anything() -> None:
    assert shutil.which("chromium") or Path(CHROMIUM).exists()


AXE_VERSION = "4.10.2"  # axe-core from the npm registry (npm pack), checked against its integrity hash
AXE_SHA256 = "9ea2d2d6917da998122bdacfd3b473e31ead53f4b87146c716a12edf89158100"


@pytest.fixture(scope="module")
def axe() -> str:
    """axe-core's browser bundle, packed once into .fanin/axe/ (the npm registry is one this machine reaches)."""
    import hashlib
    import tarfile

    home = REPO_ROOT / ".fanin" / "axe"
    packed = home / f"axe-core-{AXE_VERSION}.tgz"
    if not packed.is_file():
        home.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["npm", "pack", f"axe-core@{AXE_VERSION}", "--silent", "--pack-destination", str(home)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
    assert hashlib.sha256(packed.read_bytes()).hexdigest() == AXE_SHA256, "axe-core's tarball is not the one pinned"
    with tarfile.open(packed) as tar:
        member = tar.extractfile("package/axe.min.js")
        assert member is not None
        return member.read().decode("utf-8")


def _axe_violations(browser: Browser, axe: str, tags: tuple[str, ...] = ()) -> list[str]:
    """axe-core's violations on the open page: of every rule, or of the rules with these tags (WCAG 2 A and AA)."""
    browser.js(axe + ";0")
    only = f", runOnly: {{type: 'tag', values: {json.dumps(list(tags))}}}" if tags else ""
    found = browser.js(
        f"axe.run(document, {{resultTypes: ['violations']{only}}}).then(r => r.violations.map("
        "v => v.id + ': ' + v.help + ' — ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join('; ')))"
    )
    return list(found)


def test_every_page_kind_passes_axe_core(browser: Browser, pages: Path, axe: str) -> None:
    """The matrix page and each kind of compare page (neighbours, oldest → newest, across frameworks, a Python twin)."""
    compare = sorted((pages / "compare").glob("compare-*.html"))
    rep = report.build(matrix.REFERENCE_RESULTS, matrix.load(), reference=True)
    kinds = {
        "neighbours": next(p for p in compare if p.name == f"{rep.frameworks[0].steps[0].name}.html"),
        "across frameworks": next(p for p in compare if p.name == f"{rep.compare_pages[-1].name}.html"),
    }
    twins = [t.page.name for v in rep.frameworks for t in v.twins]
    if twins:
        kinds["python twin"] = pages / "compare" / f"{twins[0]}.html"
    broken = {}
    for name, page in {"matrix": pages / "matrix.html", **kinds}.items():
        browser.size(1440)
        browser.open(page.as_uri())
        found = _axe_violations(browser, axe)
        if found:
            broken[name] = found
    assert not broken, json.dumps(broken, indent=1, ensure_ascii=False)


def _viewer_verdict(browser: Browser, tmp_path: Path, mine: Any) -> tuple[str, list[list[str]], str]:
    """viewer.html over loopback HTTP (as published), the user's result set `mine` given to its file input:
    the verdict line, the rows and the status line, read once the verdict is first written."""
    import functools
    import http.server
    import threading

    from fanin.model.results import save
    from fanin.report import data

    site = tmp_path / "site"
    built = matrix.load()
    files = outputs.bundle(report.build(matrix.REFERENCE_RESULTS, built, reference=True), site)
    files.update(data.files(built, site))
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    save(mine, tmp_path / "mine.json")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        browser.size(1440)
        browser.open(f"http://127.0.0.1:{server.server_address[1]}/viewer.html")
        root = browser.send("DOM.getDocument")["root"]["nodeId"]
        node = browser.send("DOM.querySelector", nodeId=root, selector="#yours")["nodeId"]
        waiting = browser.js(  # a promise on the verdict's first text: no clock decides when it is read
            "window.verdict = new Promise(done => new MutationObserver((_, o) => { o.disconnect(); "
            "done(document.getElementById('verdict').textContent); })"
            ".observe(document.getElementById('verdict'), {childList: true, characterData: true, subtree: true})); 0"
        )
        assert waiting == 0
        browser.send("DOM.setFileInputFiles", files=[str(tmp_path / "mine.json")], nodeId=node)
        verdict = browser.js("window.verdict")
        rows = browser.js("Array.from(document.querySelectorAll('#rows tr')).map(r => r.innerText.split('\\t'))")
        status = browser.js("document.getElementById('status').textContent")
        browser.screenshot(SHOTS / "viewer-1440.png")
    finally:
        server.shutdown()
        server.server_close()
        serving.join()
    return verdict, rows, status


def test_the_viewer_reads_a_users_result_set_in_the_page_and_says_the_gates_verdict(
    browser: Browser, tmp_path: Path
) -> None:
    """viewer.html over loopback HTTP (as published): the user's file is given to the page's file input, the
    reference cell comes from data/results/ beside it, and the verdict is the classifier's."""
    from fanin.model import compare
    from fanin.model.results import Observation, load

    built = matrix.load()
    reference = load(built.newest("langgraph").reference_path)
    probe_id = sorted(i for i, o in reference.observations.items() if o.hazard == "safe")[0]
    mine = load(built.newest("langgraph").reference_path)
    mine.observations[probe_id] = Observation("ok", {"lost": ["b"]}, "lost b", "b was lost", "silent")
    assert (
        compare.classify(probe_id, reference.observations[probe_id], mine.observations[probe_id]).label == "regression"
    )
    verdict, rows, status = _viewer_verdict(browser, tmp_path, mine)
    assert verdict.startswith(f"langgraph {mine.version} (yours) against {reference.cell} (reference): 1 regression")
    assert verdict.endswith("probe --here would exit 1 (1 regression or changed value).")
    assert rows == [
        [
            probe_id,
            f"safe: {reference.observations[probe_id].label}",
            "silent: lost b",
            "regression (hazard, value, label, detail)",
        ]
    ]
    assert f"read from data/results/{reference.cell}.json" in status


def test_the_viewer_reads_the_newer_neighbour_for_a_version_between_two_cells(browser: Browser, tmp_path: Path) -> None:
    """A version between two reference cells that behaves as the newer one: the page reads both cells, calls each
    difference "as the newer reference", and says probe --here would exit 0 (it said exit 1, every difference a
    regression or changed value)."""
    import itertools

    from fanin.model import compare
    from fanin.model.results import ResultSet, load

    built = matrix.load()
    main = [c for c in built.of("adk") if c.python == built.default_python and c.reference_path.exists()]

    def judged(a: ResultSet, b: ResultSet) -> list[compare.Change]:
        return [compare.standing(c, b.observations.get(c.probe_id), b.cell) for c in compare.diff(a, b)]

    sets = [load(c.reference_path) for c in main]
    older, newer, base, ahead = next(
        (main[i], main[i + 1], a, b)
        for i, (a, b) in enumerate(itertools.pairwise(sets))
        if any(c.gates for c in compare.diff(a, b)) and not any(c.gates for c in judged(a, b))
    )
    mine = ResultSet(older.id, "adk", f"{older.version}.1", base.environment, ahead.probes, dict(ahead.observations))
    verdict, rows, status = _viewer_verdict(browser, tmp_path, mine)
    assert f"against {older.id} (reference): " in verdict and "as the newer reference" in verdict
    assert verdict.endswith("probe --here would exit 0."), verdict
    said = {c.probe_id: c.label for c in judged(base, mine) if c.kind != compare.SAME}
    assert {row[0]: row[-1].split(" (", 1)[0] for row in rows} == said
    assert f"and its newer neighbour {newer.id}" in status


# --- the published site (report --out DIR): every kind of page ------------------------------------------------

SITE_TAG = "0123456789ab"


@pytest.fixture(scope="module")
def site() -> Iterator[Path]:
    """The site as `report --out DIR --version-tag TAG` writes it (relative links, so it opens from disk)."""
    with tempfile.TemporaryDirectory(prefix="fanin-site-") as tmp:
        rep = report.build(matrix.REFERENCE_RESULTS, matrix.load(), reference=True)
        for path, text in outputs.site(rep, matrix.load(), Path(tmp), "", SITE_TAG).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        yield Path(tmp)


def _site_kinds(site: Path) -> dict[str, Path]:
    """One page of each kind the site has (every framework's page: each is a kind of its own size), and the copy's."""
    rep = report.build(matrix.REFERENCE_RESULTS, matrix.load(), reference=True)
    compare = site / documents.COMPARE_DIR
    spanning = next(p for p in rep.compare_pages if p.a.framework == p.b.framework and p not in rep.frameworks[0].steps)
    kinds = {
        "index": site / documents.INDEX_HTML,
        "checklist": site / documents.CHECKLIST_HTML,
        "comparison": site / documents.COMPARISON_HTML,
        **{f"framework {v.key}": site / documents.framework_html(v.key) for v in rep.frameworks},
        "compare neighbours": compare / f"{rep.frameworks[0].steps[0].name}.html",
        "compare oldest to newest": compare / f"{spanning.name}.html",
        "compare across frameworks": compare / f"{rep.compare_pages[-1].name}.html",
        "permanent copy index": site / documents.VERSIONS_DIR / SITE_TAG / documents.INDEX_HTML,
        "old matrix": site / documents.MATRIX_HTML,
        "not found": site / documents.NOT_FOUND_HTML,
        "permanent copy framework": site
        / documents.VERSIONS_DIR
        / SITE_TAG
        / documents.framework_html(rep.frameworks[0].key),
    }
    twins = [t.page.name for v in rep.frameworks for t in v.twins]
    if twins:
        kinds["compare python twin"] = compare / f"{twins[0]}.html"
    for name, page in kinds.items():
        assert page.is_file(), name
    return kinds


def report_frameworks() -> tuple[Any, ...]:
    return report.build(matrix.REFERENCE_RESULTS, matrix.load(), reference=True).frameworks


LINKS_WITH_ANCHORS = """Array.from(document.querySelectorAll('a[href]')).map(a => a.href)
  .filter(h => h.startsWith('file:') && h.includes('#'))"""


def test_every_permalink_of_every_kind_of_site_page_lands_on_its_anchor(browser: Browser, site: Path) -> None:
    """Each link with an anchor, on each kind of page, opened in chromium: the element with that id exists there,
    and opening the permalink itself makes it the :target."""
    wanted: dict[str, set[str]] = {}
    for page in _site_kinds(site).values():
        browser.open(page.as_uri())
        for href in browser.js(LINKS_WITH_ANCHORS):
            document, _, anchor = href.partition("#")
            if anchor:  # "#" alone: the nav's link to the page it is on
                wanted.setdefault(document, set()).add(anchor)
    frameworks = {(site / documents.framework_html(v.key)).resolve().as_uri() for v in report_frameworks()}
    assert frameworks <= set(wanted) and sum(map(len, wanted.values())) > 300, {k: len(v) for k, v in wanted.items()}
    root = site.resolve().as_uri()
    missed = {}
    for document, anchors in sorted(wanted.items()):
        assert document.startswith(root + "/"), f"a link leaves the site: {document}"
        assert document.endswith(".html"), f"a link to a page that is not HTML: {document}"
        first = sorted(anchors)[0]
        browser.open(f"{document}#{first}")
        absent = browser.js(
            f"{json.dumps(sorted(anchors))}.filter(a => !document.getElementById(decodeURIComponent(a)))"
        )
        landed = browser.js("document.querySelector(':target') && document.querySelector(':target').id")
        if absent or landed != unquote(first):
            missed[document[len(root) :]] = {"absent": absent[:5], "landed": landed, "wanted": unquote(first)}
    assert not missed, json.dumps(missed, indent=1)


@pytest.mark.parametrize(
    ("old", "page", "anchor"),
    [
        ("langgraph/join/separate-edges", "langgraph", "langgraph/join/separate-edges"),
        ("matrix-adk-parallel-agent", "adk", "matrix-adk-parallel-agent"),
        ("matrix-adkjs", "adkjs", "matrix-adkjs"),
        ("probes-deepagents", "deepagents", "probes"),
        ("comparison", documents.COMPARISON_HTML, "comparison"),
        ("legend", documents.INDEX_HTML, None),
    ],
)
def test_a_permalink_into_the_old_one_page_matrix_goes_on_to_the_page_that_holds_it(
    browser: Browser, site: Path, old: str, page: str, anchor: str | None
) -> None:
    """Cite lines published before the site had a page per framework named matrix.html#<probe id>."""
    browser.open((site / documents.MATRIX_HTML).as_uri() + f"#{old}")
    while True:  # location.replace loads the page that holds the id: until its load event, matrix.html may show
        try:
            where = browser.js(
                "[location.pathname, document.readyState,"
                " document.querySelector(':target') && document.querySelector(':target').id]"
            )
        except RuntimeError:  # the context went with the page it belonged to
            where = None
        if where is not None and not where[0].endswith("/" + documents.MATRIX_HTML) and where[1] == "complete":
            break
        browser.wait_for("Page.loadEventFired")
    where = [where[0], where[2]]
    expected = page if page.endswith(".html") else documents.framework_html(page)
    assert where[0].endswith("/" + expected), where
    assert where[1] == anchor, where


def test_a_permalink_into_the_markdown_the_site_published_before_goes_on_to_its_html_page(
    browser: Browser, site: Path
) -> None:
    """404.html (GitHub Pages serves it for a path the site lacks) maps probes/<key>.md, REPORT.md and CHECKLIST.md."""
    browser.open((site / documents.NOT_FOUND_HTML).as_uri() + "#langgraph/join/separate-edges")
    assert browser.js("location.pathname").endswith("/" + documents.NOT_FOUND_HTML), "a path it does not map stays"
    paths = {
        "/fanin/probes/langgraph.md": "/fanin/probes/langgraph.html",
        "/fanin/v/0123/probes/pydantic_graph.md": "/fanin/v/0123/probes/pydantic_graph.html",
        "/fanin/REPORT.md": "/fanin/index.html",
        "/CHECKLIST.md": "/checklist.html",
        "/fanin/probes/langgraph.html": "",
        "/fanin/compare/x.md": "",
    }
    assert browser.js(f"Object.keys({json.dumps(paths)}).map(faninMoved)") == list(paths.values())


def test_every_kind_of_site_page_fits_a_phone(browser: Browser, site: Path) -> None:
    wide = {}
    browser.send("Emulation.setEmulatedMedia", media="screen")
    browser.size(390)
    for name, page in _site_kinds(site).items():
        browser.open(page.as_uri())
        sizes = browser.js("[document.documentElement.scrollWidth, window.innerWidth]")
        if sizes[0] > sizes[1]:
            wide[name] = sizes
        if name in ("index", "checklist", "framework langgraph"):
            browser.screenshot(SHOTS / f"site-{name.split()[-1]}-390.png")
    assert not wide, wide


# Every framework's page is made by one renderer: the largest and the smallest stand for the rest.
AXE_KINDS = (
    "index",
    "checklist",
    "comparison",
    "framework langgraph",
    "framework deepagents",
    "permanent copy index",
    "old matrix",
    "not found",
)


@pytest.mark.parametrize("kind", AXE_KINDS)
def test_every_kind_of_site_page_passes_axe_core(browser: Browser, site: Path, axe: str, kind: str) -> None:
    """WCAG 2 A and AA (axe-core's wcag2a and wcag2aa rules) on each kind of page; compare pages are checked above."""
    browser.send("Emulation.setEmulatedMedia", media="screen")
    browser.size(1440)
    browser.open(_site_kinds(site)[kind].as_uri())
    found = _axe_violations(browser, axe, ("wcag2a", "wcag2aa"))
    assert not found, json.dumps(found, indent=1, ensure_ascii=False)


def test_a_frameworks_site_page_keeps_the_matrix_picker_and_its_sticky_header(browser: Browser, site: Path) -> None:
    """The published page of one framework is the matrix as matrix.html has it: the picker and the sticky header."""
    browser.send("Emulation.setEmulatedMedia", media="screen")
    browser.size(1440)
    browser.open((site / documents.framework_html(report_frameworks()[0].key)).as_uri())
    last = browser.js("document.querySelector('form.pick').elements.a.options.length") - 1
    picked = _pick(browser, 0, last, between=False)
    assert picked["columns"] == picked["options"] and 0 < picked["shown"] < picked["rows"], picked
    browser.js("document.querySelector('form.pick').reset()")
    stuck = browser.js(
        """(() => {
        const wrap = document.querySelector('.matrix-wrap');
        wrap.scrollIntoView();
        wrap.scrollTop = Math.min(600, wrap.scrollHeight - wrap.clientHeight);
        return [wrap.scrollTop > 0, Math.abs(wrap.querySelector('thead th:nth-child(2)').getBoundingClientRect().top
                - wrap.getBoundingClientRect().top) <= 2];
        })()"""
    )
    assert stuck == [True, True]
