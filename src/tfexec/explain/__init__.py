"""The explorer: one self-contained HTML page per run (``tfexec explain``, ``tfexec.explain``).

* ``outline`` — the lowered graph as labelled rows, shared with the pictures (``tfexec graph``);
* ``sources`` — the program's text form and where each node is written in it;
* ``routes`` — both routes run once, every value and error kept;
* ``values`` — what the page records of a value (numbers, a sample of the data, differences);
* ``model`` — the page's JSON data and verdict; ``page`` — the HTML (``page.html``,
  ``page.css``, ``draw.js``, ``page.js`` inlined); ``_cli`` — the ``tfexec explain`` subcommand.
"""

from tfexec.explain.page import explain as explain

__all__ = ["explain"]
