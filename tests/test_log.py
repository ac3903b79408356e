"""agui._log: the SDK's stdlib logger and the enable_debug switch."""

from __future__ import annotations

import io
import logging

import pytest

from agui import _log as log


@pytest.fixture(autouse=True)
def _reset():
    yield
    log.disable_debug()


def test_the_sdk_logger_is_named_agui_and_silent_by_default():
    assert log.logger is logging.getLogger("agui")
    assert any(isinstance(h, logging.NullHandler) for h in log.logger.handlers)
    assert log.logger.level == logging.NOTSET


def test_get_logger_returns_children_of_agui():
    assert log.get_logger() is log.logger
    assert log.get_logger("wire").name == "agui.wire"
    assert log.get_logger("agui.client.session").name == "agui.client.session"
    assert log.get_logger("agui.client.session").parent is log.logger


def test_enable_debug_writes_child_logger_records_to_the_stream():
    out = io.StringIO()
    log.enable_debug(out)
    logging.getLogger("agui.client.session").debug("run %s started", "run-1")
    assert "DEBUG" in out.getvalue() and "agui.client.session: run run-1 started" in out.getvalue()


def test_enable_debug_twice_does_not_duplicate_lines():
    first, second = io.StringIO(), io.StringIO()
    log.enable_debug(first)
    log.enable_debug(second)
    log.logger.info("once")
    assert first.getvalue() == ""
    assert second.getvalue().count("once") == 1


def test_enable_debug_level_filters_and_disable_debug_removes_the_handler():
    out = io.StringIO()
    handler = log.enable_debug(out, level=logging.WARNING)
    log.logger.info("quiet")
    log.logger.warning("loud")
    assert "quiet" not in out.getvalue() and "loud" in out.getvalue()
    log.disable_debug()
    assert handler not in log.logger.handlers
    assert log.logger.level == logging.NOTSET


def test_enable_debug_defaults_to_stderr(capsys):
    log.enable_debug()
    log.logger.debug("to stderr")
    assert "to stderr" in capsys.readouterr().err
