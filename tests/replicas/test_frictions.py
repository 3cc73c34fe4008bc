"""Web-condition profiles at the replica: each friction applied to a real replica app (the GPU site
and the World Bank API), per run, and the same for the same seed and run id."""
from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from armbench.domains import DOMAINS
from armbench.errors import UserError
from armbench.replicas.serve import load_reference
from armbench.replicas.web.frictions import CONSENT_PATH, Frictions
from armbench.types import KIND_WEB, Latency, RateLimit, TransientErrors, WebProfile
from armbench.web_profile import PROFILES, encoded, headers, load_profile

LIST = "/gpus?page=2"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def site(domain: str = "gpus", clock: Clock | None = None) -> TestClient:
    """The domain's replica app inside the frictions, as `bench replicas serve` serves it."""
    return TestClient(Frictions(load_reference(DOMAINS[domain].app)(), clock=clock or Clock()),
                      follow_redirects=False)


def get(client: TestClient, profile: WebProfile, run_id: str, path: str = LIST, attempt: str = "1"):
    return client.get(path, headers=headers(profile, run_id, attempt))


def test_the_kind_profile_sends_nothing_and_the_replica_answers_byte_for_byte_as_without_frictions():
    assert headers(KIND_WEB, "gpus-design-01.browsing.r0", "1") == {} and KIND_WEB.is_kind
    bare = TestClient(load_reference(DOMAINS["gpus"].app)())
    assert get(site(), KIND_WEB, "gpus-design-01.browsing.r0").content == bare.get(LIST).content


def test_past_its_rate_limit_a_run_gets_429_with_retry_after_and_other_runs_do_not():
    clock = Clock()
    client = site(clock=clock)
    throttled = WebProfile(name="t", rate_limit=RateLimit(requests=3, window_s=10, retry_after_s=7))
    assert [get(client, throttled, "a").status_code for _ in range(4)] == [200, 200, 200, 429]
    limited = get(client, throttled, "a")
    assert limited.headers["retry-after"] == "10" and "at most 3 per 10 s" in limited.text  # when the window frees
    clock.now += 8
    assert get(client, throttled, "a").headers["retry-after"] == "7"  # never below the profile's own
    assert get(client, throttled, "b").status_code == 200  # another run's allowance is its own
    clock.now += 2.5
    assert get(client, throttled, "a").status_code == 200  # the window has moved on
    assert get(client, throttled, "a", attempt="2").status_code == 200  # the run played again starts afresh


def transient_statuses(client: TestClient, profile: WebProfile, run_id: str) -> list[tuple[str, int]]:
    return [(path, get(client, profile, run_id, path).status_code)
            for path in [f"/gpus?page={n}" for n in range(1, 9)] * 3]


def test_a_transient_503_comes_with_retry_after_never_twice_in_a_row_for_a_url_and_is_the_same_for_a_seed_and_run():
    flaky = WebProfile(name="f", transient_errors=TransientErrors(probability=0.5))
    statuses = transient_statuses(site(), flaky, "gpus-design-01.browsing.r0")
    assert {status for _, status in statuses} == {200, 503}
    for path in {path for path, _ in statuses}:
        mine = [status for p, status in statuses if p == path]
        assert (503, 503) not in zip(mine, mine[1:])
    assert transient_statuses(site(), flaky, "gpus-design-01.browsing.r0") == statuses  # a new server, same draws
    client = site()
    transient_statuses(client, flaky, "gpus-design-01.browsing.r0")
    again = [(path, get(client, flaky, "gpus-design-01.browsing.r0", path, attempt="2").status_code)
             for path, _ in statuses]
    assert again == statuses  # the same run played again on the same server: its state anew, its draws the same
    assert transient_statuses(site(), flaky, "gpus-design-01.browsing.r1") != statuses
    reseeded = flaky.model_copy(update={"seed": 1})
    assert transient_statuses(site(), reseeded, "gpus-design-01.browsing.r0") != statuses
    failed = next(get(site(), flaky, "x", path) for path, status in statuses if status == 503)
    assert failed.headers["retry-after"] == "1"


def test_the_first_page_of_a_run_is_a_consent_page_whose_button_leads_on_to_the_content():
    client, asking = site(), WebProfile(name="c", consent=True)
    first = get(client, asking, "a")
    assert first.status_code == 200 and "We value your privacy" in first.text and "RTX" not in first.text
    assert f'<form action="{CONSENT_PATH}" method="get">' in first.text and "Accept all cookies</button>" in first.text
    assert 'name="next" value="/gpus?page=2"' in first.text
    accepted = get(client, asking, "a", f"{CONSENT_PATH}?next=%2Fgpus%3Fpage%3D2")
    assert accepted.status_code == 303 and accepted.headers["location"] == LIST
    assert "RTX" in get(client, asking, "a").text  # accepted: the content shows from now on
    assert get(client, asking, "a", f"{CONSENT_PATH}?next=%2Fgpus").status_code == 303  # a second accept
    assert "We value your privacy" in get(client, asking, "b").text  # another run has not accepted
    for away in ["https://example.com/", "//example.com/", "/%5Cexample.com", "/%09/example.com", "/%0Ax"]:
        elsewhere = get(client, asking, "c", f"{CONSENT_PATH}?next={away}")
        assert elsewhere.status_code == 303 and elsewhere.headers["location"] == "/", away  # never off the site
    assert "Accept all cookies" in get(client, asking, "d", "/gpus%0A").text  # a control character stays encoded


