"""Item normalisation for strict grading: a fixed, non-fuzzy sequence of rules."""

import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")
_QUOTE_PAIRS = {"'": "'", '"': '"', "“": "”", "‘": "’", "`": "`"}


def normalize_item(text: str) -> str:
    """NFKC, case-fold, collapse whitespace, strip one pair of quotes, then one trailing period."""
    text = unicodedata.normalize("NFKC", text)
    text = text.casefold()
    text = _WHITESPACE.sub(" ", text).strip()
    if len(text) >= 2 and _QUOTE_PAIRS.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    if text.endswith("."):
        text = text[:-1]
    return text


def split_items(answer: str, separator: str) -> list[str]:
    """Split on the separator (surrounding whitespace ignored), normalise, drop empty items."""
    # A whitespace-only separator such as "\n" must not strip to "".
    sep = separator.strip() or separator
    items = (normalize_item(part) for part in answer.split(sep))
    return [item for item in items if item]
