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


def test_a_signal_before_the_batch_starts_leaves_no_never_awaited_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Ctrl-C or SIGTERM that lands as `Runner.run` is entered, before it starts the batch, left the batch's
    coroutine never awaited; Python printed that warning after the resume command (a rare failure of
    tests/test_run_lifecycle.py's SIGTERM case under load)."""
    import gc
    import warnings

    from tomacs.config import compose
    from tomacs.job.components import build
    from tomacs.launch.spec import job_spec

    comps = build(job_spec(compose(["method=complete", "eval.size=2"])), need_train=False)
    ex = comps.executor
    ex.run_batch(comps.test_qs, comps.method, train=False, phase="eval")  # the loop exists now
    assert ex._loop is not None

    def interrupted(coro: object, **_: object) -> None:
        raise KeyboardInterrupt  # before the loop ever awaits `coro`

    monkeypatch.setattr(ex._loop, "run", interrupted)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            ex.run_batch(comps.test_qs, comps.method, train=False, phase="eval")
        gc.collect()
    assert not [w for w in seen if "never awaited" in str(w.message)], [str(w.message) for w in seen]
