"""Screenshots of the built documentation site in headless Chromium, and a check for cut code.

Usage:
    make docs                       # builds docs/_build/html
    python tools/screenshot_docs.py [--html docs/_build/html] [--out docs/_build/screenshots]
                                    [--chromium /usr/bin/chromium] [PAGE ...]

Takes a 1280x2000 screenshot of each PAGE (default: the index, an API page, the command-line
reference and a gallery example) into ``--out`` as ``<page>.png``, serving the site from
127.0.0.1 as a web server would. On each whole page (not only the part in the screenshot) it
looks for content cut at the right edge: a code block, signature, option or table whose
content is wider than the box that shows it (so a part is hidden or needs scrolling), or a box
that reaches past the content column. It prints each one found and exits with status 1 if
there is any, so the check can run after a change of theme or CSS.

Needs Chromium (Debian: ``apt-get install -y chromium``) and Playwright's Python package
(``pip install playwright``; it drives the installed Chromium, no browser download). The
Chromium flags are the ones a machine without network access needs (no background
connections, no sandbox as root).
"""
import argparse
import functools
import http.server
import pathlib
import sys
import tempfile
import threading

ROOT = pathlib.Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1280, 2000
DEFAULT_PAGES = ("index.html", "api/sparsenet.ndarray.sparse.html", "cli.html",
                 "auto_examples/plot_03_seed000_training.html")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]

# Elements that must show all their content inside the article column.
_FIND_CUT = """() => {
  const column = document.querySelector('.bd-article-container') || document.body;
  const right = column.getBoundingClientRect().right + 1;
  const found = [];
  const selectors = 'div.highlight pre, pre, dt.sig, dl.option > dt, table, .sig-name';
  for (const el of document.querySelectorAll(selectors)) {
    if (!column.contains(el) || el.offsetParent === null) continue;
    const box = el.getBoundingClientRect();
    const hidden = el.scrollWidth - el.clientWidth;
    const wrapper = el.closest('.pst-scrollable-table-container');
    const scrolls = wrapper && wrapper.scrollWidth > wrapper.clientWidth + 1;
    if (hidden > 1 || box.right > right || scrolls) {
      found.push({tag: el.tagName.toLowerCase(), text: el.innerText.slice(0, 80),
                  hidden: Math.max(hidden, Math.round(box.right - right))});
    }
  }
  return found;
}"""


def _serve(folder):
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per file would bury the report
        pass


def _default_pages(html):
    pages = []
    for page in DEFAULT_PAGES:
        if (html / page).exists():
            pages.append(page)
        elif page.startswith("auto_examples/"):
            examples = sorted((html / "auto_examples").glob("plot_*.html"))
            if examples:
                pages.append(examples[0].relative_to(html).as_posix())
    return pages


def shoot(html, out, pages, chromium):
    """Screenshot ``pages`` of the site in ``html`` into ``out``; return the cut elements.

    Parameters
    ----------
    html : pathlib.Path
        The built site (``docs/_build/html``).
    out : pathlib.Path
        Folder for the PNG files.
    pages : list of str
        Pages relative to ``html``.
    chromium : str
        The Chromium executable.

    Returns
    -------
    dict
        Page to the list of elements found cut (empty lists when none is).
    """
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    server = _serve(html)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    report = {}
    try:
        with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
            browser = playwright.chromium.launch_persistent_context(
                profile, executable_path=chromium, args=CHROMIUM_FLAGS, headless=True,
                viewport={"width": WIDTH, "height": HEIGHT})
            page = browser.new_page()
            for name in pages:
                page.goto(base + name, wait_until="load")
                png = out / (name.replace("/", "_").removesuffix(".html") + ".png")
                page.screenshot(path=str(png), clip={"x": 0, "y": 0, "width": WIDTH,
                                                     "height": HEIGHT})
                report[name] = page.evaluate(_FIND_CUT)
                print(f"{png}: {len(report[name])} cut elements")
            browser.close()
    finally:
        server.shutdown()
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", metavar="PAGE",
                        help="pages relative to --html (default: index, API, CLI, gallery)")
    parser.add_argument("--html", type=pathlib.Path, default=ROOT / "docs" / "_build" / "html")
    parser.add_argument("--out", type=pathlib.Path,
                        default=ROOT / "docs" / "_build" / "screenshots")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args(argv)
    if not (args.html / "index.html").exists():
        parser.error(f"{args.html / 'index.html'} does not exist: build the site first "
                     "(make docs)")
    pages = args.pages or _default_pages(args.html)
    report = shoot(args.html, args.out, pages, args.chromium)
    cut = [(page, item) for page, items in report.items() for item in items]
    for page, item in cut:
        print(f"{page}: <{item['tag']}> cut by {item['hidden']} px: {item['text']!r}")
    return 1 if cut else 0


if __name__ == "__main__":
    sys.exit(main())
