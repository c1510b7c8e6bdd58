"""What the four TrustGraph adapters share: settings -> TrustGraph's factory
parameters, the message schema, delivery ids, and the labelling of TrustGraph's
exceptions with the contract's error codes.

Nothing here adds behaviour to TrustGraph: no waits, retries, polling, caches of
messages or emulated features. A contract call TrustGraph has no API for raises
``Internal`` naming what is missing, so the spec that needs it fails with that
message (a true result for TrustGraph's code).
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from pubsub_adapter import Delivery, Mode, errors
from pubsub_adapter import (CAP_BINARY_PAYLOADS, CAP_LOAD_SHARING, CAP_MODE_OVERRIDE,
                            CAP_RETENTION_EXPIRY, CAP_RETENTION_READ_BACK, CAP_TLS)
from pubsub_adapter.topics import default_mode, default_retention


@dataclass
class Payload:
    """The schema every adapter producer and consumer is created with.

    TrustGraph's backends only carry dataclass instances (``create_producer(topic,
    schema)``); they serialise with trustgraph.base.serialization.dataclass_to_dict,
    which turns a ``bytes`` field into a UTF-8 string inside JSON, and back with
    dict_to_dataclass. So the contract's payload travels as TrustGraph carries any
    bytes field of its own schemas: bytes that are not valid UTF-8 cannot be sent
    (dataclass_to_dict raises UnicodeDecodeError), and the reported error says so.
    """

    data: bytes = b""


# TrustGraph's environment names -> the keyword its factory (pubsub.get_pubsub /
# get_async_pubsub) reads, and the value pubsub.py uses when the variable is unset.
# pubsub.py reads these from os.environ at import time (DEFAULT_*) and add_pubsub_args
# exposes them as --pulsar-host etc.; a Backend here gets them from Config.settings
# instead, because one adapter process may open Backends with different settings (S1).
TG_SETTINGS = {
    "PULSAR_HOST": ("pulsar_host", "pulsar://pulsar:6650"),
    "PULSAR_API_KEY": ("pulsar_api_key", None),
    "PULSAR_ADMIN_URL": ("pulsar_admin_url", "http://pulsar:8080"),
    "PULSAR_LISTENER": ("pulsar_listener", None),  # CLI only in TrustGraph (--pulsar-listener)
    "KAFKA_BOOTSTRAP_SERVERS": ("kafka_bootstrap_servers", "kafka:9092"),
    "KAFKA_SECURITY_PROTOCOL": ("kafka_security_protocol", "PLAINTEXT"),
    "KAFKA_SASL_MECHANISM": ("kafka_sasl_mechanism", None),
    "KAFKA_SASL_USERNAME": ("kafka_sasl_username", None),
    "KAFKA_SASL_PASSWORD": ("kafka_sasl_password", None),
    "RABBITMQ_HOST": ("rabbitmq_host", "rabbitmq"),
    "RABBITMQ_PORT": ("rabbitmq_port", "5672"),  # an int in pubsub.py (int(os.getenv(...)), type=int)
    "RABBITMQ_USERNAME": ("rabbitmq_username", "guest"),
    "RABBITMQ_PASSWORD": ("rabbitmq_password", "guest"),
    "RABBITMQ_VHOST": ("rabbitmq_vhost", "/"),
}

SECRET = {"PULSAR_API_KEY", "KAFKA_SASL_PASSWORD", "RABBITMQ_PASSWORD"}

# Parameters pubsub.py reads as int (DEFAULT_RABBITMQ_PORT = int(os.getenv(...)), and
# add_pubsub_args' type=int): converted as TrustGraph converts them, a bad value is one line.
INT_PARAMS = {"rabbitmq_port": "RABBITMQ_PORT"}


def factory_params(kind: str, settings: Mapping[str, str]) -> Dict[str, Any]:
    """The keyword arguments TrustGraph's factory gets for these settings, as a
    TrustGraph processor builds them (pubsub_backend=<kind> plus the connection
    options of add_pubsub_args). An empty value means unset, as in the harness's
    settings (the run clears KAFKA_SASL_* that way for the plain listener), so it gets
    the value pubsub.py uses for an unset variable. Settings TrustGraph has no name for
    are reported on stderr and not used: TrustGraph would not see them either."""
    prefix = kind.upper() + "_"
    params: Dict[str, Any] = {"pubsub_backend": kind}
    for env, (key, unset) in TG_SETTINGS.items():
        if env.startswith(prefix):
            params[key] = settings.get(env) or unset
    for key, env in INT_PARAMS.items():
        if key in params:
            try:
                params[key] = int(params[key])
            except (TypeError, ValueError):
                raise errors.InvalidConfig(
                    f"{env}={params[key]!r} is not a port number (TrustGraph reads it with int())") from None
    ignored = sorted(k for k, v in settings.items() if k not in TG_SETTINGS and v)
    if ignored:
        print(f"trustgraph-{kind}: settings TrustGraph has no option for, not used: "
              + ", ".join(ignored), file=sys.stderr, flush=True)
    return params


def describe(params: Mapping[str, Any]) -> str:
    """params for a log line, secrets masked."""
    masked = {k: ("***" if v and k in ("pulsar_api_key", "kafka_sasl_password", "rabbitmq_password") else v)
              for k, v in params.items()}
    return ", ".join(f"{k}={v}" for k, v in masked.items())


def topic_class(topic: str) -> str:
    """The class TrustGraph derives from a topic string (its own rule: the part
    before the first ':', 'flow' when there is none)."""
    return topic.split(":", 1)[0] if ":" in topic else "flow"


def check_mode(topic: str, mode: Mode) -> None:
    """TrustGraph's create_consumer has no subscription-mode option: the class decides
    (flow/request shared, response/notify unique). A request for the class's own
    mode is that; any other is a feature TrustGraph lacks."""
    if mode == Mode.DEFAULT:
        return
    cls = topic_class(topic)
    if cls in ("flow", "request", "response", "notify") and mode == default_mode(cls):
        return
    raise errors.Internal(
        f"TrustGraph has no subscription-mode option: create_consumer(topic, subscription, schema, "
        f"initial_position) takes the mode from the topic class ({cls!r} -> "
        f"{default_mode(cls).value if cls in ('flow', 'request', 'response', 'notify') else '?'}), "
        f"so mode {mode.value!r} cannot be asked for")


def check_retention(topic: str, retention: Optional[float], overrides: Mapping[str, float]) -> None:
    """TrustGraph's create_topic(topic) takes no retention: its backends fix it per
    class (Kafka: retention.ms 7 days for flow, 5 minutes otherwise; Pulsar: the
    namespace's). A retention other than the class default cannot be asked for."""
    cls = topic_class(topic)
    want = retention if retention is not None else overrides.get(cls)
    if want is None or cls not in ("flow", "request", "response", "notify"):
        return
    if abs(want - default_retention(cls)) > 1e-6:
        raise errors.Internal(
            f"TrustGraph's create_topic(topic) has no retention parameter: it cannot create "
            f"{topic!r} with a retention of {want:g}s (its class default is {default_retention(cls):g}s)")


NO_RETENTION_READ = (
    "TrustGraph has no call that reads a topic's retention back from the broker: its "
    "backends expose create_topic, delete_topic, topic_exists and ensure_topic only")

NO_BINARY = (
    "TrustGraph's messages are dataclasses serialised as JSON (serialization.dataclass_to_dict "
    "decodes a bytes field as UTF-8): a payload that is not valid UTF-8 cannot be expressed")

NO_MODE_OPTION = (
    "TrustGraph's create_consumer(topic, subscription, schema, initial_position) has no "
    "subscription-mode option: the topic class decides (flow and request shared, response and "
    "notify one subscription per subscriber), so a mode other than the class's cannot be asked for")

ONE_PARTITION = (
    "TrustGraph's Kafka backend creates every topic with num_partitions=1 "
    "(docs/tech-specs/kafka-backend.md: \"Parallelism comes from multiple topics and multiple "
    "services, not from partitioning within a topic.\"): a consumer group assigns the one "
    "partition to one member, so the other consumers of a subscription receive nothing while it lives")


def api_fit(kind: str) -> dict:
    """The capabilities TrustGraph's API (or, for Kafka, its one-partition topics) cannot
    express, with the reason: declared Unsupported so the specs that need them skip with it
    instead of reporting TrustGraph's design as a defect. No workaround is attempted."""
    out = {
        CAP_BINARY_PAYLOADS: NO_BINARY,
        CAP_RETENTION_READ_BACK: NO_RETENTION_READ,
        CAP_MODE_OVERRIDE: NO_MODE_OPTION,
        CAP_RETENTION_EXPIRY: NO_RETENTION_PARAM_RABBITMQ if kind == "rabbitmq" else NO_RETENTION_PARAM,
    }
    if kind == "kafka":
        out[CAP_LOAD_SHARING] = ONE_PARTITION
    out[CAP_TLS] = NO_TLS[kind]
    return out


# Why TrustGraph cannot run S2 (TLS with the broker's CA), per kind (docs/tls.md). The sync
# adapter (2.8.1) replaces the Kafka reason with NO_TLS_KAFKA_SYNC.
NO_TLS = {
    "kafka": (
        "AsyncKafkaBackend passes KAFKA_SECURITY_PROTOCOL to aiokafka but never an ssl_context, "
        "which aiokafka requires for SASL_SSL and SSL (ValueError: `ssl_context` is mandatory if "
        "security_protocol=='SSL'), and TrustGraph has no CA setting: it cannot reach Kafka over TLS"),
    "pulsar": (
        "AsyncPulsarBackend builds pulsar.asyncio.Client(host, authentication, listener_name) with no "
        "tls_trust_certs_file_path and calls the admin API through urllib's default context: "
        "TrustGraph has no setting for the CA of the broker's certificate, so pulsar+ssl:// and "
        "https:// are verified against the system trust store only and a broker whose CA is not "
        "in it cannot be reached"),
    "rabbitmq": (
        "AsyncRabbitMQBackend connects to the URL amqp://user:password@host:port/vhost it builds "
        "itself: no amqps scheme and no TLS option, so TrustGraph cannot reach RabbitMQ over TLS"),
}

NO_TLS_KAFKA_SYNC = (
    "KafkaBackend (trustgraph-base 2.8.1) gives KAFKA_SECURITY_PROTOCOL and the SASL settings "
    "to its AdminClient only (producers and consumers get bootstrap.servers alone, see S1) and "
    "has no CA setting (no ssl.ca.location): its producers and consumers cannot use TLS")


NO_RETENTION_PARAM = (
    "TrustGraph's create_topic(topic) takes no retention: a short retention override cannot be "
    "asked for (Kafka topics get retention.ms by class, 7 days flow / 5 minutes others)")

NO_RETENTION_PARAM_RABBITMQ = (
    "TrustGraph's create_topic(topic) takes no retention, and AsyncRabbitMQBackend declares its "
    "fanout exchange and queues with no arguments (no x-message-ttl, no x-max-age): a message "
    "never expires, so a short retention override cannot be asked for")


class Deliveries:
    """Delivery ids for one consumer: the contract's opaque token -> TrustGraph's
    message object, which acknowledge / negative_acknowledge take. Ids carry a
    per-consumer prefix, so an id of another consumer is unknown here."""

    _serial = itertools.count(1)

    def __init__(self) -> None:
        self._prefix = f"c{next(Deliveries._serial)}-"
        self._n = itertools.count(1)
        self._by_id: Dict[str, Any] = {}
        self._lock = threading.Lock()

    def add(self, topic: str, msg: Any) -> Delivery:
        """Turn TrustGraph's message into a Delivery (payload from the schema's data
        field, properties as TrustGraph returns them)."""
        value = msg.value()
        data = value.data if isinstance(value, Payload) else value
        if isinstance(data, str):
            data = data.encode("utf-8")
        if data is None:
            data = b""
        props = msg.properties() or {}
        with self._lock:
            did = self._prefix + str(next(self._n))
            self._by_id[did] = msg
        return Delivery(id=did, topic=topic, payload=bytes(data), properties=dict(props))

    def get(self, d: Delivery) -> Any:
        with self._lock:
            msg = self._by_id.get(d.id)
        if msg is None:
            raise errors.UnknownDelivery(f"delivery id {d.id!r} was not handed out by this consumer")
        return msg


def payload_of(data: bytes) -> Payload:
    return Payload(data=bytes(data))


def translate(exc: BaseException, what: str) -> BaseException:
    """Label an exception raised by TrustGraph (or the client library under it) with
    the contract's code. The message keeps TrustGraph's own type and text; nothing is
    retried or hidden. Returns the exception to raise."""
    if isinstance(exc, errors.PubSubError):
        return exc
    name = type(exc).__name__
    text = f"{what}: TrustGraph raised {type(exc).__module__}.{name}: {exc}"
    code = _code_of(exc)
    cls = errors.BY_CODE.get(code, errors.Internal)
    out = cls(text)
    out.__cause__ = exc
    return out


def _raised_in(exc: BaseException, path_part: str) -> bool:
    """Whether exc was raised by code whose file path contains path_part (its innermost frame)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return path_part in tb.tb_frame.f_code.co_filename


def _code_of(exc: BaseException) -> str:
    name = type(exc).__name__
    msg = str(exc)
    # TrustGraph's own topic parsing (_parse_topic / _map_topic) raises ValueError.
    if isinstance(exc, ValueError) and ("Invalid topic" in msg or "Invalid queue" in msg):
        return "invalid_topic"
    if isinstance(exc, UnicodeDecodeError):
        return "internal"
    # aiokafka
    if name in ("SaslAuthenticationFailed", "AuthenticationFailedError", "AuthenticationMethodNotSupported",
                "UnsupportedSaslMechanismError", "IllegalSaslStateError"):
        return "auth"
    if name in ("KafkaConnectionError", "NoBrokersAvailable"):
        return "unavailable"
    if name in ("KafkaTimeoutError", "RequestTimedOutError"):
        return "timeout"
    if name in ("TopicAuthorizationFailedError", "GroupAuthorizationFailedError",
                "ClusterAuthorizationFailedError"):
        return "auth"
    if name == "InvalidTopicError":
        return "invalid_topic"
    # An ack or nack of a message whose partition moved to another member (the group
    # rebalanced): Kafka's clients raise CommitFailedError there, the contract's
    # ErrUnknownDelivery after a membership change (C-ACK-8).
    if name == "CommitFailedError":
        return "unknown_delivery"
    # confluent-kafka
    if name == "KafkaException" and exc.args:
        err = exc.args[0]
        try:
            from confluent_kafka import KafkaError
            c = err.code()
            if c in (KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED,
                     KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.GROUP_AUTHORIZATION_FAILED,
                     KafkaError.CLUSTER_AUTHORIZATION_FAILED):
                return "auth"
            if c in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._RESOLVE):
                return "unavailable"
            if c in (KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT):
                return "timeout"
            if c in (KafkaError.TOPIC_EXCEPTION, KafkaError._INVALID_ARG):
                return "invalid_topic" if "topic" in str(err).lower() else "internal"
        except Exception:  # noqa: BLE001 - not a KafkaError: leave it internal
            pass
        return "internal"
    # aio-pika / aiormq (AsyncRabbitMQBackend): aiormq.exceptions by name
    if name in ("ProbableAuthenticationError", "AuthenticationError", "ChannelAccessRefused",
                "ConnectionNotAllowed"):
        return "auth"
    if name in ("AMQPConnectionError", "ConnectionClosed", "IncompatibleProtocolError",
                "ConnectionRefusedError", "ConnectionResetError"):
        return "unavailable"
    # The connection to the broker is down (aio-pika's robust connection is reconnecting):
    # aiormq raises ChannelInvalidStateError for a publish on a channel the loss closed, and a
    # plain RuntimeError("<Connection ...> closed") from Connection.channel(). Only where
    # aiormq raised it: a RuntimeError from anywhere else stays internal.
    if name == "ChannelInvalidStateError" or (type(exc) is RuntimeError and _raised_in(exc, "/aiormq/")):
        return "unavailable"
    # pulsar-client: pulsar.asyncio raises PulsarException(result); the sync client
    # raises subclasses named after the result.
    result = name
    if name == "PulsarException":
        try:
            result = str(exc.error()).split(".")[-1]
        except Exception:  # noqa: BLE001
            result = name
    if result in ("AuthenticationError", "AuthorizationError", "ErrorGettingAuthenticationData"):
        return "auth"
    if result in ("ConnectError", "NotConnected", "ServiceUnitNotReady", "LookupError"):
        return "unavailable"
    if result == "Timeout":
        return "timeout"
    if result in ("InvalidTopicName", "TopicNotFound"):
        return "invalid_topic"
    if result == "AlreadyClosed":
        return "closed"
    # urllib (Pulsar admin REST in TrustGraph's delete/exists)
    if name == "HTTPError" and getattr(exc, "code", None) in (401, 403):
        return "auth"
    if name in ("URLError", "ConnectionRefusedError"):
        return "unavailable"
    if isinstance(exc, TimeoutError):
        return "timeout"
    return "internal"


# --- Naming the cause of a TrustGraph call that outlives its deadline --------------------------
#
# When a TrustGraph call does not return within the contract call's deadline, the only witness of
# what it was waiting for is what TrustGraph and its client library logged meanwhile (aiokafka:
# "Topic tg.flow.x not found in cluster metadata"). Those lines go to stderr as before (the
# harness attaches the adapter's stderr to the failed spec); the ones that name the topic are also
# quoted in the timeout error, so the spec's own message says what the call was stuck on.

import asyncio
import collections
import logging
import time

_recent = collections.deque(maxlen=2000)


class _Recorder(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            _recent.append((time.monotonic(), f"{record.name}: {record.getMessage()}"))
        except Exception:  # noqa: BLE001 - a log line that cannot be formatted is not quoted
            pass


def install_log_capture() -> None:
    """Client-library warnings to stderr (as Python's last-resort handler printed them) and into
    the buffer ``bounded`` quotes from."""
    root = logging.getLogger()
    if any(isinstance(h, _Recorder) for h in root.handlers):
        return
    out = logging.StreamHandler(sys.stderr)
    out.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    out.setLevel(logging.WARNING)
    rec = _Recorder()
    rec.setLevel(logging.WARNING)
    root.addHandler(out)
    root.addHandler(rec)
    if root.level > logging.WARNING or root.level == logging.NOTSET:
        root.setLevel(logging.WARNING)


def _lines_about(topic: str, since: float, n: int = 2):
    key = topic.split(":")[-1]
    got = [line for t, line in list(_recent) if t >= since and key and key in line]
    seen, out = set(), []
    for line in reversed(got):
        if line not in seen:
            seen.add(line)
            out.append(line)
        if len(out) == n:
            break
    return list(reversed(out))


async def bounded(coro, timeout: float, what: str, topic: str):
    """Await a TrustGraph coroutine within the call's own deadline (the SDK would cancel it at
    the same moment); on timeout raise Timeout quoting what TrustGraph's client logged about the
    topic meanwhile. No retry, no extra wait: the same bound, a better message."""
    start = time.monotonic()
    try:
        return await asyncio.wait_for(coro, timeout)
    except asyncio.TimeoutError:
        lines = _lines_about(topic, start)
        said = ("; meanwhile TrustGraph's client logged: " + " | ".join(lines)) if lines else \
            "; TrustGraph's client logged nothing about the topic meanwhile"
        raise errors.Timeout(f"{what}({topic!r}): TrustGraph's call did not return within "
                             f"{timeout:.1f}s{said}") from None


class TopicAdmin:
    """The topic-lifecycle calls of both adapters: each is TrustGraph's own backend call
    (self._b, awaited) with its exception labelled; TrustGraph has no call that reads
    retention back. Mixed into each adapter's Backend, which sets self._b and self._config."""

    async def create_topic(self, topic: str, *, retention, timeout: float) -> None:
        check_retention(topic, retention, self._config.retention)
        try:
            await self._b.create_topic(topic)
        except Exception as e:  # noqa: BLE001
            raise translate(e, "create_topic") from e

    async def delete_topic(self, topic: str, *, timeout: float) -> None:
        try:
            await self._b.delete_topic(topic)
        except Exception as e:  # noqa: BLE001
            raise translate(e, "delete_topic") from e

    async def topic_exists(self, topic: str, *, timeout: float) -> bool:
        try:
            return bool(await self._b.topic_exists(topic))
        except Exception as e:  # noqa: BLE001
            raise translate(e, "topic_exists") from e

    async def ensure_topic(self, topic: str, *, retention, timeout: float) -> None:
        check_retention(topic, retention, self._config.retention)
        try:
            await self._b.ensure_topic(topic)
        except Exception as e:  # noqa: BLE001
            raise translate(e, "ensure_topic") from e

    async def retention(self, topic: str, *, timeout: float) -> float:
        raise errors.Internal(NO_RETENTION_READ)


def code_under_test() -> str:
    """The TrustGraph code this adapter runs, for the handshake (the transcript's first line):
    trustgraph-base's version and where it is imported from, which for a working copy
    (make conformance TRUSTGRAPH_SOURCE=<dir>, an editable install) is that directory."""
    import json
    from importlib.metadata import distribution

    import trustgraph.base as tgb

    dist = distribution("trustgraph-base")
    where = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(tgb.__file__))))
    kind = "installed"
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
        if direct.get("dir_info", {}).get("editable"):
            kind = "editable working copy"
    except ValueError:
        pass
    return f"trustgraph-base {dist.version} ({kind} at {where})"
