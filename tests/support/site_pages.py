"""Checks every replica website's pages share (tests of `armbench/domains/<domain>/site/` use them)."""
from __future__ import annotations

import re

from fastapi.testclient import TestClient


def row_value(html: str, label: str) -> str:
    """The value a record page (one GPU, one fund) shows for `label`."""
    return re.search(rf'<th scope="row">{re.escape(label)}</th>\s*<td>(.*?)</td>', html, re.S).group(1)


def check_error_page(site: TestClient, url: str, status: int, message: str, footer: re.Pattern) -> None:
    """`url` answers `status` with an HTML page in the site's layout that says `message`."""
    response = site.get(url)
    assert response.status_code == status
    assert "text/html" in response.headers["content-type"]
    assert message in response.text.replace("&#39;", "'") and footer.search(response.text)
