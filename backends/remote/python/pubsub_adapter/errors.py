"""Errors an adapter raises; each maps 1:1 to a sentinel of backends/backend.go
(the wire code is ``code``; backends.Code on the Go side gives the same
strings)."""

from __future__ import annotations


class PubSubError(Exception):
    """Base of the contract's errors. ``code`` is the wire code."""

    code = "internal"


class Timeout(PubSubError):
    """backends.ErrTimeout: the call's deadline passed."""

    code = "timeout"


class Canceled(PubSubError):
    """context.Canceled: the harness gave up on the call."""

    code = "canceled"


class InvalidTopic(PubSubError):
    """backends.ErrInvalidTopic."""

    code = "invalid_topic"


class Closed(PubSubError):
    """backends.ErrClosed: the producer/consumer/backend was closed."""

    code = "closed"


class UnknownDelivery(PubSubError):
    """backends.ErrUnknownDelivery: ack/nack of an id this consumer never handed out."""

    code = "unknown_delivery"


class AuthError(PubSubError):
    """backends.ErrAuth: the broker refused the credentials."""

    code = "auth"


class Unavailable(PubSubError):
    """backends.ErrUnavailable: the broker cannot be reached."""

    code = "unavailable"


class UnknownBackend(PubSubError):
    """backends.ErrUnknownBackend."""

    code = "unknown_backend"


class InvalidConfig(PubSubError):
    """backends.ErrInvalidConfig: settings the backend cannot use."""

    code = "invalid_config"


class Internal(PubSubError):
    """Anything that is none of the above."""

    code = "internal"


BY_CODE = {
    c.code: c
    for c in (Timeout, Canceled, InvalidTopic, Closed, UnknownDelivery, AuthError,
              Unavailable, UnknownBackend, InvalidConfig, Internal)
}
