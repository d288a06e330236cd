"""Source deduplication keys: exact DOI, then normalized URL; title+first author+year only hints."""
from __future__ import annotations

from typing import Any

# Query parameters that name a campaign or a referrer, never the document.
TRACKING = frozenset({"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content",
                      "ref", "fbclid", "gclid", "via"})


def normalize_url(url: str) -> str:
    """`host/path[?query]`: no scheme, no fragment, host lower-cased (the path keeps its
    case), no trailing slash, tracking parameters dropped; other parameters are kept
    because some sites put the document's identity in the query string."""
    rest = url.split("#", 1)[0]
    rest = rest.split("://", 1)[1] if "://" in rest else rest
    host, slash, tail = rest.partition("/")
    path, _, query = (slash + tail).partition("?")
    kept = [p for p in query.split("&") if p and p.split("=", 1)[0] not in TRACKING]
    return host.lower() + path.rstrip("/") + ("?" + "&".join(kept) if kept else "")


def _letters(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def hint_key(title: str, authors: str | None, year: int | None) -> str:
    """An exact (never fuzzy) key over title, first author and year, punctuation and case aside."""
    first_author = (authors or "").split(",", 1)[0]
    return f"{_letters(title)}|{_letters(first_author)}|{year}"


def keys(record: dict[str, Any]) -> dict[str, Any]:
    """The index's dedup columns of a Source record."""
    url = record.get("url")
    return {"url_norm": normalize_url(url) if url else None,
            "hint_key": hint_key(record.get("title") or "", record.get("authors"), record.get("year"))}
