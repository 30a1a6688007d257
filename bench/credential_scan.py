"""How fast the credential scan reads 1 MB, and how often it fires on ordinary files.

    python bench/credential_scan.py [FOLDER ...]

Speed: 1 MB of this repository's source, scanned whole (a command's output or a file read is
at most that). False positives: every text file under each FOLDER (default: this repository
and the site-packages of the running Python), counted as files with a find, with the kinds."""

from __future__ import annotations

import argparse
import collections
import site
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mzagent_tui.agent.safety.credentials import find_credentials  # noqa: E402

MAX_FILE = 1_000_000


def texts(folder: Path):
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink() or "/.git/" in path.as_posix():
            continue
        try:
            data = path.read_bytes()[:MAX_FILE]
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        yield path, data.decode("utf-8", errors="replace")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--show", type=int, default=10, help="finds to print per folder")
    args = parser.parse_args()
    source = "".join(p.read_text() for p in sorted((ROOT / "mzagent_tui").rglob("*.py")))
    megabyte = (source * (1_000_000 // len(source) + 1))[:1_000_000]
    started = time.perf_counter()
    find_credentials(megabyte)
    print(f"1 MB of source: {(time.perf_counter() - started) * 1000:.0f} ms")
    for folder in args.folders or [ROOT, Path(site.getsitepackages()[0])]:
        files = hits = 0
        kinds: collections.Counter[str] = collections.Counter()
        shown = []
        for path, text in texts(folder):
            files += 1
            found = find_credentials(text)
            if found:
                hits += 1
                kinds.update(c.kind for c in found)
                if len(shown) < args.show:
                    first = found[0]
                    shown.append(f"  {path.relative_to(folder)}:{first.line} {first.kind}: {text[first.start:first.end][:60]!r}")
        print(f"{folder}: {hits} of {files} text files with a find ({100 * hits / max(files, 1):.2f}%) {dict(kinds.most_common())}")
        print("\n".join(shown))


if __name__ == "__main__":
    main()
