"""The front's header handling: X-Forwarded-For is kept whole and extended, as proxies do."""

from __future__ import annotations

import pytest

from dataclean_env.server.front import BadRequest, _head, _parse_head, forward_for


def test_repeated_forwarded_for_headers_are_joined_in_order() -> None:
    first, headers = _parse_head(
        b"GET /state HTTP/1.1\r\nX-Forwarded-For: 198.51.100.7\r\nHost: x\r\n"
        b"x-forwarded-for: 10.0.0.2, 10.0.0.3"
    )
    assert first == b"GET /state HTTP/1.1"
    assert headers == {b"x-forwarded-for": b"198.51.100.7, 10.0.0.2, 10.0.0.3", b"host": b"x"}


def test_the_front_appends_its_peer() -> None:
    _, headers = _parse_head(b"GET / HTTP/1.1\r\nhost: x\r\nx-forwarded-for: 198.51.100.7")
    forward_for(headers, b"127.0.0.1")
    assert headers[b"x-forwarded-for"] == b"198.51.100.7, 127.0.0.1"
    _, fresh = _parse_head(b"GET / HTTP/1.1\r\nhost: x")
    forward_for(fresh, b"127.0.0.1")
    assert _head(b"GET / HTTP/1.1", fresh) == (
        b"GET / HTTP/1.1\r\nhost: x\r\nx-forwarded-for: 127.0.0.1\r\n\r\n"
    )


def test_a_header_without_colon_is_a_bad_request() -> None:
    with pytest.raises(BadRequest):
        _parse_head(b"GET / HTTP/1.1\r\nno-colon-here")
