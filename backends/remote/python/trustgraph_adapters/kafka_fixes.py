"""Fixes for TrustGraph's AsyncKafkaBackend (trustgraph-base 2.11.1,
trustgraph/base/async_kafka_backend.py), written as subclasses that override only the
broken methods. The adapter variant ``trustgraph-kafka-fixed`` applies them
(``python -m trustgraph_adapters.async_adapter kafka-fixed``); each fix has a paragraph a
TrustGraph pull request can use in docs/trustgraph-kafka-fixes.md.

This is our code, not a copy of TrustGraph's: every class below inherits TrustGraph's and
calls TrustGraph's own methods wherever they are right (message wrapping, topic parsing,
client options, retention by class). What is overridden, and why:

    FixedAsyncKafkaBackend._parse_topic   TrustGraph's mapping, plus rejecting an empty
                                          topicspace or topic and names Kafka refuses

    FixedAsyncKafkaBackend.topic_exists   aiokafka's describe_topics returns error_code 3 for a
                                          missing topic instead of raising, so the original is
                                          True for every name and ensure_topic never creates;
                                          it also answered False on a connection error
    FixedAsyncKafkaBackend.create_topic   create_topics returns per-topic error codes, it does
                                          not raise: an invalid name or a refused request passed
                                          as success
    FixedAsyncKafkaBackend.delete_topic   every error was swallowed (a cut network "deleted")
    FixedAsyncKafkaBackend.create_consumer  returned before the group had assigned the
                                          partition and resolved its position, so a message
                                          sent right after it was missed (latest); a new group's
                                          starting position was never committed, so a
                                          subscription closed before its first ack started over
                                          at latest
    FixedAsyncKafkaBackend.create_producer  TrustGraph's producer, started through _start:
                                          aiokafka's bootstrap turned bad credentials into
                                          "Unable to bootstrap" (so did every other start)
    FixedAsyncKafkaBackend.close          closed nothing it had handed out
    FixedAsyncKafkaConsumer.acknowledge   commit() without offsets committed everything polled
                                          (acknowledging messages not yet processed)
    FixedAsyncKafkaConsumer.negative_acknowledge   was a no-op: a nacked message never came
                                          back until a restart
    FixedAsyncKafkaConsumer.receive       skips what this group acknowledged out of order (the
                                          acks above the commit point travel in the commit's
                                          metadata), and fails once closed
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, Dict, Iterable, List, Optional, Set

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import (AuthenticationFailedError, CommitFailedError, ConsumerStoppedError,
                             IllegalGenerationError, IllegalStateError, KafkaConnectionError,
                             RebalanceInProgressError, UnknownMemberIdError,
                             KafkaTimeoutError, SaslAuthenticationFailed,
                             UnsupportedSaslMechanismError, for_code)
from aiokafka.structs import OffsetAndMetadata

from trustgraph.base.async_kafka_backend import (AsyncKafkaBackend, AsyncKafkaConsumer,
                                                 AsyncKafkaMessage, AsyncKafkaProducer)

logger = logging.getLogger(__name__)

UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_ALREADY_EXISTS = 36

# The acks above the commit point go into the commit's metadata string, which the broker
# bounds (offset.metadata.max.bytes, 4096 by default). Offsets that do not fit are left out:
# at worst a reopened subscription delivers an acked message again, never skips an unacked one.
MAX_METADATA = 3500
METADATA_PREFIX = "acked1:"


def _raise_for(code: int, what: str, message: Optional[str] = None) -> None:
    if code:
        raise for_code(code)(f"{what}: {message or 'error code ' + str(code)}")


class _PartitionAcks:
    """Acknowledgement bookkeeping of one assigned partition: Kafka commits one offset per
    partition, and committing N acknowledges every offset below N, so the commit point is
    the lowest delivered offset not yet acked; the offsets acked above it are kept in the
    commit's metadata."""

    def __init__(self, floor: Optional[int], acked: Iterable[int] = ()) -> None:
        self.floor = floor                     # every offset below it is acknowledged
        self.fetched: Optional[int] = floor    # one past the highest offset delivered
        self.unacked: Set[int] = set()
        self.acked: Set[int] = {o for o in acked if floor is None or o >= floor}

    def deliver(self, offset: int) -> bool:
        """Record a fetched offset; False when it was acknowledged already."""
        if offset in self.acked or (self.floor is not None and offset < self.floor):
            return False
        self.fetched = offset + 1 if self.fetched is None else max(self.fetched, offset + 1)
        self.unacked.add(offset)
        return True

    def ack(self, offset: int) -> bool:
        """Record an ack; False when it was acknowledged before."""
        if offset in self.acked or (self.floor is not None and offset < self.floor):
            return False
        self.unacked.discard(offset)
        self.acked.add(offset)
        return True

    def commit_state(self):
        """The offset to commit and its metadata, moving the commit point up."""
        point = self.fetched if self.fetched is not None else 0
        if self.unacked:
            point = min(point, min(self.unacked))
        self.floor = point
        self.acked = {o for o in self.acked if o >= point}
        parts, size = [], len(METADATA_PREFIX)
        for o in sorted(self.acked):
            s = str(o - point)
            if size + len(s) + 1 > MAX_METADATA:
                break
            parts.append(s)
            size += len(s) + 1
        return point, METADATA_PREFIX + ",".join(parts)