def test_an_api_reply_is_no_page_and_passes_the_consent_check():
    api = site("worldbank")
    reply = get(api, WebProfile(name="c", consent=True), "a", "/v2/country?format=json&per_page=2")
    assert reply.status_code == 200 and reply.json()[0]["page"] == 1


def test_latency_is_log_normal_with_the_profiles_median_and_95th_percentile():
    latency = Latency(p50_ms=300, p95_ms=1200)
    assert latency.seconds(0.5, 1.0) == pytest.approx(0.3)
    assert latency.seconds(0.95, 1.0) == pytest.approx(1.2)
    assert latency.seconds(0.95, 0.01) == pytest.approx(0.012)  # CI's scaled latencies
    with pytest.raises(ValueError, match="below p50_ms"):
        Latency(p50_ms=300, p95_ms=100)


def test_a_request_with_a_broken_profile_header_is_a_400_never_a_500():
    client = site()
    assert client.get(LIST, headers={"x-armbench-web": "not base64 json"}).status_code == 400
    assert client.get(LIST, headers={"x-armbench-web": encoded(PROFILES["real"])}).status_code == 400  # no run


def test_profiles_by_name_or_from_a_yaml_file_with_one_line_errors(tmp_path):
    assert load_profile("real").consent and load_profile("real", latency_scale=0.01).latency_scale == 0.01
    own = tmp_path / "slow.yaml"
    own.write_text("latency: {p50_ms: 50, p95_ms: 200}\nseed: 3\n")
    assert load_profile(str(own)) == WebProfile(name="slow", seed=3, latency=Latency(p50_ms=50, p95_ms=200))
    own.write_text("latency: {p50_ms: 50}\n")
    with pytest.raises(UserError, match="latency.p95_ms: Field required"):
        load_profile(str(own))
    own.write_text("captcha: true\n")
    with pytest.raises(UserError, match="captcha: Extra inputs are not permitted"):
        load_profile(str(own))
    with pytest.raises(UserError, match="neither a profile"):
        load_profile("gentle")
    own.write_text("latency: {p50_ms: .inf, p95_ms: .inf}\n")
    with pytest.raises(UserError, match="latency.p50_ms: Input should be a finite number"):
        load_profile(str(own))


def test_past_the_page_cap_a_list_page_says_refine_your_search_and_filters_still_answer():
    client, capped = site(), WebProfile(name="p", page_cap=2)
    assert "RTX" in get(client, capped, "a", "/gpus?page=2").text
    past = get(client, capped, "a", "/gpus?page=3")
    assert past.status_code == 200 and "Only the first 2 pages of results are shown" in past.text
    assert "RTX" not in past.text
    for sly in ["/gpus?page=1&page=5", "/gpus?page=+5", "/gpus?page=%205"]:  # read as the site reads them
        assert "Only the first 2 pages" in get(client, capped, "a", sly).text, sly
    assert "RTX" in get(client, capped, "a", "/gpus?manufacturer=NVIDIA").text  # a filtered list's first page
    api = get(site("worldbank"), capped, "a", "/v2/country?format=json&per_page=2&page=5")
    assert api.status_code == 200 and api.json()[0]["page"] == 5  # an API's JSON is no list page


def main_part(page: str) -> str:
    return page[page.index("<main>"):page.index("</main>")]


def test_chrome_wraps_each_page_in_about_its_size_of_boilerplate_and_leaves_the_content_alone():
    client, bare = site(), TestClient(load_reference(DOMAINS["gpus"].app)())
    page = get(client, WebProfile(name="c", chrome_bytes=5000), "a").text
    plain = bare.get(LIST).text
    assert 5000 <= len(page) - len(plain) < 6000
    assert main_part(page) == main_part(plain) and '<nav aria-label="Site">' in page and "Stay in touch" in page


def test_markup_drift_varies_non_content_class_names_ids_and_order_per_run_never_the_content():
    client, drifting = site(), WebProfile(name="d", chrome_bytes=1000, markup_drift=True)
    pages = {run: get(client, drifting, run).text for run in [f"gpus-design-01.browsing.r{n}" for n in range(8)]}
    plain = TestClient(load_reference(DOMAINS["gpus"].app)()).get(LIST).text
    assert all(main_part(page) == main_part(plain) for page in pages.values())
    headers = {re.search(r"<header [^>]*>", page)[0] for page in pages.values()}
    assert len(headers) == 8 and all('class="hea-' in header and 'id="header-' in header for header in headers)
    orders = {page.index("Stay in touch") < page.index("<footer") for page in pages.values()}
    assert orders == {True, False}  # the boilerplate stands before the footer in some designs, after it in others
    run = "gpus-design-01.browsing.r0"
    assert get(client, drifting, run).text == pages[run]  # one design for the whole run
