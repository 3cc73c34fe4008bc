"""What every domain's replica does alike, checked once over all of them (a new domain is covered
without editing this file): /healthz names the replica and its data, no API description is served
beside the site, and a path no route serves is a 404, never a 5xx."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from armbench.domains import DOMAINS
from armbench.replicas.serve import load_reference


@pytest.fixture(scope="module", params=sorted(DOMAINS))
def replica(request):
    domain = DOMAINS[request.param]
    return domain, TestClient(load_reference(domain.app)())


def test_healthz_names_the_replica_and_its_data(replica):
    domain, site = replica
    assert site.get("/healthz").json() == {"replica": domain.name, "data_hash": domain.tables.hash()}


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"])
def test_no_api_description_is_served(replica, path):
    assert replica[1].get(path).status_code == 404


@pytest.mark.parametrize("path", ["/no-such-page", "/no-such-page/1", "/healthz/x"])
def test_a_path_no_route_serves_is_a_404(replica, path):
    assert replica[1].get(path).status_code == 404