def _parse_metadata(offset: int, metadata: Optional[str]) -> List[int]:
    if not metadata or not metadata.startswith(METADATA_PREFIX):
        return []
    out = []
    for s in metadata[len(METADATA_PREFIX):].split(","):
        if s.isdigit():
            out.append(offset + int(s))
    return out


class _Assignment(ConsumerRebalanceListener):
    """Keeps the consumer's per-partition bookkeeping in step with the group's assignment and
    signals the first completed join (create_consumer returns after it)."""

    def __init__(self, consumer: "FixedAsyncKafkaConsumer") -> None:
        self._c = consumer
        self.generation = 0  # completed joins
        self.changed = asyncio.Event()

    async def joined_after(self, generation: int) -> int:
        """Wait for a join completed after the given count; return the new count."""
        while self.generation <= generation:
            self.changed.clear()
            await self.changed.wait()
        return self.generation

    async def on_partitions_revoked(self, revoked) -> None:
        # Store the acks of the partitions going away while they are still ours, so the next
        # owner does not get acknowledged messages again.
        try:
            await self._c._commit_dirty()
        except Exception as e:  # noqa: BLE001 - the next owner then redelivers (at-least-once)
            logger.warning("commit before revoking %s failed: %s", sorted(map(str, revoked)), e)
        for tp in revoked:
            self._c._parts.pop(tp, None)

    async def on_partitions_assigned(self, assigned) -> None:
        try:
            await self._c._load(assigned)
        finally:
            self.generation += 1
            self.changed.set()


class FixedAsyncKafkaConsumer(AsyncKafkaConsumer):
    """TrustGraph's consumer with per-message acknowledgement and a working nack."""

    def __init__(self, consumer, schema_cls, group_id: str, new_group: bool = False) -> None:
        super().__init__(consumer, schema_cls)
        self._group_id = group_id
        # A response/notify consumer's group is made for it (subscription + uuid4): it has no
        # committed offsets to read and will never be reopened, so neither is done for it.
        self._new_group = new_group
        self._parts: Dict[TopicPartition, _PartitionAcks] = {}
        self._commit_lock = asyncio.Lock()
        self._dirty: Set[TopicPartition] = set()
        self._wake = asyncio.Event()
        self._committer: Optional[asyncio.Task] = None
        self._closed = False
        self.listener = _Assignment(self)

    async def _load(self, assigned) -> None:
        """Read the group's committed offset and out-of-order acks for newly assigned partitions
        (through the consumer's own group coordinator: aiokafka's public committed() returns
        the offset without its metadata)."""
        assigned = list(assigned)
        if not assigned:
            return
        if self._new_group:
            for tp in assigned:
                self._parts.setdefault(tp, _PartitionAcks(None))
            return
        committed = await self._consumer._coordinator.fetch_committed_offsets(assigned)
        for tp in assigned:
            om = committed.get(tp)
            if om is not None and om.offset >= 0:
                self._parts[tp] = _PartitionAcks(om.offset, _parse_metadata(om.offset, om.metadata))
            else:
                self._parts[tp] = _PartitionAcks(None)

    async def _ready(self) -> None:
        """Return once the group assigned this member its partitions and their positions are
        resolved; a new group's position is committed so the subscription outlives a close.
        A rebalance meanwhile (another member joined, or this one was too slow to heartbeat)
        voids the commit: then the same again after the next join."""
        generation = 0
        while True:
            generation = await self.listener.joined_after(generation)
            try:
                fresh = {}
                for tp in self._consumer.assignment():
                    pos = await self._consumer.position(tp)
                    st = self._parts.get(tp)
                    if st is not None and st.floor is None:
                        st.floor = st.fetched = pos
                        if not self._new_group:
                            fresh[tp] = OffsetAndMetadata(pos, METADATA_PREFIX)
                if fresh:
                    await self._consumer.commit(fresh)
                return
            except (CommitFailedError, IllegalStateError, RebalanceInProgressError,
                    UnknownMemberIdError, IllegalGenerationError) as e:
                logger.warning("group %s rebalanced while its consumer was being readied (%s); "
                               "again after the next join", self._group_id, type(e).__name__)

    async def receive(self):
        while True:
            if self._closed:
                raise ConsumerStoppedError()
            msg = await self._consumer.__anext__()
            st = self._parts.get(TopicPartition(msg.topic, msg.partition))
            if st is not None and not st.deliver(msg.offset):
                continue  # acknowledged already (out of order, by this or an earlier member)
            return AsyncKafkaMessage(msg, self._schema_cls)

    async def acknowledge(self, message) -> None:
        """Record the ack; a committer task stores it at once, one commit in flight at a time
        (each carrying every ack recorded meanwhile), so an ack costs no broker round trip
        and is stored within one commit's time; close and a revocation store what is left."""
        if not isinstance(message, AsyncKafkaMessage):
            return
        rec = message._msg
        tp = TopicPartition(rec.topic, rec.partition)
        st = self._parts.get(tp)
        if st is None or not st.ack(rec.offset):
            return  # acked before, or the partition moved to another member (it redelivers)
        self._dirty.add(tp)
        self._wake.set()
        if self._committer is None:
            self._committer = asyncio.ensure_future(self._commit_loop())

    async def _commit_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._commit_dirty()
            except Exception as e:  # noqa: BLE001 - kept dirty: the next ack or close retries
                logger.warning("commit of acks on %s failed: %s", self._group_id, e)

    async def _commit_dirty(self) -> None:
        async with self._commit_lock:
            dirty, self._dirty = self._dirty, set()
            offsets = {}
            for tp in dirty:
                st = self._parts.get(tp)
                if st is not None:
                    offsets[tp] = OffsetAndMetadata(*st.commit_state())
            if not offsets:
                return
            try:
                await self._consumer.commit(offsets)
            except BaseException:
                self._dirty |= set(offsets)
                raise

    async def negative_acknowledge(self, message) -> None:
        if not isinstance(message, AsyncKafkaMessage):
            return
        rec = message._msg
        tp = TopicPartition(rec.topic, rec.partition)
        if tp in self._consumer.assignment():
            # Fetch again from the nacked message; what follows it and was acked is skipped by
            # receive, the rest may come again (at-least-once).
            self._consumer.seek(tp, rec.offset)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._committer is not None:
            self._committer.cancel()
            self._committer = None
        try:
            await self._commit_dirty()
        except Exception as e:  # noqa: BLE001 - the subscription then redelivers them
            logger.warning("commit of acks on close of %s failed: %s", self._group_id, e)
        await super().close()


