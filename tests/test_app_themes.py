"""Themes: `/theme`'s picker, the choice kept in the user config, a bad name in it, and the colours
the app draws (transcript kinds, the diff, the verdicts) following the theme through app.tcss."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from rich.style import Style
from textual.app import App
from textual.color import Color

from mzagent_tui.agent.config import ConfigError, load_settings, save_user_setting, user_config_path
from mzagent_tui.agent.safety.approval_requests import CommandApproval, PartVerdict, WriteApproval
from mzagent_tui.app import MzAgentApp
from mzagent_tui.cli import main
from mzagent_tui.display.diff_view import DiffView
from mzagent_tui.screens.approval import ApprovalScreen, PartsTable
from mzagent_tui.screens.theme import ThemeScreen
from mzagent_tui.widgets.entries import Entry
from mzagent_tui.widgets.transcript import KEY_HINTS
from tests.scripted_server import Reply
from tests.test_app import SIZE, entries, make_app, state, submit, wait_for

KINDS = ("question", "thinking", "thought", "action", "observation", "final", "error", "notice")
TITLE_VARIABLE = {
    "question": "text-primary", "thought": "text-secondary", "action": "text-warning", "observation": "text-success",
    "final": "text-success", "error": "text-error", "notice": "text-warning",
}
"""The theme variable each kind's title is drawn in (app.tcss); thinking's is the muted text."""
READABLE_LIGHT_THEMES = ("catppuccin-latte", "solarized-light")
"""Light themes in which every kind's title and text reach 4.5:1 (WCAG AA for normal text)."""
ONE_OF_EACH = [
    Reply('<thought>Look at the notes first.</thought><action>read_file("notes.txt")</action>', reasoning="the user wants notes"),
    Reply("<thought>They say hello.</thought><final_answer>The notes say hello.</final_answer>"),
]


class Styled(App):
    CSS_PATH = Path(__file__).parents[1] / "mzagent_tui" / "app.tcss"


def saved_theme() -> str | None:
    path = user_config_path()
    return tomllib.loads(path.read_text()).get("theme") if path.is_file() else None


def relative_luminance(colour: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)


def contrast(one: Color, other: Color) -> float:
    """WCAG's contrast ratio, 1 to 21."""
    high, low = sorted((relative_luminance(one), relative_luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def drawn_colours(entry: Entry) -> tuple[Color, Color, Color]:
    """(background, title colour, text colour) as the entry is drawn: a muted (auto) colour is
    the contrasting text at its alpha, blended onto the background like the compositor does."""
    background = entry.colors[2]

    def shown(styles, inherited: Color) -> Color:  # noqa: ANN001 - Textual's styles of a widget or a component
        if styles.auto_color:
            return background + background.get_contrast_text(styles.color.a)
        return background + (styles.color if styles.has_rule("color") else inherited)

    text = shown(entry.styles, entry.colors[3])
    title_styles = entry.query_one(".entry--title").styles if entry.children else entry.get_component_styles("entry--title")
    return background, shown(title_styles, text), text


async def one_entry_of_each_kind(pilot, app: MzAgentApp, project: Path) -> dict[str, Entry]:  # noqa: ANN001
    (project / "notes.txt").write_text("hello\n")
    await submit(pilot, "read the notes")
    await wait_for(pilot, lambda: state(app) == "done")
    app.conversation.say("error", "something failed")
    app.conversation.say("notice", "something to know")
    await pilot.pause()
    first = {}
    for entry in entries(app):
        first.setdefault(entry.kind, entry)
    assert set(KINDS) <= set(first), f"missing kinds: {set(KINDS) - set(first)}"
    return first


# The picker and the saved choice ------------------------------------------------------------


async def test_theme_opens_the_picker_which_returns_and_saves_the_chosen_theme(server, project: Path) -> None:
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "textual-dark" and saved_theme() is None
        await submit(pilot, "/theme")
        await wait_for(pilot, lambda: isinstance(app.screen, ThemeScreen))
        await pilot.press("down")  # the list opens on the current theme; next in order is textual-light
        await pilot.pause()
        assert app.theme == "textual-light", "the highlighted theme shows at once"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, ThemeScreen))
        assert app.theme == "textual-light"
        assert saved_theme() == "textual-light"
    again = make_app(server, project, theme=load_settings(project).theme)
    async with again.run_test(size=SIZE):
        assert again.theme == "textual-light", "the next start has the saved theme"


