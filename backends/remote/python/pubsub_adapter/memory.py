"""The in-memory reference backend (backends/memory) ported to Python on the SDK.

It is the worked example of an adapter, and run through the whole catalogue it
proves the protocol path transparent: every spec that passes on the Go
reference must pass here too (`PUBSUB_BACKENDS=python-memory`). It is never a
conformance result for any broker.

Model (as backends/memory): a Broker holds topics; a topic is an append-only
log with a retention; a subscription is a cursor into the log plus the set of
messages handed out but not yet acknowledged. Every class keeps its log. One
Broker per adapter process; every Backend opened in the process is a client
connection to it, which is how specs reopen subscriptions "from another
process".

Written with plain (sync) methods and one lock + condition, like the Go
original's mutex and broadcast channel: the SDK runs each call in a thread.

Run: python -m pubsub_adapter.memory (the harness does, as "python-memory").
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
from typing import Dict, List, Optional

from . import serve
from .adapter import Backend, Config, Consumer, Delivery, Mode, Position, Producer
from .errors import Closed, InvalidConfig, InvalidTopic, UnknownDelivery
from .topics import Topic, default_mode, default_retention, parse_topic


class _Entry:
    __slots__ = ("offset", "payload", "properties", "at")

    def __init__(self, offset: int, payload: bytes, properties: Dict[str, str], at: float):
        self.offset, self.payload, self.properties, self.at = offset, payload, properties, at


class _Subscription:
    def __init__(self, name: str, cursor: int):
        self.name = name
        self.cursor = cursor  # next offset never handed out
        self.pending: Dict[int, "_Consumer"] = {}  # handed out, not acked: offset -> holder
        self.redo: List[int] = []  # nacked or released offsets, delivered before the cursor (sorted)
        self.acked: Dict[int, bool] = {}

    def release(self, off: int) -> None:
        self.pending.pop(off, None)
        bisect.insort(self.redo, off)


class _Topic:
    def __init__(self, t: Topic, retention: float):
        self.t = t
        self.retention = retention
        self.log: List[_Entry] = []
        self.offsets: List[int] = []  # parallel to log, for bisect
        self.next = 0
        self.subs: Dict[str, _Subscription] = {}

    def first(self) -> int:
        return self.log[0].offset if self.log else self.next

    def find(self, off: int, now: float) -> Optional[_Entry]:
        i = bisect.bisect_left(self.offsets, off)
        if i == len(self.log) or self.offsets[i] != off:
            return None
        e = self.log[i]
        if self.retention > 0 and now - e.at > self.retention:
            return None
        return e

    def trim(self, now: float) -> None:
        n = 0
        while n < len(self.log) and self.retention > 0 and now - self.log[n].at > self.retention:
            n += 1
        if n:
            del self.log[:n]
            del self.offsets[:n]


class Broker:
    """The in-process "server" every Backend of this adapter process connects to."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.topics: Dict[str, _Topic] = {}
        self.seq = itertools.count(1)
        self.now = time.time

    def broadcast(self) -> None:  # called with cond held
        self.cond.notify_all()

    def restart(self) -> None:
        """Simulate a broker restart (backends/memory Broker.Restart): every connection's
        in-flight (handed out, unacked) messages become deliverable again, and non-durable
        classes lose their messages, as a broker that keeps them only in memory would. Durable
        (flow) logs and all subscription positions survive; open Backends stay usable."""
        with self.cond:
            for tp in self.topics.values():
                for s in tp.subs.values():
                    for off in list(s.pending):
                        s.release(off)
                if not tp.t.durable:
                    tp.log.clear()
                    tp.offsets.clear()
            self.broadcast()


class MemoryBackend(Backend):
    def __init__(self, broker: Broker, cfg: Config):
        self.broker = broker
        self.cfg = cfg
        self.closed = False
        self.consumers: set = set()
        self.lock = threading.Lock()

    def _check(self, what: str) -> None:
        with self.lock:
            if self.closed:
                raise Closed(f"{what}: closed")

    def unsupported(self):
        return {}  # the reference claims the whole contract

    def _retention_for(self, t: Topic, override: Optional[float]) -> float:
        if override:
            return override
        r = self.cfg.retention.get(t.cls)
        return r if r and r > 0 else default_retention(t.cls)

    def _ensure(self, t: Topic, retention: Optional[float] = None) -> _Topic:  # cond held
        key = str(t)
        tp = self.broker.topics.get(key)
        if tp is None:
            tp = _Topic(t, self._retention_for(t, retention))
            self.broker.topics[key] = tp
        return tp

    @staticmethod
    def _parse(what: str, s: str) -> Topic:
        try:
            return parse_topic(s)
        except InvalidTopic as e:
            raise InvalidTopic(f"{what}: invalid topic: {e}") from None

    def create_topic(self, topic, *, retention, timeout):
        self._check("create topic")
        t = self._parse("create topic", topic)
        with self.broker.cond:
            self._ensure(t, retention)

    def ensure_topic(self, topic, *, retention, timeout):
        self.create_topic(topic, retention=retention, timeout=timeout)

    def delete_topic(self, topic, *, timeout):
        self._check("delete topic")
        t = self._parse("delete topic", topic)
        with self.broker.cond:
            self.broker.topics.pop(str(t), None)
            self.broker.broadcast()

    def topic_exists(self, topic, *, timeout):
        self._check("topic exists")
        t = self._parse("topic exists", topic)
        with self.broker.cond:
            return str(t) in self.broker.topics

    def retention(self, topic, *, timeout):
        self._check("retention")
        t = self._parse("retention", topic)
        with self.broker.cond:
            tp = self.broker.topics.get(str(t))
            if tp is None:
                raise RuntimeError(f"retention of {topic}: topic does not exist")
            return tp.retention

    def producer(self, topic, *, timeout):
        self._check("producer")
        t = self._parse("producer", topic)
        with self.broker.cond:
            self._ensure(t)
        return _Producer(self, t)

    def consumer(self, topic, subscription, *, position, mode, timeout):
        self._check("consumer")
        t = self._parse("consumer", topic)
        if subscription == "":
            raise InvalidConfig(f"consumer of {topic}: invalid configuration: empty subscription name")
        if mode == Mode.DEFAULT:
            mode = default_mode(t.cls)
        name = subscription
        if mode == Mode.UNIQUE:
            name = f"{subscription}/unique-{next(self.broker.seq)}"
        b = self.broker
        with b.cond:
            tp = self._ensure(t)
            sb = tp.subs.get(name)
            if sb is None:
                sb = _Subscription(name, tp.next)
                if position == Position.EARLIEST:
                    sb.cursor = tp.first()
                tp.subs[name] = sb
            c = _Consumer(self, t, tp, sb)
            with self.lock:
                self.consumers.add(c)
        return c

    def kill(self):
        """Drop this connection like a crashed process: no close calls; the broker makes its
        unacknowledged messages deliverable again (R5)."""
        with self.lock:
            self.closed = True
            cs, self.consumers = self.consumers, set()
        with self.broker.cond:
            for c in cs:
                c._detach()
            self.broker.broadcast()

    def close(self, *, timeout):
        with self.lock:
            if self.closed:
                return
        self.kill()  # same effect in memory: release what this connection held


