"""Snapshot tests of the main screens (SVGs under tests/__snapshots__/, update with --snapshot-update)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from textual.theme import BUILTIN_THEMES

from tests import scenarios
from tests.scripted_server import ScriptedServer

SIZE = (120, 40)


@pytest.fixture
def demo_server() -> Iterator[ScriptedServer]:
    scenarios.make_demo_project()
    with ScriptedServer(scenarios.full_run_script()) as server:
        yield server


def test_main_screen_idle(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server), terminal_size=SIZE, run_before=scenarios.tree_loaded)


def test_finished_run_with_every_entry_kind(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server), terminal_size=SIZE, run_before=scenarios.full_run)


@pytest.mark.parametrize("theme", sorted(set(BUILTIN_THEMES) - {"textual-dark"}))
def test_finished_run_in_each_theme(snap_compare, demo_server: ScriptedServer, theme: str) -> None:
    """The main screen with every entry kind in each of Textual's themes (textual-dark is the test above)."""
    assert snap_compare(scenarios.demo_app(demo_server, theme=theme), terminal_size=SIZE, run_before=scenarios.full_run)


def test_theme_picker_shows_the_highlighted_theme_behind_it(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server), terminal_size=SIZE, run_before=scenarios.theme_picker)


def test_approval_dialog(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server), terminal_size=SIZE, run_before=scenarios.to_approval)


def test_file_preview(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server), terminal_size=SIZE, run_before=scenarios.preview)


def test_undo_notice_and_find_bar(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server), terminal_size=SIZE, run_before=scenarios.undo_and_find)


def test_write_dialog_with_its_diff(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server, writes="ask"), terminal_size=SIZE, run_before=scenarios.to_approval)


def test_diff_entry(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server), terminal_size=SIZE, run_before=scenarios.diff_entry)


def test_completion_list(snap_compare, demo_server: ScriptedServer) -> None:
    assert snap_compare(scenarios.demo_app(demo_server), terminal_size=SIZE, run_before=scenarios.completion_list)


def test_plan_dialog(snap_compare) -> None:
    scenarios.make_demo_project()
    with ScriptedServer(scenarios.plan_script()) as server:
        assert snap_compare(scenarios.demo_app(server, mode="plan"), terminal_size=SIZE, run_before=scenarios.plan_dialog)
