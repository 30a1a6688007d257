#!/usr/bin/env bash
# The newcomer's path: a fresh clone, a fresh venv, an empty pip cache, the README's first
# command's install, then the bundled model assembled and loaded (start_local) — timed by phase.
set -euo pipefail
d=$(mktemp -d)
export PIP_CACHE_DIR="$d/pip-cache" XDG_CACHE_HOME="$d/cache" XDG_CONFIG_HOME="$d/config" XDG_STATE_HOME="$d/state"
t0=$(date +%s.%N)
git clone -q "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)" "$d/p"
cd "$d/p"
python3 -m venv .venv
t1=$(date +%s.%N)
.venv/bin/pip install -q -e ".[local]"
t2=$(date +%s.%N)
.venv/bin/python -c "
from mzagent_tui.agent.model.local import start_local
server = start_local()
print('ready:', server.describe())
server.stop()
"
t3=$(date +%s.%N)
python3 -c "
t0,t1,t2,t3 = $t0,$t1,$t2,$t3
print(f'clone+venv {t1-t0:.0f} s, install {t2-t1:.0f} s, model assembled and loaded {t3-t2:.0f} s, total {t3-t0:.0f} s')
"
rm -rf "$d"
