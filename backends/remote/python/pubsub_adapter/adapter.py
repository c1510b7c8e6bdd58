"""The author-facing interface of the pub/sub adapter SDK.

An adapter is a child process the harness starts; it serves the protocol of
proto/pubsub/v1/adapter.proto. With this SDK an author writes ONE class, a
``Backend``, plus its ``Producer`` and ``Consumer``, and a ``main`` that calls
``pubsub_adapter.serve(factory, name=..., version=...)``. The SDK does the rest:
the gRPC server, the handshake, deadlines, error codes, the transcript.

This file is the contract of backends/backend.go (read it: every doc comment
there applies here) in Python terms. Everything below is plain data in, plain
data out.

Sync or async
-------------
Every method below may be written either as a plain ``def`` or as an
``async def``; the SDK inspects each method and

* awaits ``async def`` methods on the server's asyncio event loop, cancelling
  the coroutine (``asyncio.CancelledError``) when the harness's deadline passes;
* runs plain ``def`` methods in a worker thread (one per call in flight, so a
  blocking ``receive`` never blocks an ``ack`` or another consumer). A thread
  cannot be cancelled: when the deadline passes the SDK answers the harness
  with a timeout and abandons the thread, whose eventual result is dropped.
  So a sync method must itself honour ``timeout`` (pass it to the client
  library's poll / receive / flush).

Mixing is allowed (an async Backend may hand out sync Consumers).

Threads invite deadlocks with clients that are not thread-safe: ``receive``,
``ack`` and ``send`` of one Backend may run at the same time, each in its own
thread. confluent-kafka's ``Consumer.commit()`` blocks while another thread is
in ``poll()`` on the same consumer, so an ``ack`` that commits while
``receive`` polls waits out the poll. Serialise the calls on one client (a lock,
with a short poll), or give each client one owning thread fed by a queue, or
use the library's asyncio client with ``async def`` methods (one event loop,
no threads). See docs/adapter-authors.md.

Deadlines
---------
Every call gets ``timeout``: the seconds left before the harness's deadline
for that call, less a margin (10 %, at most 50 ms) for the answer to reach
the harness in time (always > 0). A method still running at the deadline is
named on stderr with the stack it was at (the abandoned thread's, or the
coroutine's before it is cancelled).
A method must return or raise ``Timeout`` within it. The harness enforces the
deadline on its side too: a method that overruns it is a failed spec, never a
hung run. Starting: the process must listen and answer the handshake within
30 s (remote.StartTimeout). Open (the factory) runs in a spec's setup bounded by
30 s, which includes the process start on a process's first Open: connect, and
raise ``Unavailable`` / ``AuthError`` rather than retrying.

Settings
--------
``Config.settings`` (and the environment) use TrustGraph's names:
``KAFKA_BOOTSTRAP_SERVERS``, ``KAFKA_SECURITY_PROTOCOL``, ``KAFKA_SASL_*``,
``PULSAR_HOST``, ``PULSAR_ADMIN_URL``, ``PULSAR_API_KEY``, plus the user's
``KAFKA_*`` / ``PULSAR_*`` (``KAFKA_CONFIG_<KEY>`` is a librdkafka property,
``_`` read as ``.``, lowercased). The auth settings are empty strings in every
spec but S1 (the run's broker has a plain listener): treat empty as unset. Topic
naming on the brokers, running an adapter and a broker by hand:
docs/adapter-authors.md.

Errors
------
Raise the exceptions in ``pubsub_adapter.errors`` (``Timeout``,
``InvalidTopic``, ``Closed``, ``UnknownDelivery``, ``AuthError``,
``Unavailable``, ``UnknownBackend``, ``InvalidConfig``, ``Canceled``): each
maps 1:1 to a sentinel error of backends/backend.go (``errors.Is`` works on the
Go side). Any other exception is reported as code ``internal`` with its type,
message and the last frame of its traceback. Never swallow an error of the
system under test: it is the result.

Topics
------
Topic strings are the contract's ``"class:topicspace:topic"`` (or a bare
``"topic"`` meaning ``flow:tg:topic``); ``pubsub_adapter.topics.parse_topic``
parses and validates them exactly like backends.ParseTopic and raises
``InvalidTopic``. Whether to validate is the adapter's choice: an adapter for
someone's backend passes the string through unchanged, so that a backend
accepting a bad topic shows up as a failed spec.

Lifecycle
---------
* The harness calls ``factory(config)`` once per ``backends.Open`` (one per
  spec, sometimes more). Several Backends live in one adapter process at once
  and must not share state except what the broker shares (the in-memory
  reference port shares its in-process broker, like backends/memory).
* Producers and Consumers are closed by the harness before their Backend;
  ``Backend.close`` must close anything still open. All ``close`` methods are
  idempotent.
* ``Backend.kill`` (optional) is for in-process reference backends only: drop
  the connection like a crashed process would, without any close (R5). So is
  ``serve(..., restart=...)``: restart the process's in-process broker (R4).
* The process is killed (SIGKILL) when the harness is done with it or dies:
  never rely on a graceful shutdown for correctness.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping, Optional, Union

__all__ = [
    "Backend",
    "Config",
    "Consumer",
    "Delivery",
    "Factory",
    "Mode",
    "Position",
    "Producer",
    "CAP_TRANSIENT_REDELIVERY",
    "CAP_TRANSIENT_REPLAY",
    "CAP_RETENTION_EXPIRY",
    "CAP_BINARY_PAYLOADS",
    "CAP_RETENTION_READ_BACK",
    "CAP_MODE_OVERRIDE",
    "CAP_LOAD_SHARING",
    "CAP_TLS",
]

# Capabilities a backend may declare it lacks (backends.Capability).
CAP_TRANSIENT_REDELIVERY = "transient-redelivery"
CAP_TRANSIENT_REPLAY = "transient-replay"
CAP_RETENTION_EXPIRY = "retention-expiry"
CAP_BINARY_PAYLOADS = "binary-payloads"          # payloads that are not UTF-8 arrive intact
CAP_RETENTION_READ_BACK = "retention-read-back"  # Backend.retention reads the broker's value
CAP_MODE_OVERRIDE = "mode-override"              # the mode argument overrides the class's
CAP_LOAD_SHARING = "load-sharing"                # competing consumers share a subscription's messages
CAP_TLS = "tls"                                  # TLS to the broker, verified against a CA the settings name


class Position(enum.Enum):
    """Where a NEW subscription starts (backends.Position). An existing
    subscription always resumes from its own position."""

    LATEST = "latest"
    EARLIEST = "earliest"


class Mode(enum.Enum):
    """How consumers of one subscription name share messages (backends.Mode).

    DEFAULT means "the mode of the topic's class": flow and request are
    SHARED, response and notify are UNIQUE (see
    ``pubsub_adapter.topics.default_mode``). The harness passes what the spec
    asked for, unresolved, so the adapter maps it the way its backend does.
    """

    DEFAULT = "default"
    SHARED = "shared"
    UNIQUE = "unique"


@dataclass(frozen=True)
class Config:
    """What a Backend is built from (backends.Config).

    name:      the registry name the harness runs this adapter under
               (e.g. "trustgraph-kafka"); what ``Backend.name`` reports.
    settings:  the client settings under TrustGraph's environment names
               (KAFKA_BOOTSTRAP_SERVERS, PULSAR_HOST, PULSAR_API_KEY,
               KAFKA_CONFIG_<KEY>, ...). The same settings are also in the
               adapter process's environment when it starts, but a Backend
               must use THESE: two Backends of one process may be opened with
               different settings (good and bad credentials in S1).
    retention: per-class retention overrides in seconds, keyed by class name
               ("flow", "request", "response", "notify"); a class not present
               uses its default (7 days for flow, 5 minutes for the others,
               ``pubsub_adapter.topics.default_retention``).
    """

    name: str
    settings: Mapping[str, str] = field(default_factory=dict)
    retention: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Delivery:
    """One received message (backends.Delivery), plain data.

    id:         an opaque token, unique within the Consumer that returned it,
                that ack/nack use to find the message again (an offset, a
                serialized message id: whatever the adapter needs).
    topic:      the contract topic string it was received from.
    payload:    the message bytes, exactly as sent.
    properties: the string properties, exactly as sent ({} when none).
    """

    id: str
    topic: str
    payload: bytes
    properties: Mapping[str, str] = field(default_factory=dict)


class Producer:
    """Sends to one topic. Concurrent sends are allowed."""

    def send(self, payload: bytes, properties: Mapping[str, str], *, timeout: float) -> None:
        """Send one message and return only after the broker confirmed it (a
        delivery report, a send receipt). The broker's error is raised, never
        only logged. ``properties`` may be empty."""
        raise NotImplementedError

    def close(self, *, timeout: float) -> None:
        """Flush anything pending within timeout and release the producer.
        Idempotent. A send after close raises ``Closed``."""
        raise NotImplementedError


class Consumer:
    """Receives from one subscription. receive is never called concurrently
    with itself; ack/nack may run concurrently with receive."""

    def receive(self, *, timeout: float) -> Optional[Delivery]:
        """Block for the next message, at most ``timeout`` seconds. Return
        None (or raise ``Timeout``) when nothing arrived in time. After close:
        raise ``Closed``."""
        raise NotImplementedError

    def ack(self, delivery: Delivery, *, timeout: float) -> None:
        """Acknowledge this delivery and nothing after it: later,
        unacknowledged messages are delivered again after the subscription
        is reopened. An id this consumer never handed out raises
        ``UnknownDelivery``; acking twice is harmless."""
        raise NotImplementedError

    def nack(self, delivery: Delivery, *, timeout: float) -> None:
        """Ask for the delivery to be delivered again (to this or another
        member of the subscription) within a bounded delay."""
        raise NotImplementedError

    def close(self, *, timeout: float) -> None:
        """Leave the subscription WITHOUT removing it: it keeps its position
        and a later consumer of the same name resumes from it. Unacked
        messages become deliverable again. Idempotent."""
        raise NotImplementedError


class Backend:
    """One pub/sub client connection (backends.Backend). All methods may be
    called concurrently from several harness goroutines."""

    def unsupported(self) -> Mapping[str, str]:
        """Capabilities (CAP_*) this backend, as configured, truly lacks, each
        with the reason a report shows. Specs needing one skip with that
        reason. Called once, right after the factory returned. Default: none."""
        return {}

    def producer(self, topic: str, *, timeout: float) -> Producer:
        """A producer for topic, creating the topic when missing."""
        raise NotImplementedError

    def consumer(
        self,
        topic: str,
        subscription: str,
        *,
        position: Position,
        mode: Mode,
        timeout: float,
    ) -> Consumer:
        """A consumer of topic on the named subscription, creating the topic
        when missing. Return only when the subscription is LIVE: a message
        sent after this returned is delivered to it, whatever the position.
        SHARED consumers of one name compete; UNIQUE gives each consumer its
        own subscription (fan-out); DEFAULT takes the class's mode."""
        raise NotImplementedError

    def create_topic(self, topic: str, *, retention: Optional[float], timeout: float) -> None:
        """Create topic with ``retention`` seconds, or when None the class's
        retention (Config.retention override, else the class default).
        Idempotent: an existing topic is not an error and is left unchanged."""
        raise NotImplementedError

    def delete_topic(self, topic: str, *, timeout: float) -> None:
        """Delete topic with its messages, subscriptions and positions.
        Idempotent: a missing topic is not an error."""
        raise NotImplementedError

    def topic_exists(self, topic: str, *, timeout: float) -> bool:
        """Whether topic exists on the broker."""
        raise NotImplementedError

    def ensure_topic(self, topic: str, *, retention: Optional[float], timeout: float) -> None:
        """Create topic when missing (as create_topic); nothing when present."""
        raise NotImplementedError

    def retention(self, topic: str, *, timeout: float) -> float:
        """The retention in force for an existing topic, in seconds, READ BACK
        from the broker (not remembered from create_topic)."""
        raise NotImplementedError

    def close(self, *, timeout: float) -> None:
        """Close the backend and everything it handed out. Idempotent."""
        raise NotImplementedError

    # Optional: define ``kill(self) -> None`` (sync, no timeout) only in an
    # in-process reference backend. See the module docstring.


# factory(config) -> Backend, sync or async. It must fail fast (within the
# handshake deadline) with Unavailable / AuthError when the broker cannot be
# reached or refuses the credentials, InvalidConfig for unusable settings.
Factory = Callable[[Config], Union[Backend, Awaitable[Backend]]]
