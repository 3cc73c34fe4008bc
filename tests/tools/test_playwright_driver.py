"""Playwright's driver is started with Node's compile cache (armbench/tools/playwright_driver.py)."""
from __future__ import annotations

import os

import pytest

from armbench.tools.playwright_driver import COMPILE_CACHE_ENV, compile_cache_dir, start_playwright


@pytest.fixture
def no_compile_cache_set(monkeypatch, tmp_path):
    monkeypatch.setenv(COMPILE_CACHE_ENV, "set-and-removed")  # so that the test's own setting is undone
    monkeypatch.delenv(COMPILE_CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "armbench" / "node-compile-cache"


@pytest.mark.asyncio
async def test_the_driver_keeps_its_compiled_code_in_the_users_cache(no_compile_cache_set):
    playwright = await start_playwright()
    await playwright.stop()
    assert os.environ[COMPILE_CACHE_ENV] == str(no_compile_cache_set)
    assert any(path.is_file() for path in no_compile_cache_set.rglob("*"))


@pytest.mark.asyncio
async def test_a_compile_cache_the_user_set_is_kept(no_compile_cache_set, monkeypatch, tmp_path):
    monkeypatch.setenv(COMPILE_CACHE_ENV, str(tmp_path / "mine"))
    playwright = await start_playwright()
    await playwright.stop()
    assert any(path.is_file() for path in (tmp_path / "mine").rglob("*"))
    assert not no_compile_cache_set.exists()


def test_without_a_home_folder_there_is_no_cache(monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr("pwd.getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    assert compile_cache_dir() is None
