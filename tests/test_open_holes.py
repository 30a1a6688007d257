"""docs/open-holes.md is the list of the strict xfails in the tests, as they are now."""

from __future__ import annotations

from pathlib import Path

from tests.open_holes import Hole, open_holes, render

INDEX = Path(__file__).parents[1] / "docs" / "open-holes.md"


def test_the_index_lists_every_open_hole() -> None:
    assert INDEX.read_text() == render(open_holes()), "regenerate it: python -m tests.open_holes > docs/open-holes.md"


def test_only_strict_xfails_are_holes(tmp_path: Path) -> None:
    (tmp_path / "test_walls.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.xfail(strict=True, reason='HOLE: a link\\n   gets through')\n"
        "def test_a(): ...\n\n"
        "@pytest.mark.xfail(reason='flaky, not a hole')\n"
        "def test_b(): ...\n\n"
        "@pytest.mark.xfail(strict=False, reason='not strict')\n"
        "def test_c(): ...\n\n"
        "@pytest.mark.skip(reason='no')\n"
        "def test_d(): ...\n"
    )
    (tmp_path / "helpers.py").write_text("import pytest\n@pytest.mark.xfail(strict=True, reason='not a test file')\ndef test_e(): ...\n")
    holes = open_holes(tmp_path)
    assert holes == [Hole("test_walls.py", "test_a", "HOLE: a link gets through")]
    assert "## tests/test_walls.py\n\n- `test_a`: HOLE: a link gets through\n" in render(holes) and "1 open." in render(holes)


def test_holes_are_found_in_the_folders_of_the_walls_too(tmp_path: Path) -> None:
    (tmp_path / "sandbox").mkdir()
    (tmp_path / "sandbox" / "__init__.py").write_text("")
    (tmp_path / "sandbox" / "test_sockets.py").write_text("import pytest\n\n@pytest.mark.xfail(strict=True, reason='HOLE: a socket')\ndef test_s(): ...\n")
    (tmp_path / "test_top.py").write_text("import pytest\n\n@pytest.mark.xfail(strict=True, reason='HOLE: at the top')\ndef test_t(): ...\n")
    holes = open_holes(tmp_path)
    assert holes == [Hole("sandbox/test_sockets.py", "test_s", "HOLE: a socket"), Hole("test_top.py", "test_t", "HOLE: at the top")]
    assert "## tests/sandbox/test_sockets.py\n\n- `test_s`: HOLE: a socket\n" in render(holes)
