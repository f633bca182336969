"""Expired sessions are deleted: by ``flask checkout sessions purge`` and by the dispatcher sweep."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from checkout.pacing import Schedule
from checkout.session_purge import maybe_purge, purge_expired_sessions
from checkout.state import get_state
from checkout.store.tables import sessions_table
from checkout.webhooks.dispatcher import get_dispatcher

from .conftest import make_app
from .support.waiting import wait_for


def _sessions(app, *expired_days_ago: float | None) -> list[str]:
    """One session per argument: expired that many days ago, or (None) still valid."""
    ids = []
    with app.app_context():
        state = get_state()
        for days in expired_days_ago:
            session = state.sessions.create("onramp")
            if days is not None:
                with state.engine.begin() as conn:
                    conn.execute(update(sessions_table)
                                 .where(sessions_table.c.id == session.id)
                                 .values(expires_at=datetime.now(UTC)
                                         - timedelta(days=days)))
            ids.append(session.id)
    return ids


def _remaining(app) -> set[str]:
    with app.app_context(), get_state().engine.connect() as conn:
        return set(conn.execute(select(sessions_table.c.id)).scalars())


def test_purge_deletes_only_expired_sessions(app):
    live, just_expired, old = _sessions(app, None, 0.001, 10)
    with app.app_context():
        assert purge_expired_sessions(get_state().engine) == 2
    assert _remaining(app) == {live}


def test_cli_purge_with_older_than_days(app):
    live, recent, old = _sessions(app, None, 2, 10)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["checkout", "sessions", "purge", "--older-than-days", "5"])
    assert result.exit_code == 0, result.output
    assert "deleted 1 expired session" in result.output
    assert _remaining(app) == {live, recent}
    result = runner.invoke(args=["checkout", "sessions", "purge"])
    assert result.exit_code == 0 and "deleted 1 expired session" in result.output
    assert _remaining(app) == {live}
    assert runner.invoke(args=["checkout", "sessions", "purge", "--older-than-days", "-1"]
                         ).exit_code != 0


def test_cli_purge_refuses_a_number_of_days_no_date_can_hold(app):
    """A million days back is before year 1: the purge says so in a usage line, not a
    traceback, and deletes nothing."""
    _sessions(app, 10)
    result = app.test_cli_runner().invoke(
        args=["checkout", "sessions", "purge", "--older-than-days", "1000000"])
    assert result.exit_code == 2 and "--older-than-days" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert len(_remaining(app)) == 1


def test_an_expired_session_page_stays_a_404_after_purge(app):
    (old,) = _sessions(app, 1)
    with app.app_context():
        purge_expired_sessions(get_state().engine)
    assert app.test_client().get(f"/checkout/s/{old}/").status_code == 404


def test_schedule_allows_one_purge_per_interval():
    now = [100.0]
    schedule = Schedule(clock=lambda: now[0])
    assert schedule.due(3600) is True
    assert schedule.due(3600) is False
    now[0] += 3599
    assert schedule.due(3600) is False
    now[0] += 2
    assert schedule.due(3600) is True
    assert Schedule().due(0) is False                  # 0 disables the opportunistic purge


def purge_of(app):
    """What the dispatcher's sweep does, as it calls it: the app's engine and schedule."""
    state = app.extensions["checkout"]
    return lambda: maybe_purge(state.engine, state.purge_schedule, interval=3600,
                               remember_days=365)


def test_maybe_purge_runs_at_most_once_per_interval(app):
    purge = purge_of(app)
    _sessions(app, 1)
    assert purge() == 1
    _sessions(app, 1)
    assert purge() is None                                 # not its turn: the row stays
    assert len(_remaining(app)) == 1


def test_maybe_purge_survives_a_database_failure(app, monkeypatch, caplog):
    with app.app_context():
        engine = get_state().engine

    def down():
        raise RuntimeError("database down")

    monkeypatch.setattr(engine, "begin", down)
    assert purge_of(app)() is None
    assert "purging expired checkout sessions failed" in caplog.text


def test_the_dispatcher_sweep_purges_expired_sessions(config):
    app = make_app({**config, "CHECKOUT_WEBHOOK_BACKGROUND": True,
                    "CHECKOUT_WEBHOOK_SWEEP_INTERVAL": 0.05})
    live, old = _sessions(app, None, 1)
    dispatcher = get_dispatcher(app)
    try:
        assert dispatcher.ensure_running()
        wait_for(lambda: old not in _remaining(app), 10)
    finally:
        dispatcher.stop()
    assert _remaining(app) == {live}


def test_the_module_imports_on_its_own():
    """A script that imports the purge first (``from checkout.session_purge import purge``): the
    dispatcher it reaches through the KYC memory and the webhooks package must not need it
    finished."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import checkout.session_purge"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
