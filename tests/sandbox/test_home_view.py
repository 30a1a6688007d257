"""What a confined command sees of the home: hidden dot-folders (and chains of links) that lead out
of the home stay hidden, toolchain folders it may read are not writable, the blank over a hidden
folder cannot be unmounted, and a project inside the app's own state folders reaches none of its
neighbours. (Rounds six and seven of the outside attacks.)
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.attack_helpers import Listener, command, needs_namespaces, needs_wall, run

# A hidden dot-folder of the home that is a link out of the home -----------------------------


@needs_namespaces
@pytest.mark.parametrize("entry", [".config", ".local"])
def test_a_hidden_dot_folder_that_is_a_link_out_of_the_home_stays_hidden(server, project: Path, home: Path, outside_home: Path, entry: str) -> None:
    target = outside_home / entry.strip(".")
    (target / "someapp").mkdir(parents=True)
    (target / "someapp" / "token").write_text("dot-folder-token-r6-77ee\n")
    (home / entry).symlink_to(target)
    (outside_home / "plain").mkdir()
    (outside_home / "plain" / "readme.txt").write_text("plain folder r6\n")
    texts, _ = run(server, project, command(f"cat {outside_home}/plain/readme.txt; cat ~/{entry}/someapp/token | rev"))
    assert "plain folder r6" in texts[0], texts[0]  # the folder beside it is read as any folder outside the home
    assert "ee77-6r-nekot-redlof-tod" not in texts[0], texts[0]


@needs_namespaces
def test_a_secret_dot_folder_that_is_a_link_out_of_the_home_stays_hidden(server, project: Path, short: Path, outside_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Held: the secret entries are left out by their real path."""
    home = short / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (outside_home / "ssh").mkdir()
    (outside_home / "ssh" / "id_ed25519").write_text("linked private key r6\n")
    (home / ".ssh").symlink_to(outside_home / "ssh")
    texts, _ = run(server, project, command("cat ~/.ssh/id_ed25519 | rev; echo ran"))
    assert "ran" in texts[0] and "6r yek etavirp deknil" not in texts[0], texts[0]


# A project at the home writes into the toolchain folders the sandbox only lets it read -------


@needs_wall
@pytest.mark.parametrize("entry", [".cargo/bin/cargo", ".nvm/nvm.sh", ".pyenv/shims/python", ".local/bin/pip"])
def test_a_project_at_the_home_cannot_plant_into_allowed_toolchain_folders(server, home: Path, entry: str) -> None:
    target = home / entry
    target.parent.mkdir(parents=True)
    target.write_text("#!/bin/sh\necho original\n")
    texts, _ = run(server, home, command(f"echo 'touch /tmp/pwned-r6' >> ~/{entry}; echo x >> ~/.bashrc; echo ran"))
    assert "ran" in texts[0] and "Permission denied" in texts[0], texts[0]  # .bashrc refused: the wall is up
    assert target.read_text() == "#!/bin/sh\necho original\n"


# Taking the mount view apart from inside ------------------------------------------------------


@needs_namespaces
def test_a_command_cannot_unmount_the_blank_over_a_hidden_folder_to_reach_its_socket(server, project: Path, home: Path) -> None:
    """The view is the only wall before a Unix socket in a hidden dot-folder (Landlock does not
    govern connect()): ~/.gnupg/S.gpg-agent signs with the user's key. The blank is mounted by the
    command's own user namespace (where a command run by root keeps its capabilities), so only
    Landlock's refusal of mount changes keeps it in place; a nested namespace finds it locked."""
    (home / ".gnupg").mkdir(mode=0o700)
    path = home / ".gnupg" / "S.gpg-agent"
    listener = Listener(socket.AF_UNIX, str(path))
    connect = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); s.send(b'attack'); print('CONNECTED')"
    script = (
        f"umount -l {home}/.gnupg; umount {home}/.gnupg; "
        f"python3 -c \"{connect}\"; "
        f"unshare -Urm sh -c 'umount -l {home}/.gnupg; mount --bind / /mnt; python3 -c \"{connect}\"'; "
        "grep -c gnupg /proc/self/mountinfo; echo ran"
    )
    texts, _ = run(server, project, command(script))
    assert listener.close() == [] and "CONNECTED" not in texts[0], texts[0]
    assert "ran" in texts[0], texts[0]