class _Producer(Producer):
    def __init__(self, be: MemoryBackend, t: Topic):
        self.be, self.t, self.closed = be, t, False

    def send(self, payload, properties, *, timeout):
        if self.closed:
            raise Closed("send: producer closed")
        self.be._check("send")
        b = self.be.broker
        with b.cond:
            tp = self.be._ensure(self.t)  # recreates a topic deleted after the producer was made
            now = b.now()
            tp.trim(now)
            tp.log.append(_Entry(tp.next, bytes(payload), dict(properties or {}), now))
            tp.offsets.append(tp.next)
            tp.next += 1
            b.broadcast()

    def close(self, *, timeout):
        self.closed = True


# Numbers consumers: a delivery id names its consumer ("<consumer>.<offset>"), so that another
# consumer's delivery is told apart from this one's (UnknownDelivery), as in backends/memory.
_consumer_seq = itertools.count(1)


class _Consumer(Consumer):
    def __init__(self, be: MemoryBackend, t: Topic, tp: _Topic, sub: _Subscription):
        self.be, self.t, self.key, self.tp, self.sub = be, t, str(t), tp, sub
        self.id = str(next(_consumer_seq))
        self.detached = False  # guarded by broker.cond

    def _detach(self) -> None:  # cond held
        if self.detached:
            return
        self.detached = True
        for off, holder in list(self.sub.pending.items()):
            if holder is self:
                self.sub.release(off)

    def _live(self) -> bool:
        tp = self.be.broker.topics.get(self.key)
        return tp is self.tp and tp.subs.get(self.sub.name) is self.sub

    def _take(self, now: float) -> Optional[Delivery]:  # cond held
        if not self._live():
            return None
        s, tp = self.sub, self.tp
        while s.redo:
            off = s.redo.pop(0)
            if s.acked.get(off):
                continue
            e = tp.find(off, now)
            if e is not None:
                return self._hand_out(e)
        while s.cursor < tp.next:
            off = s.cursor
            s.cursor += 1
            e = tp.find(off, now)
            if e is not None:
                return self._hand_out(e)
        return None

    def _hand_out(self, e: _Entry) -> Delivery:
        self.sub.pending[e.offset] = self
        return Delivery(id=f"{self.id}.{e.offset}", topic=str(self.t), payload=e.payload, properties=dict(e.properties))

    def receive(self, *, timeout):
        b = self.be.broker
        deadline = time.monotonic() + timeout
        with b.cond:
            while True:
                if self.detached:
                    raise Closed("receive: consumer closed")
                d = self._take(b.now())
                if d is not None:
                    return d
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                b.cond.wait(left)

    def _settle(self, what: str, d: Delivery, ack: bool) -> None:
        owner, _, offs = d.id.partition(".")
        try:
            off = int(offs)
        except ValueError:
            raise UnknownDelivery(f"{what} {d.id!r}: unknown delivery") from None
        if owner != self.id:
            raise UnknownDelivery(f"{what} {d.id!r}: unknown delivery: handed out by another consumer")
        b = self.be.broker
        with b.cond:
            if self.detached:
                raise Closed(f"{what}: consumer closed")
            if off not in self.sub.pending:
                if self.sub.acked.get(off):
                    return  # settling twice is harmless
                raise UnknownDelivery(f"{what} {d.id!r}: unknown delivery")
            if ack:
                del self.sub.pending[off]
                self.sub.acked[off] = True
            else:
                self.sub.release(off)
                b.broadcast()

    def ack(self, delivery, *, timeout):
        self._settle("ack", delivery, True)

    def nack(self, delivery, *, timeout):
        self._settle("nack", delivery, False)

    def close(self, *, timeout):
        b = self.be.broker
        with b.cond:
            self._detach()
            b.broadcast()
        with self.be.lock:
            self.be.consumers.discard(self)


_BROKER = Broker()


def factory(cfg: Config) -> MemoryBackend:
    return MemoryBackend(_BROKER, cfg)


if __name__ == "__main__":
    serve(factory, name="python-memory", version="1 (port of backends/memory)", restart=_BROKER.restart)
