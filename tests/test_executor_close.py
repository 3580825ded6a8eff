"""Closing an executor's event loop after a run: what a third-party task does as it is cancelled must not
print a traceback after the run's own one-line error (tests/test_llm_run.py's permanent-error case)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tomacs.execution.executor import _close_runner


def test_a_task_failing_on_cancel_at_close_prints_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    runner = asyncio.Runner()
    loop = runner.get_loop()

    async def stubborn() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:  # as a client library's wait_for can, once its inner call failed
            raise RuntimeError("cannot reuse already awaited coroutine") from None

    task = loop.create_task(stubborn())
    loop.run_until_complete(asyncio.sleep(0))  # the task starts and waits
    with caplog.at_level(logging.DEBUG, logger="asyncio"):
        _close_runner(runner)
    assert loop.is_closed() and task.done()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    # it is still said, on one line, for whoever turns the asyncio logger's debug level on
    assert any("cannot reuse already awaited coroutine" in r.getMessage() for r in caplog.records)