async def test_the_picker_returns_the_name_and_esc_puts_the_theme_back() -> None:
    results: list[str | None] = []
    app = Styled()
    async with app.run_test(size=(100, 40)) as pilot:
        app.theme = "nord"
        app.push_screen(ThemeScreen(["dracula", "nord", "solarized-light"]), callback=results.append)
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()
        assert app.theme == "solarized-light"
        await pilot.press("escape")
        await pilot.pause()
        assert results == [None] and app.theme == "nord"
        app.push_screen(ThemeScreen(["dracula", "nord", "solarized-light"]), callback=results.append)
        await pilot.pause()
        await pilot.press("up", "enter")
        await pilot.pause()
        assert results == [None, "dracula"] and app.theme == "dracula"


async def test_the_palettes_theme_command_opens_the_same_picker(server, project: Path) -> None:
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        app.action_change_theme()
        await wait_for(pilot, lambda: isinstance(app.screen, ThemeScreen))
        await pilot.press("escape")
        await pilot.pause()
        assert app.theme == "textual-dark" and saved_theme() is None, "Esc changes and saves nothing"


async def test_theme_with_a_name_applies_and_saves_it_and_a_bad_name_is_refused(server, project: Path) -> None:
    user_config_path().parent.mkdir(parents=True)
    user_config_path().write_text('# my settings\nmax_steps = 12\n\n[approval]\nallow = ["pytest"]\n')
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/theme gruvbox")
        await wait_for(pilot, lambda: app.theme == "gruvbox")
        await submit(pilot, "/theme no-such-theme")
        await pilot.pause()
        assert app.theme == "gruvbox"
        assert any("No theme 'no-such-theme'" in str(n.message) for n in app._notifications)
    text = user_config_path().read_text()
    assert text.startswith("# my settings\n") and tomllib.loads(text) == {"max_steps": 12, "theme": "gruvbox", "approval": {"allow": ["pytest"]}}


async def test_a_config_that_cannot_be_saved_keeps_the_theme_for_the_session_and_says_so(server, project: Path) -> None:
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        user_config_path().parent.mkdir(parents=True)
        user_config_path().write_text("max_steps = [broken\n")  # edited by hand while the app runs
        await submit(pilot, "/theme nord")
        await wait_for(pilot, lambda: app.theme == "nord")
        assert any("Theme nord for this session only: cannot update" in str(n.message) for n in app._notifications)
    assert user_config_path().read_text() == "max_steps = [broken\n"


async def test_a_bad_theme_in_the_config_is_said_in_the_transcript_and_the_default_is_used(server, project: Path) -> None:
    user_config_path().parent.mkdir(parents=True)
    user_config_path().write_text('theme = "solarised-light"\n')
    app = make_app(server, project, theme=load_settings(project).theme, sources={"theme": str(user_config_path())})
    async with app.run_test(size=SIZE):
        assert app.theme == "textual-dark"
        [error] = entries(app, "error")
        assert "No theme 'solarised-light' (did you mean solarized-light?)" in error.plain and str(user_config_path()) in error.plain
    good = make_app(server, project, theme="nord")
    async with good.run_test(size=SIZE):
        assert good.theme == "nord" and not entries(good, "error")


def test_only_the_user_sets_the_theme_not_a_projects_env(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".env").write_text("MZAGENT_THEME=textual-light\n")
    settings = load_settings(project, cwd=project)
    assert settings.theme == "textual-dark" and any("MZAGENT_THEME" in entry for entry in settings.ignored)
    monkeypatch.setenv("MZAGENT_THEME", "nord")
    assert load_settings(project, cwd=project).theme == "nord"
    save_user_setting("theme", "dracula")
    monkeypatch.delenv("MZAGENT_THEME")
    assert load_settings(project, cwd=project).theme == "dracula"


def test_saving_a_theme_into_a_broken_config_is_an_error_that_keeps_the_file() -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True)
    path.write_text("theme = [unclosed\n")
    with pytest.raises(ConfigError, match="cannot update"):
        save_user_setting("theme", "nord")
    assert path.read_text() == "theme = [unclosed\n"


