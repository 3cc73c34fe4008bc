"""Web profiles: how kind the replicas are to the runs that read them (`bench run --web PROFILE`).

The replicas are the kind web: every page answers in milliseconds and nothing gets in the way. A
profile declares the frictions of the real web, each imitating what real sites do, and the replica
web kit applies them to every domain's site and API (replicas/web/frictions.py), per run:
- `latency`: each request answers after a delay drawn from a log-normal distribution with the
  given median and 95th percentile (a server far away, or busy);
- `rate_limit`: beyond `requests` requests in `window_s` seconds, a 429 with `Retry-After` (an
  API's or a CDN's throttle);
- `transient_errors`: a 503 with `Retry-After: 1`, with the given probability, never twice in a
  row for one URL (an overloaded backend; a retry gets through);
- `consent`: the first page (HTML) of a run is a cookie-consent interstitial whose button (a GET
  form, so a plain GET accepts it too) must be followed before the content shows (the EU's
  cookie banners);
- `page_cap`: an HTML list page past the first K says "refine your search" instead (search sites
  that show the first few hundred results): a crawl must use the site's filters;
- `chrome_bytes`: navigation and boilerplate of about that size around each page's content;
- `markup_drift`: the class names, ids and order of a page's non-content parts vary per run
  (replicas/web/page_chrome.py).

A run's draws depend only on the profile's `seed`, the run's id and the request (its method, URL
and how many times the run was served it before), never on other runs: the same run meets the same
frictions at concurrency 1 and 16. The rate limit alone counts real seconds (a request it refuses
is not counted, so it moves no draw). `kind`, the default, has none: the replicas serve as
they always have, byte for byte. The typed tools are not affected (they are the API the study gives
the tooled arm); the browser, `http_get` and the python sandbox meet the same frictions.

A profile travels with each request of a run, in two headers the harness sets (and a sandbox's
own are replaced): `x-armbench-web` (the profile) and `x-armbench-run` (the run's key, then a dot
and the attempt's: the replica keeps each attempt's state apart).
"""
from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from armbench.errors import UserError
from armbench.types import KIND_WEB, Latency, RateLimit, TransientErrors, WebProfile

WEB_PROFILE_HEADER = "x-armbench-web"
WEB_RUN_HEADER = "x-armbench-run"
WEB_HEADERS = {WEB_PROFILE_HEADER, WEB_RUN_HEADER}  # the harness's: a sandbox's own are dropped


def headers(profile: WebProfile, run_id: str, attempt: str) -> dict[str, str]:
    """What each request of one attempt at the run `run_id` carries (nothing under a kind profile):
    its draws follow the run (`run_key`), its state (consent, the rate window) the attempt, so a
    run played again, in another run set or beside a Ray driver, starts afresh and meets the same draws."""
    if profile.is_kind:
        return {}
    return {WEB_PROFILE_HEADER: encoded(profile), WEB_RUN_HEADER: f"{run_key(profile.seed, run_id)}.{attempt}"}


def encoded(profile: WebProfile) -> str:
    return base64.urlsafe_b64encode(profile.model_dump_json(exclude_defaults=True).encode()).decode()


def decoded(text: str) -> WebProfile:
    """The profile a request carries; ValueError when it is not one."""
    try:
        return WebProfile.model_validate_json(base64.urlsafe_b64decode(text.encode("ascii")))
    except (ValidationError, ValueError, UnicodeError) as error:
        raise ValueError(f"{WEB_PROFILE_HEADER} is not a web profile: {error}") from None


def profile_in(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The web profile a run set's runs met, as its manifest holds it; None for the kind web."""
    return (manifest.get("config") or {}).get("web")


def profile_name_in(manifest: dict[str, Any]) -> str:
    return (profile_in(manifest) or {}).get("name", "kind")


def profiles_apart(a: dict[str, Any], b: dict[str, Any], between: str) -> str:
    """How the web profiles of two manifests differ, in words: their names (`between` them), or what
    differs under one name."""
    left, right = profile_name_in(a), profile_name_in(b)
    if left != right:
        return f"{left!r}{between}{right!r}"
    settings_a, settings_b = profile_in(a) or {}, profile_in(b) or {}
    differ = sorted(key for key in settings_a.keys() | settings_b.keys() if settings_a.get(key) != settings_b.get(key))
    return f"{left!r} with other {', '.join(differ)}"


def run_key(seed: int, run_id: str) -> str:
    """The run as the replicas know it: its frictions' seed, not its name."""
    return hashlib.sha256(f"{seed}:{run_id}".encode()).hexdigest()[:24]


PROFILES = {
    "kind": KIND_WEB,
    "real": WebProfile(name="real", latency=Latency(p50_ms=300, p95_ms=1200),
                       rate_limit=RateLimit(requests=300, window_s=60, retry_after_s=5),
                       transient_errors=TransientErrors(probability=0.02), consent=True, page_cap=20,
                       chrome_bytes=4000, markup_drift=True),
    "hostile": WebProfile(name="hostile", latency=Latency(p50_ms=800, p95_ms=4000),
                          rate_limit=RateLimit(requests=100, window_s=60, retry_after_s=15),
                          transient_errors=TransientErrors(probability=0.1), consent=True, page_cap=5,
                          chrome_bytes=12000, markup_drift=True),
}


def load_profile(name_or_path: str, latency_scale: float | None = None) -> WebProfile:
    """A built-in profile by name, or one of the user's own from a YAML file (its keys those of
    WebProfile); a UserError names what is wrong."""
    if name_or_path in PROFILES:
        profile = PROFILES[name_or_path]
    else:
        profile = from_file(Path(name_or_path))
    return profile if latency_scale is None else profile.model_copy(update={"latency_scale": latency_scale})


def from_file(path: Path) -> WebProfile:
    known = ", ".join(PROFILES)
    if not path.is_file():
        raise UserError(f"--web {path}: neither a profile ({known}) nor a YAML file")
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, yaml.YAMLError) as error:
        raise UserError(f"--web {path}: cannot read it as YAML ({str(error).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise UserError(f"--web {path}: a profile is a mapping of frictions (see docs/web-conditions.md)")
    data.setdefault("name", path.stem)
    try:
        return WebProfile.model_validate(data)
    except ValidationError as error:
        issue = error.errors()[0]
        where = ".".join(map(str, issue["loc"])) or "the file"
        raise UserError(f"--web {path}: {where}: {issue['msg']}") from None
