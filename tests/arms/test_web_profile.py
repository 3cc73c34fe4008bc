"""A run's web profile reaches the replica by every way a run reads it: the browser, `http_get` and
the python sandbox meet the same frictions, counted per run; the typed tools meet none."""
from __future__ import annotations

import json

import pytest

from armbench.arms.environment import ArmEnvironment
from armbench.types import RateLimit, WebProfile

pytestmark = pytest.mark.slow  # replicas and Chromium

THROTTLED = WebProfile(name="throttled", rate_limit=RateLimit(requests=2, window_s=600, retry_after_s=9))
CONSENT = WebProfile(name="consent", consent=True)


async def result(arm, tool: str, arguments: dict) -> dict:
    outcome = await arm.tool(tool).invoke(arguments)
    assert not outcome.is_error, outcome.result
    return outcome.result


def python_status(base_url: str) -> str:
    return (f"import urllib.request, urllib.error\ntry:\n    print(urllib.request.urlopen('{base_url}/gpus').status)\n"
            "except urllib.error.HTTPError as error:\n    print(error.code, error.headers['Retry-After'])")


async def test_one_runs_rate_limit_counts_its_browser_http_get_and_sandbox_requests_alike(replica_env):
    async with ArmEnvironment(["gpus"], web=THROTTLED) as env:
        base = env.target("gpus").base_url
        async with env.open_arm("tooled", "gpus", "gpus-design-01.tooled.r0") as arm:
            for _ in range(3):  # the typed tool is the study's API: no friction
                assert (await result(arm, "gpu_query", {}))["rows"]
            assert (await result(arm, "http_get", {"url": f"{base}/gpus"}))["status"] == 200
            assert (await result(arm, "python", {"code": python_status(base)}))["stdout"] == "200\n"
            assert (await result(arm, "http_get", {"url": f"{base}/gpus"}))["status"] == 429
            status, retry_after = (await result(arm, "python", {"code": python_status(base)}))["stdout"].split()
            assert status == "429" and 9 < int(retry_after) <= 600  # when the 600 s window frees, not the 9 s floor
            page = await result(arm, "browser_navigate", {"url": f"{base}/gpus"})
            assert "Too many requests" in page["snapshot"]
        async with env.open_arm("tooled", "gpus", "gpus-design-01.tooled.r1") as arm:  # another run
            assert (await result(arm, "http_get", {"url": f"{base}/gpus"}))["status"] == 200


async def test_the_consent_page_is_accepted_with_its_button_and_the_kind_web_has_none(replica_env):
    async with ArmEnvironment(["gpus"], web=CONSENT) as env:
        base = env.target("gpus").base_url
        async with env.open_arm("browsing", "gpus", "gpus-design-01.browsing.r0") as arm:
            page = await result(arm, "browser_navigate", {"url": f"{base}/gpus"})
            assert "Accept all cookies" in page["snapshot"] and "GPU Database" not in page["snapshot"]
            button = next(line for line in page["snapshot"].splitlines() if "Accept all cookies" in line)
            ref = button.split("[ref=")[1].split("]")[0]
            page = await result(arm, "browser_click", {"ref": ref})
            assert "GPU Database" in page["snapshot"] and page["url"].endswith("/gpus")
        with pytest.raises(ValueError, match="needs the run's id"):  # a forgotten id never loses the profile
            async with env.open_arm("browsing", "gpus"):
                pass
    async with ArmEnvironment(["gpus"]) as env, env.open_arm("browsing", "gpus") as arm:  # the kind web (synthesis)
        page = await result(arm, "http_get", {"url": f"{env.target('gpus').base_url}/gpus"})
        assert "GPU Database" in page["body"] and json.dumps(page).count("Accept all cookies") == 0


def test_bench_run_under_a_profile_of_ones_own_records_it_and_a_resume_must_give_the_same(cli, tmp_path, replica_env):
    slow = tmp_path / "slow-lan.yaml"
    slow.write_text("latency: {p50_ms: 20, p95_ms: 80}\n")
    out = tmp_path / "run"
    # The tooled arm's runs, quick: what is recorded is the same in every arm.
    code, stdout, err = cli("run", "--model", "scripted/oracle", "--domain", "gpus", "--set", "heldout",
                            "--arm", "tooled", "--web", str(slow), "--out", str(out), "--quiet")
    assert code == 0, err
    assert "web: slow-lan" in stdout.splitlines()[0]
    records = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len(records) == 5 and all(r["correct"] and r["web"] == "slow-lan" for r in records)
    assert json.loads((out / "manifest.json").read_text())["config"]["web"]["latency"] == {"p50_ms": 20, "p95_ms": 80}
    code, _, err = cli("run", "--model", "scripted/oracle", "--domain", "gpus", "--set", "heldout", "--arm", "tooled",
                       "--resume", str(out))
    assert code == 2 and "--web: the run set met the web profile 'slow-lan', this command 'kind'" in err
    code, _, err = cli("run", "--model", "scripted/oracle", "--web", "gentle")
    assert code == 2 and "--web gentle: neither a profile (kind, real, hostile) nor a YAML file" in err