def test_mzagent_config_shows_the_theme_and_marks_an_unknown_one(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MZAGENT_THEME", "nord")
    assert main(["config", "--project", str(project), "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]) == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("theme ")]
    assert "nord" in row and "MZAGENT_THEME" in row and "unknown" not in row
    monkeypatch.setenv("MZAGENT_THEME", "nordd")
    main(["config", "--project", str(project), "--base-url", "http://127.0.0.1:9/v1", "--model", "m"])
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("theme ")]
    assert "nordd (unknown: the app uses textual-dark" in row


# Colours follow the theme ---------------------------------------------------------------------


async def test_every_transcript_kind_is_drawn_in_its_themes_variable(server, project: Path) -> None:
    server.script(*ONE_OF_EACH)
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        first = await one_entry_of_each_kind(pilot, app, project)
        before = {kind: drawn_colours(entry) for kind, entry in first.items()}
        for theme in ("textual-dark", "textual-light", "nord"):
            app.theme = theme
            await pilot.pause()
            for kind, variable in TITLE_VARIABLE.items():
                background, title, _ = drawn_colours(first[kind])
                assert title == background + Color.parse(app.theme_variables[variable]), (theme, kind)
        app.theme = "textual-light"
        await pilot.pause()
        for kind in KINDS:
            background, title, text = drawn_colours(first[kind])
            assert (background, title, text) != before[kind], f"{kind} kept textual-dark's colours"
            assert background == Color.parse(app.theme_variables["background"]), kind


@pytest.mark.parametrize("theme", READABLE_LIGHT_THEMES)
async def test_a_light_theme_keeps_every_kind_readable(server, project: Path, theme: str) -> None:
    server.script(*ONE_OF_EACH)
    app = make_app(server, project, theme=theme)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.current_theme.dark
        first = await one_entry_of_each_kind(pilot, app, project)
        for kind, entry in first.items():
            background, title, text = drawn_colours(entry)
            assert contrast(title, background) >= 4.5, (kind, "title", round(contrast(title, background), 2))
            assert contrast(text, background) >= 4.5, (kind, "text", round(contrast(text, background), 2))
        app.theme = "textual-light"  # a positive control: its orange action titles fall short
        await pilot.pause()
        background, title, _ = drawn_colours(first["action"])
        assert contrast(title, background) < 4.5


async def test_the_diff_is_drawn_in_the_themes_colours_and_again_when_it_changes() -> None:
    request = WriteApproval(cwd="/p", reason="r", path="calc.py", diff="--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n", content="a = 2\n")
    app = Styled()
    async with app.run_test(size=(100, 40)) as pilot:
        app.push_screen(ApprovalScreen(request))
        await pilot.pause()
        view = app.screen.query_one(DiffView)
        seen = {}
        for theme in ("textual-dark", "solarized-light"):
            app.theme = theme
            await pilot.pause()
            await pilot.pause()
            added = view.render_line(4)  # the "+a = 2" line
            mark = added._segments[0]
            success = Color.parse(app.theme_variables["text-success"])
            assert mark.text == "+" and Color.from_rich_color(mark.style.color) == view.colors[2] + success
            shade = Color.from_rich_color(mark.style.bgcolor)
            assert shade == view.colors[2] + Color.parse(app.theme_variables["success"]).with_alpha(0.2)
            hunk = view.render_line(2)._segments[0]
            assert Color.from_rich_color(hunk.style.color) == view.colors[2] + Color.parse(app.theme_variables["text-primary"])
            seen[theme] = (mark.style, shade)
        assert seen["textual-dark"] != seen["solarized-light"]


async def test_the_verdicts_are_drawn_in_the_themes_colours() -> None:
    parts = (PartVerdict("ls", "allow", "read-only"), PartVerdict("rm -rf build", "ask", "needs approval", ("deletes files",)), PartVerdict("curl x", "deny", "denied"))
    request = CommandApproval(cwd="/p", reason="r", command="ls && rm -rf build && curl x", parts=parts)
    app = Styled()
    async with app.run_test(size=(100, 40)) as pilot:
        app.push_screen(ApprovalScreen(request))
        await pilot.pause()
        table = app.screen.query_one(PartsTable)
        for theme in ("textual-dark", "catppuccin-latte"):
            app.theme = theme
            await pilot.pause()
            text = table.render()
            colours = {text.plain[span.start:span.end].strip(): Style.parse(str(span.style)).color for span in text.spans}
            for label, variable in (("✓ allowed", "text-success"), ("? asks", "text-warning"), ("✗ denied", "text-error"), ("⚠ deletes files", "text-error")):
                assert Color.from_rich_color(colours[label]) == Color.parse(app.theme_variables[variable]), (theme, label)
        assert table.content.plain == text.plain


# The welcome text's keys --------------------------------------------------------------------

ACTION_OF_KEY = {
    "ctrl+p": "command_palette", "ctrl+b": "toggle_tree", "ctrl+f": "find", "ctrl+z": "undo('last')",
    "ctrl+g": "background", "shift+tab": "cycle_mode", "esc": "cancel_run", "ctrl+q": "quit",
}


def test_the_welcome_texts_keys_are_the_apps_bindings() -> None:
    bound = {binding.key.replace("escape", "esc"): binding.action for binding in MzAgentApp.BINDINGS}
    bound["ctrl+p"] = "command_palette" if MzAgentApp.COMMAND_PALETTE_BINDING == "ctrl+p" else ""
    for key, _ in KEY_HINTS:
        first = key.split()[0]
        assert bound.get(first) == ACTION_OF_KEY[first], key
    assert ("esc esc", "rewind (task box empty)") in KEY_HINTS, "Esc Esc rewinds (tests/test_app_rewind.py)"