class FixedAsyncKafkaBackend(AsyncKafkaBackend):
    """TrustGraph's backend with working topic checks, ready consumers and a closing close."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._handed_out: List[Any] = []

    def _parse_topic(self, topic_id: str):
        """TrustGraph's parsing, plus the names Kafka or the class:topicspace:topic form cannot
        mean: an empty topicspace or topic, and characters Kafka's topic names do not allow
        (the original passed them on, so "" became tg.flow. and "flow:t g:x" a refused name)."""
        topic_name, cls, durable = super()._parse_topic(topic_id)
        parts = topic_id.split(":", 2) if ":" in topic_id else ["flow", "tg", topic_id]
        if len(parts) != 3 or not parts[1] or not parts[2]:
            raise ValueError(f"Invalid topic format: {topic_id!r}, expected class:topicspace:topic "
                             f"with a non-empty topicspace and topic")
        bad = sorted({ch for ch in topic_name if not (ch.isascii() and (ch.isalnum() or ch in "._-"))})
        if bad or len(topic_name) > 249:
            raise ValueError(f"Invalid topic {topic_id!r}: Kafka topic {topic_name!r} must be at most "
                             f"249 characters of [a-zA-Z0-9._-]" + (f" (has {''.join(bad)!r})" if bad else ""))
        return topic_name, cls, durable

    async def _describe(self, admin, topic_name: str) -> bool:
        for t in await admin.describe_topics([topic_name]):
            if t["topic"] != topic_name:
                continue
            if t["error_code"] == UNKNOWN_TOPIC_OR_PARTITION:
                return False
            _raise_for(t["error_code"], f"describe topic {topic_name}")
            return True
        return False

    async def _until(self, admin, topic_name: str, exists: bool) -> None:
        """Wait until the broker's metadata shows the topic created (or deleted): CreateTopics
        and DeleteTopics return when the controller has the change, and the metadata a client
        reads next may not have it yet, so a topic_exists or a producer right after would not
        see it. Bounded by the client's request timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + admin._request_timeout_ms / 1000
        while await self._describe(admin, topic_name) != exists:
            if loop.time() > deadline:
                raise KafkaTimeoutError(f"topic {topic_name} still {'missing' if exists else 'present'} "
                                        f"in the broker's metadata after {admin._request_timeout_ms} ms")
            await asyncio.sleep(0.05)

    async def _start(self, client) -> None:
        """client.start(), with the broker's own reason when bootstrapping fails: aiokafka logs
        why each bootstrap broker refused ("[Error 58] SaslAuthenticationFailed") and raises
        KafkaConnectionError("Unable to bootstrap"), so bad credentials read as a broker that is
        down. With SASL configured, one more connection to the first bootstrap broker, alone,
        raises its authentication error (chained to the original); otherwise the original."""
        try:
            await client.start()
        except KafkaConnectionError as err:
            if not self._sasl_mechanism:
                raise
            from aiokafka.conn import create_conn

            host, _, port = self._bootstrap_servers.split(",")[0].strip().rpartition(":")
            try:
                conn = await create_conn(
                    host, int(port), security_protocol=self._security_protocol,
                    sasl_mechanism=self._sasl_mechanism, sasl_plain_username=self._sasl_username,
                    sasl_plain_password=self._sasl_password)
            except (SaslAuthenticationFailed, AuthenticationFailedError,
                    UnsupportedSaslMechanismError) as auth:
                raise auth from err
            except Exception:  # noqa: BLE001 - not an authentication failure: the original
                raise err from None
            conn.close()
            raise

    async def topic_exists(self, topic: str) -> bool:
        topic_name, _, _ = self._parse_topic(topic)
        admin = AIOKafkaAdminClient(**self._client_kwargs())
        try:
            await self._start(admin)
            return await self._describe(admin, topic_name)
        finally:
            await admin.close()

    async def create_topic(self, topic: str) -> None:
        topic_name, cls, _ = self._parse_topic(topic)
        admin = AIOKafkaAdminClient(**self._client_kwargs())
        try:
            await self._start(admin)
            resp = await admin.create_topics([NewTopic(
                topic_name, num_partitions=1, replication_factor=1,
                topic_configs={"retention.ms": str(self._retention_ms(cls))})])
            for err in resp.topic_errors:
                name, code, message = err[0], err[1], (err[2] if len(err) > 2 else None)
                if name == topic_name and code != TOPIC_ALREADY_EXISTS:
                    _raise_for(code, f"create topic {topic_name}", message)
            await self._until(admin, topic_name, True)
        finally:
            await admin.close()

    async def delete_topic(self, topic: str) -> None:
        topic_name, _, _ = self._parse_topic(topic)
        admin = AIOKafkaAdminClient(**self._client_kwargs())
        try:
            await self._start(admin)
            resp = await admin.delete_topics([topic_name])
            for name, code in resp.topic_error_codes:
                if name == topic_name and code != UNKNOWN_TOPIC_OR_PARTITION:
                    _raise_for(code, f"delete topic {topic_name}")
            await self._until(admin, topic_name, False)
        finally:
            await admin.close()

    async def create_producer(self, topic: str, schema: type, **options):
        # TrustGraph's producer, started through _start (see there) instead of by itself.
        topic_name, _, durable = self._parse_topic(topic)
        producer = AIOKafkaProducer(**self._client_kwargs(), acks="all" if durable else 1,
                                    max_request_size=10485760)
        await self._start(producer)
        p = AsyncKafkaProducer(producer, topic_name)
        self._handed_out.append(p)
        return p

    async def create_consumer(self, topic: str, subscription: str, schema: type,
                              initial_position: str = "latest", **options):
        # TrustGraph's own consumer settings, subscribed with a rebalance listener instead of
        # by topic name in the constructor (aiokafka allows a listener only through subscribe).
        topic_name, cls, _ = self._parse_topic(topic)
        if cls in ("response", "notify"):
            group_id = f"{subscription}-{uuid.uuid4()}"
            auto_offset_reset = "earliest"
        else:
            group_id = subscription
            auto_offset_reset = "earliest" if initial_position == "earliest" else "latest"
        consumer = AIOKafkaConsumer(
            **self._client_kwargs(),
            group_id=group_id,
            auto_offset_reset=auto_offset_reset,
            enable_auto_commit=False,
            max_partition_fetch_bytes=10485760,
            session_timeout_ms=6000,
            heartbeat_interval_ms=1000,
        )
        fixed = FixedAsyncKafkaConsumer(consumer, schema, group_id, new_group=cls in ("response", "notify"))
        consumer.subscribe([topic_name], listener=fixed.listener)
        await self._start(consumer)
        try:
            await fixed._ready()
        except BaseException:
            await fixed.close()
            raise
        self._handed_out.append(fixed)
        return fixed

    async def close(self) -> None:
        handed, self._handed_out = self._handed_out, []
        for h in handed:
            await h.close()
        await super().close()
