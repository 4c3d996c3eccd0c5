"""README.md's code blocks, as tests/spark/test_readme.py runs them: parsing, and the pip check.

A block is a fenced code block (```` ```bash ````, ```` ```python ````, ...). One marked as a
fragment, with ``<!-- fragment: why -->`` on the line before it, is not run: for a snippet that
needs the reader's own data or runs what a test cannot (the whole test suite). Every other block
must be ``bash``/``sh`` (run by bash) or ``python`` (run by Python).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SHELLS = ("bash", "sh", "shell", "console")
PYTHONS = ("python", "py", "python3")
_FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_FRAGMENT = re.compile(r"<!--\s*fragment\b:?\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    fragment: str | None  # why, when the block is marked as a fragment

    @property
    def where(self) -> str:
        return f"README.md:{self.line}"


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order.

    >>> [(b.line, b.language, b.fragment) for b in blocks("x\\n<!-- fragment: needs your data -->\\n```python\\nf(data)\\n```\\n\\n```bash\\nls\\n```\\n")]
    [(3, 'python', 'needs your data'), (7, 'bash', None)]
    """
    out = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = [x for x in text[: m.start()].splitlines() if x.strip()]
        marked = _FRAGMENT.search(before[-1]) if before else None
        out.append(Block(line, m.group(1).lower(), m.group(2), (marked.group(1) or "fragment") if marked else None))
    return out


def readme(root: Path) -> list[Block]:
    return blocks((root / "README.md").read_text())


def pip_check_script(python: str) -> str:
    """A ``python3`` for the blocks' PATH: ``python3 -m pip install ...`` checks that what the command
    would install (funke's extras named in it) is installed, and changes nothing; anything else runs
    the real interpreter. (Installing would re-point this machine's funke at the test's checkout.)"""
    return f"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "pip" ] && [ "$3" = "install" ]; then
    shift 3
    exec {python} -c '{_CHECK}' "$@"
fi
exec {python} "$@"
"""


_CHECK = r"""
import importlib.metadata as md, re, sys
from packaging.requirements import Requirement
extras = set()
for arg in sys.argv[1:]:
    m = re.fullmatch(r"(?:\.|funke)(?:\[([\w,\s-]*)\])?", arg.strip("'\""))
    if arg.startswith("-"):
        continue
    if m is None:
        sys.exit(f"README test: pip install {arg}: not funke or the checkout, so not checked")
    extras |= {e.strip() for e in (m.group(1) or "").split(",") if e.strip()}
known = set(md.metadata("funke").get_all("Provides-Extra") or [])
missing = []
for extra in sorted(extras):
    if extra not in known:
        sys.exit(f"README test: funke has no extra [{extra}] (it has: {sorted(known)})")
    for text in md.requires("funke") or []:
        req = Requirement(text)
        if req.marker is not None and req.marker.evaluate({"extra": extra}):
            try:
                md.version(req.name)
            except md.PackageNotFoundError:
                missing.append(f"{req.name} (funke[{extra}])")
if missing:
    sys.exit("README test: pip install would install " + ", ".join(missing) + ": install them first")
print(f"README test: pip install: funke with {sorted(extras) or 'no extras'} is installed; nothing changed")
""".replace("'", "'\"'\"'")
