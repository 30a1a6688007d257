"""The project's file tree: gitignore-aware, noise hidden, big folders capped, agent changes marked."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual.widgets import DirectoryTree
from textual.widgets._directory_tree import DirEntry
from textual.widgets._tree import TreeNode

from mzagent_tui.agent.filelist import SKIP_DIRS, load_gitignore

MAX_ENTRIES_PER_FOLDER = 500


class ProjectTree(DirectoryTree):
    """`filter_paths` runs on a background thread: it touches only the file system, never the DOM."""

    def __init__(self, root: Path, **kwargs: object) -> None:
        super().__init__(root, **kwargs)  # type: ignore[arg-type]
        self.root_path = root
        self.changed: set[Path] = set()
        self.more_markers: set[Path] = set()
        """Placeholder entries that say how many entries of a big folder are not listed."""
        self._ignore = load_gitignore(root)

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        """The first MAX_ENTRIES_PER_FOLDER entries by name, then a marker counting the rest.

        The names come from one `os.listdir` (C speed, the GIL released) rather than from the
        Path objects offered, so a 100,000-entry folder never stalls the UI thread.
        """
        first = next(iter(paths), None)
        if first is None:
            return []
        folder = first.parent
        try:
            names = sorted(os.listdir(folder), key=str.lower)
        except OSError:
            return []
        kept: list[Path] = []
        hidden = 0
        for index, name in enumerate(names):
            if len(kept) >= MAX_ENTRIES_PER_FOLDER:
                hidden = len(names) - index
                break
            if name in SKIP_DIRS:
                continue
            path = folder / name
            if self._ignore is not None:
                try:
                    rel = path.relative_to(self.root_path).as_posix()
                except ValueError:
                    rel = path.name
                if self._ignore.match_file(rel + ("/" if path.is_dir() else "")):
                    continue
            kept.append(path)
        if hidden:
            marker = folder / f"… {hidden:,} more entries not listed"
            self.more_markers.add(marker)
            kept.append(marker)
        return kept

    def render_label(self, node: TreeNode[DirEntry], base_style: Style, style: Style) -> Text:
        if node.data is not None and node.data.path in self.more_markers:
            return Text(node.data.path.name, style="dim italic")
        label = super().render_label(node, base_style, style)
        if node.data is not None and node.data.path in self.changed:
            label.append(" ●", style="bold")
        return label

    def mark_changed(self, *paths: Path) -> None:
        """Mark files the agent wrote and reload the folder that holds them (the tree if several)."""
        self.changed.update(paths)
        folders = {path.parent for path in paths}
        if len(folders) == 1:
            self.refresh_folder(folders.pop())
        elif folders:
            self.reload()

    def refresh_folder(self, folder: Path) -> None:
        node = self._find_node(folder)
        if node is not None:
            self.reload_node(node)
        else:
            self.reload()

    def _find_node(self, folder: Path) -> TreeNode[DirEntry] | None:
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.data is not None and node.data.path == folder:
                return node
            stack.extend(node.children)
        return None

