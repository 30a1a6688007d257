"""Full garbage collections paced by the app: never while the user types, unless input never
pauses; CPython's own thresholds and collectable objects back when the app ends."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mzagent_tui.app import MzAgentApp
from mzagent_tui.collection_pacing import FORCED_FACTOR, IDLE_SECONDS, CollectionPacer
from mzagent_tui.widgets.task_input import TaskInput
from tests.conftest import config_for
from tests.test_app import SIZE, wait_for

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 14), reason="the collector is incremental from Python 3.14; the pacer stands aside")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


CPYTHON_WAIT = gc.get_threshold()[2]
"""Generation-1 collections CPython waits for before a full one (10 by default)."""


@pytest.fixture
def pacer() -> Iterator[tuple[CollectionPacer, Clock]]:
    clock = Clock()
    pacer = CollectionPacer(clock)
    pacer.start()
    try:
        yield pacer, clock
    finally:
        pacer.stop()


def young_collections(count: int) -> None:
    """`count` generation-1 collections: each adds one to what generation 2 has pending."""
    for _ in range(count):
        gc.collect(1)


def test_start_freezes_start_up_and_takes_generation_2_over_and_stop_gives_both_back() -> None:
    before = gc.get_threshold()
    pacer = CollectionPacer()
    pacer.start()
    try:
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] > 10**6
        young_collections(CPYTHON_WAIT + 1)
        assert gc.get_count()[2] > CPYTHON_WAIT, "CPython ran no full collection of its own"
    finally:
        pacer.stop()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_due_collection_waits_for_a_pause_in_the_input(pacer: tuple[CollectionPacer, Clock]) -> None:
    pacer_, clock = pacer
    gc.collect()
    young_collections(CPYTHON_WAIT - 1)
    clock.now += IDLE_SECONDS
    assert not pacer_.tick(), "not due yet"
    young_collections(1)
    pacer_.input_seen()
    clock.now += IDLE_SECONDS / 2
    assert not pacer_.tick(), "due, but a key came half a second ago"
    clock.now += IDLE_SECONDS / 2
    assert pacer_.tick()
    assert pacer_.collections == 1 and gc.get_count()[2] == 0


def test_input_that_never_pauses_still_gets_a_collection_when_far_overdue(pacer: tuple[CollectionPacer, Clock]) -> None:
    pacer_, _clock = pacer
    gc.collect()
    young_collections(CPYTHON_WAIT * FORCED_FACTOR - 1)
    pacer_.input_seen()
    assert not pacer_.tick()
    young_collections(1)
    pacer_.input_seen()
    assert pacer_.tick()
    assert gc.get_count()[2] == 0


class Node:
    def __init__(self) -> None:
        self.me = self


def test_cycles_that_reached_generation_2_are_freed_by_the_pacer_alone(pacer: tuple[CollectionPacer, Clock]) -> None:
    pacer_, clock = pacer
    kept = [Node() for _ in range(50)]
    young_collections(2)  # survived: now in generation 2
    kept.clear()  # unreachable cycles, out of the young generations' reach
    young_collections(CPYTHON_WAIT * 3)
    assert sum(isinstance(o, Node) for o in gc.get_objects()) == 50
    clock.now += IDLE_SECONDS
    assert pacer_.tick()
    assert sum(isinstance(o, Node) for o in gc.get_objects()) == 0


async def test_the_app_paces_while_it_runs_and_hands_back_when_it_ends(server, project: Path) -> None:  # noqa: ANN001
    """A key marks input (no collection right after it); CPython's thresholds are back after."""
    before = gc.get_threshold()
    clock = Clock()
    pacer = CollectionPacer(clock)
    app = MzAgentApp(config_for(server, project), collections=pacer)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: pacer.active)
        assert gc.get_threshold()[2] > 10**6
        box = app.query_one(TaskInput)
        box.focus()
        clock.now += 60
        await pilot.press("a")
        assert box.value == "a"
        gc.collect()
        young_collections(CPYTHON_WAIT)
        assert not pacer.tick(), "a key just came"
        clock.now += IDLE_SECONDS
        assert pacer.tick()
    assert not pacer.active
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