# A folder the program needs, seen whole, as a way to its neighbours ---------------------------


@needs_namespaces
def test_a_project_under_the_apps_own_state_folders_neighbours_reaches_none_of_them(server, short: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Held: a project kept at ~/.local/src/app is seen whole, its dot-folder split around it, and
    mzagent's own state (sessions, snapshots.git) sits in the same ~/.local at its default place.
    A link planted in the project, a `..` path, a hard link and git pointed at the snapshots repository
    reach none of the neighbours."""
    home = short / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    from mzagent_tui.agent.ground import leftovers

    monkeypatch.setattr(leftovers, "_journal", None)  # the journal of temp files follows the state folder
    project = home / ".local" / "src" / "app"
    project.mkdir(parents=True)
    (project / "main.py").write_text("print('app r6')\n")
    (home / ".local" / "src" / "other").mkdir()
    (home / ".local" / "src" / "other" / "secret.txt").write_text("NEIGHBOUR SECRET r6\n")
    (home / ".local" / "src" / "app-secrets").mkdir()
    (home / ".local" / "src" / "app-secrets" / "token").write_text("PREFIX NEIGHBOUR r6\n")
    first, _ = run(server, project, command("echo first > f.txt"))  # a session, its log and snapshots.git exist now
    state = home / ".local" / "state" / "mzagent"
    logs = list(state.glob("sessions/*/*/log.jsonl"))
    assert logs and list(state.glob("sessions/*/snapshots.git")), list(state.rglob("*"))[:20]
    script = "; ".join([
        "cat main.py",
        "ln -s ../other o && cat o/secret.txt | rev",
        "cat ../other/secret.txt ../app-secrets/token | rev",
        f"cat {project}/../app-secrets/token | rev",
        "ln ../other/secret.txt hard; cat hard | rev",
        f"ln -s {state} st && cat st/sessions/*/*/log.jsonl | head -c 300 | rev",
        f"git --git-dir {state}/sessions/*/snapshots.git log --all --oneline",
        f"cat {logs[0]} | head -c 300 | rev",
        "cat /proc/self/root" + str(home) + "/.local/src/other/secret.txt | rev",
        "echo ran",
    ])
    texts, _ = run(server, project, command(script))
    assert "app r6" in texts[0] and "ran" in texts[0], texts[0]
    assert "6r TERCES RUOBHGIEN" not in texts[0] and "6r RUOBHGIEN XIFERP" not in texts[0], texts[0]
    assert '"dnik"' not in texts[0] and "first" not in texts[0].replace("echo first", ""), texts[0]


# Hidden dot-entries of the home that are links ----------------------------------------------------


@needs_namespaces
def test_a_hidden_link_chain_and_a_relative_link_out_of_the_home_stay_hidden(server, project: Path, short: Path, outside_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = short / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (outside_home / "c").mkdir()
    (outside_home / "c" / "token").write_text("chained-token-r7\n")
    (outside_home / "b").symlink_to(outside_home / "c")
    (home / ".a").symlink_to(outside_home / "b")
    (outside_home / "d").mkdir()
    (outside_home / "d" / "token").write_text("relative-token-r7\n")
    (home / ".r").symlink_to(os.path.relpath(outside_home / "d", home))
    (outside_home / "plain").mkdir()
    (outside_home / "plain" / "readme.txt").write_text("plain folder r7\n")
    script = f"cat {outside_home}/plain/readme.txt; cat ~/.a/token {outside_home}/b/token {outside_home}/c/token ~/.r/token {outside_home}/d/token | rev; echo ran"
    texts, _ = run(server, project, command(script))
    assert "plain folder r7" in texts[0] and "ran" in texts[0], texts[0]
    assert "7r-nekot-deniahc" not in texts[0] and "7r-nekot-evitaler" not in texts[0], texts[0]
