"""The parts of a real page around its content: `dressed(page, profile, key)` for one run's HTML.

- Chrome (`chrome_bytes`): a navigation bar after `<body>` and boilerplate (related links, a
  newsletter box, legal text) before `</body>`, of about the stated size in bytes, as real sites
  wrap every page. The links go nowhere (`#`): chrome costs a reader tokens, not a wrong turn.
- Markup drift (`markup_drift`): the class names and ids of the page's header and footer and of
  the chrome, and where the chrome stands beside the header and footer, vary from run to run (a
  site redesigned, or an A/B test), fixed within a run. Content (`<main>`) and every label are
  unchanged: a reader of the content works, a scraper fitted to one page shape does not.
"""
from __future__ import annotations

import hashlib
import re

from armbench.types import WebProfile

SECTIONS = ["Home", "Products", "Deals", "Reviews", "Guides", "Community", "Support", "Careers", "Press", "Contact"]
BOILERPLATE = (
    "We use cookies and similar technologies to improve your experience, to analyse traffic and to "
    "personalise content. Prices and availability are subject to change without notice. All trademarks "
    "are the property of their respective owners. "
)
BODY_OPEN = re.compile(r"<body[^>]*>")
LANDMARK = re.compile(r"<(header|footer)(\s[^>]*)?>")


def dressed(page: str, profile: WebProfile, key: str) -> str:
    """`page` with the profile's chrome and drift for the run `key` (unchanged without either)."""
    nav, extra = chrome(profile.chrome_bytes or 0)
    if profile.markup_drift:
        page = LANDMARK.sub(lambda found: f"<{found[1]} {attributes(key, found[1])}>", page)
        nav, extra = (drifted(block, key) for block in (nav, extra))
    opening = BODY_OPEN.search(page)
    if opening is None or "</body>" not in page:
        return page
    page = page[:opening.end()] + nav + page[opening.end():]
    if profile.markup_drift and shuffle(key) and "<footer" in page:  # the chrome's place changes with the design
        return page.replace("<footer", extra + "<footer", 1)
    closing = page.rfind("</body>")
    return page[:closing] + extra + page[closing:]


def chrome(size: int) -> tuple[str, str]:
    """A navigation bar and a footer block of about `size` bytes in all ("" for 0)."""
    if size <= 0:
        return "", ""
    links = "".join(f'<li><a href="#">{name}</a></li>' for name in SECTIONS)
    nav = f'<nav aria-label="Site"><ul>{links}</ul></nav>'
    parts = []
    while len(nav) + sum(map(len, parts)) < size:
        parts.append(f"<p>{BOILERPLATE}</p>")
    extra = ('<aside><h2>Stay in touch</h2><p>Sign up for our newsletter.</p></aside>'
             f'<div>{"".join(parts)}</div>')
    return nav, extra


def attributes(key: str, part: str) -> str:
    token = digest(key, part)
    return f'class="{part[:3]}-{token[:6]}" id="{part}-{token[6:12]}"'


def drifted(block: str, key: str) -> str:
    """A chrome block whose first element carries this run's class name and id."""
    if not block:
        return block
    tag = re.match(r"<(\w+)", block)
    assert tag is not None
    return block.replace(f"<{tag[1]}", f"<{tag[1]} {attributes(key, tag[1])}", 1)


def shuffle(key: str) -> bool:
    """Whether this run's design puts the footer boilerplate before the footer (else after it)."""
    return int(digest(key, "order")[:2], 16) % 2 == 1


def digest(key: str, part: str) -> str:
    return hashlib.sha256(f"{key}\0drift\0{part}".encode()).hexdigest()
