"""#54, item 5: an XDG folder set outside the home gets the home's secret exclusions, the cache
(`XDG_CACHE_HOME=/var/cache/u`) as much as the config, data and state folders.

Each attack reads a token kept where a tool keeps it (`huggingface/token`, a tool's own cache)
through a moved cache folder, by the ways a path can be spelled (a link to the folder, `..`, a
trailing slash, a link in the project); the positive control reads an allow-listed cache
(`pip`) through the same folder and finds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.safety.sensitive import is_private_home_entry, is_secret, xdg_outside_home
from tests.attack_helpers import command, needs_wall, run

TOKEN = "hf_r9XdgCacheTokenMarker4Fq8Lw2sQe5uY1oN"
PIP = "pip-cache-marker-xdg"


def _cache(folder: Path) -> Path:
    (folder / "huggingface").mkdir(parents=True)
    (folder / "huggingface" / "token").write_text(TOKEN + "\n")
    (folder / "sometool").mkdir()
    (folder / "sometool" / "session.json").write_text('{"marker": "sometool-session-xdg"}\n')
    (folder / "pip").mkdir()
    (folder / "pip" / "selfcheck.txt").write_text(PIP + "\n")
    return folder


def _caches(home: Path) -> list[Path]:
    return [folder for folder, stand_in in xdg_outside_home(home) if stand_in == ".cache"]


@pytest.mark.parametrize(("inside", "secret"), [
    ("huggingface/token", True),
    ("sometool/session.json", True),
    ("pip/selfcheck.txt", False),
    ("uv/archive-v0/x.txt", False),
])
def test_a_cache_folder_outside_the_home_is_judged_as_the_home_s_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inside: str, secret: bool) -> None:
    home, cache = tmp_path / "home", tmp_path / "var" / "cache" / "u"
    home.mkdir()
    (cache / inside).parent.mkdir(parents=True)
    (cache / inside).write_text("x\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    assert is_secret(cache / inside, home) is secret
    assert is_private_home_entry(cache / inside, home) is secret
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert is_private_home_entry(cache / inside, home) is False, "only the variable makes it the home's"


@pytest.mark.parametrize("spelling", ["{cache}", "{cache}/", "{link}", "{parent}/x/../u"])
def test_every_spelling_of_the_cache_folder_names_the_same_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str) -> None:
    home, cache = tmp_path / "home", tmp_path / "var" / "cache" / "u"
    home.mkdir()
    _cache(cache)
    (cache.parent / "x").mkdir()
    link = tmp_path / "cache-link"
    link.symlink_to(cache)
    monkeypatch.setenv("XDG_CACHE_HOME", spelling.format(cache=cache, link=link, parent=cache.parent))
    assert _caches(home) == [cache.resolve()]
    assert is_secret(cache / "huggingface" / "token", home)
    assert is_secret(link / "huggingface" / "token", home)  # read through the link: its real path is judged


def test_a_relative_or_home_cache_is_not_an_outside_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative value is not a folder by the XDG spec (tools use `~/.cache`), and the home's
    own `~/.cache` is judged as the home already (the control: its token is a secret)."""
    home = tmp_path / "home"
    _cache(home / ".cache")
    for value in ("cache", "./cache", str(home / ".cache")):
        monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert _caches(home) == []
    assert is_secret(home / ".cache" / "huggingface" / "token", home)
    assert not is_secret(home / ".cache" / "pip" / "selfcheck.txt", home)


@needs_wall
@pytest.mark.parametrize("how", ["direct", "link-to-folder", "dotdot", "link-in-project"])
def test_a_confined_command_cannot_read_a_token_in_a_cache_folder_outside_the_home(
    server, project: Path, short: Path, outside_home: Path, monkeypatch: pytest.MonkeyPatch, how: str,
) -> None:
    home = short / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    cache = _cache(outside_home / "cache")
    (outside_home / "other").mkdir()
    link = outside_home / "cache-link"
    link.symlink_to(cache)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    named = {"direct": cache, "link-to-folder": link, "dotdot": outside_home / "other" / ".." / "cache", "link-in-project": project / "c"}[how]
    if how == "link-in-project":
        (project / "c").symlink_to(cache)
    script = f"cat {named}/pip/selfcheck.txt; cat {named}/huggingface/token; cat {named}/sometool/session.json; echo done"
    texts, _ = run(server, project, command(script))
    assert PIP in texts[0] and "done" in texts[0], texts[0]  # the control: the allow-listed cache is read
    assert TOKEN not in texts[0] and "sometool-session-xdg" not in texts[0], texts[0]


@needs_wall
def test_without_the_variable_the_same_folder_is_read_whole(server, project: Path, short: Path, outside_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control for the test above: the folder is not refused for where it is, but for what
    the variable says it is."""
    home = short / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    cache = _cache(outside_home / "cache")
    texts, _ = run(server, project, command(f"cat {cache}/sometool/session.json"))
    assert "sometool-session-xdg" in texts[0], texts[0]

