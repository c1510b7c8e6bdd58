"""The gRPC server behind pubsub_adapter.serve: translates the protocol
(proto/pubsub/v1/adapter.proto) to calls on the author's Backend/Producer/Consumer.

Design: one asyncio gRPC server (grpc.aio). ``async def`` methods of the author
run on its event loop under ``asyncio.wait_for``; plain ``def`` methods run in a
worker thread each (a thread pool sized for many blocked receives), so sync and
async client libraries are hosted alike. Every call's budget is the gRPC
deadline the harness sent, less a small margin so the answer (often a TIMEOUT)
arrives before the harness gives up on its side.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import io
import itertools
import os
import sys
import threading
import traceback
from typing import Any, Callable, Dict, Optional, Tuple

import grpc
from google.protobuf import duration_pb2

from pubsub.v1 import adapter_pb2 as pb
from pubsub.v1 import adapter_pb2_grpc as pb_grpc

from . import errors
from .adapter import Config, Delivery, Mode, Position

PROTOCOL_VERSION = pb.PROTOCOL_VERSION_1
ANNOUNCE = "PUBSUB_ADAPTER_LISTENING"
# A call with no deadline (the harness always sends one) gets this budget.
DEFAULT_BUDGET = 120.0

_CODES = {
    "timeout": pb.ERROR_CODE_TIMEOUT,
    "canceled": pb.ERROR_CODE_CANCELED,
    "invalid_topic": pb.ERROR_CODE_INVALID_TOPIC,
    "closed": pb.ERROR_CODE_CLOSED,
    "unknown_delivery": pb.ERROR_CODE_UNKNOWN_DELIVERY,
    "auth": pb.ERROR_CODE_AUTH,
    "unavailable": pb.ERROR_CODE_UNAVAILABLE,
    "unknown_backend": pb.ERROR_CODE_UNKNOWN_BACKEND,
    "invalid_config": pb.ERROR_CODE_INVALID_CONFIG,
    "internal": pb.ERROR_CODE_INTERNAL,
}


def _seconds(d: duration_pb2.Duration) -> float:
    return d.seconds + d.nanos / 1e9


def _duration(s: float) -> duration_pb2.Duration:
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(round(s * 1e9)))
    return d


def _where(e: BaseException) -> str:
    """Where e was raised: the last frame of its traceback, or of its cause's when it was
    re-raised from one (an adapter translating a library's exception), which is the frame in
    the code under test."""
    src = e.__cause__ if e.__cause__ is not None and e.__cause__.__traceback__ is not None else e
    tb = traceback.extract_tb(src.__traceback__)
    if not tb:
        return ""
    f = tb[-1]
    path = f.filename
    parts = path.split(os.sep)
    if "site-packages" in parts:  # show the package path, not the virtualenv's
        path = os.sep.join(parts[parts.index("site-packages") + 1:])
    else:
        path = os.path.basename(path)
    return f" (at {path}:{f.lineno} in {f.name})"


def _error(e: BaseException) -> pb.Error:
    """The wire form of an exception raised by the author's code."""
    if isinstance(e, errors.PubSubError):
        msg = str(e) or type(e).__name__
        if e.code == "internal":
            msg += _where(e)
        return pb.Error(code=_CODES.get(e.code, pb.ERROR_CODE_INTERNAL), message=msg)
    if isinstance(e, (asyncio.TimeoutError, TimeoutError)):
        return pb.Error(code=pb.ERROR_CODE_TIMEOUT, message=str(e) or "timeout")
    traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    return pb.Error(code=pb.ERROR_CODE_INTERNAL, message=f"{type(e).__name__}: {e}{_where(e)}")


def _late(fn, fut) -> None:
    """A sync method abandoned at its deadline finished later: say so on stderr (the harness
    attaches it to the spec), since whatever it returned is lost to the caller."""
    if fut.cancelled():
        return
    e = fut.exception()
    what = f"raised {type(e).__name__}: {e}" if e else f"returned {fut.result()!r:.200}"
    print(f"pubsub_adapter: {getattr(fn, '__qualname__', fn)} overran its deadline and then {what}; "
          "the harness had already been answered with a timeout", file=sys.stderr, flush=True)


class Servicer(pb_grpc.AdapterServicer):
    def __init__(self, factory: Callable, name: str, version: str, restart: Optional[Callable] = None):
        self.factory = factory
        self.restart = restart
        self.name = name
        self.version = version
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=512, thread_name_prefix="adapter")
        self.ids = itertools.count(1)
        # handle -> object; children: backend handle -> its producer/consumer handles
        self.backends: Dict[int, Any] = {}
        self.producers: Dict[int, Tuple[Any, int]] = {}
        self.consumers: Dict[int, Tuple[Any, int]] = {}
        self.children: Dict[int, set] = {}

    # -- plumbing ---------------------------------------------------------------

    @staticmethod
    def _budget(context) -> Tuple[float, float]:
        """(the author's timeout, how long the SDK waits for it): both a little before the
        harness's own deadline, so that the answer (often a TIMEOUT) reaches it in time, and
        the SDK waits a little longer than the author was told, so a method that honours its
        timeout is not abandoned at the same instant it returns."""
        r = context.time_remaining()
        if r is None:
            return DEFAULT_BUDGET, DEFAULT_BUDGET
        # Small: the contract wants a Receive to wait out (nearly) its whole deadline (D7 fails
        # one that returns 100 ms early). When the answer still arrives late (a loaded machine),
        # the harness's own deadline has already made it a timeout, which it also is.
        margin = min(0.05, r * 0.1)
        return max(r - margin, 0.001), max(r - margin / 2, 0.001)

    async def _run(self, context, fn, *args, timeout: bool = True, **kwargs):
        budget, wait = self._budget(context)
        cf = None
        ran_in: Dict[str, int] = {}  # the worker thread's ident, for its stack at the deadline
        if timeout:
            kwargs["timeout"] = budget
        if inspect.iscoroutinefunction(fn):
            fut = asyncio.ensure_future(fn(*args, **kwargs))
        else:
            call = functools.partial(fn, *args, **kwargs)

            def in_thread():
                ran_in["ident"] = threading.get_ident()
                return call()

            cf = self.pool.submit(in_thread)
            fut = asyncio.wrap_future(cf)
        name = getattr(fn, "__qualname__", fn)

        def overran(why: str) -> None:
            # Say on stderr (attached to the spec) what was still running at the deadline, and
            # where: the stack of the abandoned thread, or of the coroutine before it is cancelled.
            if cf is not None and not cf.done():
                cf.add_done_callback(functools.partial(_late, fn))
                what = "abandoned (a thread cannot be cancelled)"
                frame = sys._current_frames().get(ran_in.get("ident", -1))
                stack = "".join(traceback.format_stack(frame)) if frame is not None else "  (not started yet: every worker thread was busy)\n"
            else:
                what = "cancelled"
                buf = io.StringIO()
                if cf is None and not fut.done():
                    fut.print_stack(file=buf)
                stack = buf.getvalue()
            print(f"pubsub_adapter: {name} was still running at its deadline ({why}); {what}; it was at:\n{stack}",
                  file=sys.stderr, end="" if stack.endswith("\n") else "\n", flush=True)

        try:
            done, _ = await asyncio.wait({fut}, timeout=wait)
        except asyncio.CancelledError:
            # The harness gave up first (its deadline passed before this answer could reach it,
            # or it cancelled the call): grpc cancels this handler.
            overran("the harness gave up on the call first")
            fut.cancel()
            raise
        if not done:
            overran(f"timeout {budget:.3f}s")
            fut.cancel()
            raise errors.Timeout(f"{name} did not return within its deadline ({budget:.3f}s)")
        try:
            return fut.result()
        except asyncio.TimeoutError as e:
            # The author's code raised a timeout: that is a timeout too.
            raise errors.Timeout(f"{name} did not return within its deadline ({budget:.3f}s)") from e

    def _backend(self, h: int):
        b = self.backends.get(h)
        if b is None:
            raise errors.Closed(f"backend {h} is closed")
        return b

    def _producer(self, h: int):
        p = self.producers.get(h)
        if p is None:
            raise errors.Closed(f"producer {h} is closed")
        return p[0]

    def _consumer(self, h: int):
        c = self.consumers.get(h)
        if c is None:
            raise errors.Closed(f"consumer {h} is closed")
        return c[0]

    def _forget(self, bh: int) -> None:
        for h in self.children.pop(bh, set()):
            self.producers.pop(h, None)
            self.consumers.pop(h, None)
        self.backends.pop(bh, None)

    # -- protocol -----------------------------------------------------------------

    async def Handshake(self, request, context):
        if request.protocol_version != PROTOCOL_VERSION:
            return pb.HandshakeResponse(
                protocol_version=PROTOCOL_VERSION, adapter=self.name, version=self.version,
                error=pb.Error(code=pb.ERROR_CODE_INVALID_CONFIG,
                               message=f"adapter speaks protocol {PROTOCOL_VERSION}, harness {request.protocol_version}"))
        return pb.HandshakeResponse(protocol_version=PROTOCOL_VERSION, adapter=self.name, version=self.version)

    async def Open(self, request, context):
        cfg = Config(
            name=request.name,
            settings=dict(request.settings),
            retention={k: _seconds(v) for k, v in request.retention.items()},
        )
        try:
            b = await self._run(context, self.factory, cfg, timeout=False)
            uns = b.unsupported()
            if inspect.isawaitable(uns):
                uns = await uns
        except Exception as e:  # noqa: BLE001 - every error is a result
            return pb.OpenResponse(error=_error(e))
        h = next(self.ids)
        self.backends[h] = b
        self.children[h] = set()
        return pb.OpenResponse(backend=h, unsupported=dict(uns or {}))

    async def _empty(self, fn):
        try:
            await fn()
        except Exception as e:  # noqa: BLE001
            return pb.Empty(error=_error(e))
        return pb.Empty()

    @staticmethod
    def _retention(request) -> Optional[float]:
        return _seconds(request.retention) if request.HasField("retention") else None

    async def CreateTopic(self, request, context):
        return await self._empty(lambda: self._run(
            context, self._backend(request.backend).create_topic, request.topic, retention=self._retention(request)))

    async def EnsureTopic(self, request, context):
        return await self._empty(lambda: self._run(
            context, self._backend(request.backend).ensure_topic, request.topic, retention=self._retention(request)))

    async def DeleteTopic(self, request, context):
        return await self._empty(lambda: self._run(context, self._backend(request.backend).delete_topic, request.topic))

    async def TopicExists(self, request, context):
        try:
            ok = await self._run(context, self._backend(request.backend).topic_exists, request.topic)
        except Exception as e:  # noqa: BLE001
            return pb.TopicExistsResponse(error=_error(e))
        return pb.TopicExistsResponse(exists=bool(ok))

    async def Retention(self, request, context):
        try:
            s = await self._run(context, self._backend(request.backend).retention, request.topic)
        except Exception as e:  # noqa: BLE001
            return pb.RetentionResponse(error=_error(e))
        return pb.RetentionResponse(retention=_duration(float(s)))

    async def CloseBackend(self, request, context):
        b = self.backends.get(request.handle)
        if b is None:
            return pb.Empty()  # idempotent
        try:
            await self._run(context, b.close)
        except Exception as e:  # noqa: BLE001
            return pb.Empty(error=_error(e))
        finally:
            self._forget(request.handle)
        return pb.Empty()

    async def KillBackend(self, request, context):
        b = self.backends.get(request.handle)
        if b is None:
            return pb.Empty()
        kill = getattr(b, "kill", None)
        if kill is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{type(b).__name__} has no kill()")
        try:
            await self._run(context, kill, timeout=False)
        except Exception as e:  # noqa: BLE001
            return pb.Empty(error=_error(e))
        finally:
            self._forget(request.handle)
        return pb.Empty()

    async def RestartBroker(self, request, context):
        if self.restart is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{self.name} has no in-process broker to restart")
        try:
            await self._run(context, self.restart, timeout=False)
        except Exception as e:  # noqa: BLE001
            return pb.Empty(error=_error(e))
        return pb.Empty()

    async def NewProducer(self, request, context):
        try:
            p = await self._run(context, self._backend(request.backend).producer, request.topic)
        except Exception as e:  # noqa: BLE001
            return pb.HandleResponse(error=_error(e))
        h = next(self.ids)
        self.producers[h] = (p, request.backend)
        self.children.setdefault(request.backend, set()).add(h)
        return pb.HandleResponse(handle=h)

    async def Send(self, request, context):
        m = request.message
        return await self._empty(lambda: self._run(
            context, self._producer(request.producer).send, bytes(m.payload), dict(m.properties)))

    async def CloseProducer(self, request, context):
        p = self.producers.pop(request.handle, None)
        if p is None:
            return pb.Empty()
        self.children.get(p[1], set()).discard(request.handle)
        return await self._empty(lambda: self._run(context, p[0].close))

    async def NewConsumer(self, request, context):
        position = Position.EARLIEST if request.position == pb.POSITION_EARLIEST else Position.LATEST
        mode = {pb.MODE_SHARED: Mode.SHARED, pb.MODE_UNIQUE: Mode.UNIQUE}.get(request.mode, Mode.DEFAULT)
        try:
            c = await self._run(context, self._backend(request.backend).consumer, request.topic,
                                request.subscription, position=position, mode=mode)
        except Exception as e:  # noqa: BLE001
            return pb.HandleResponse(error=_error(e))
        h = next(self.ids)
        self.consumers[h] = (c, request.backend)
        self.children.setdefault(request.backend, set()).add(h)
        return pb.HandleResponse(handle=h)

    async def Receive(self, request, context):
        try:
            d = await self._run(context, self._consumer(request.handle).receive)
        except Exception as e:  # noqa: BLE001
            return pb.ReceiveResponse(error=_error(e))
        if d is None:
            return pb.ReceiveResponse(error=pb.Error(code=pb.ERROR_CODE_TIMEOUT, message="receive: nothing arrived before the deadline"))
        return pb.ReceiveResponse(delivery=pb.Delivery(
            id=d.id, topic=d.topic, payload=bytes(d.payload), properties=dict(d.properties or {})))

    @staticmethod
    def _delivery(request) -> Delivery:
        d = request.delivery
        return Delivery(id=d.id, topic=d.topic, payload=bytes(d.payload), properties=dict(d.properties))

    async def Ack(self, request, context):
        return await self._empty(lambda: self._run(context, self._consumer(request.consumer).ack, self._delivery(request)))

    async def Nack(self, request, context):
        return await self._empty(lambda: self._run(context, self._consumer(request.consumer).nack, self._delivery(request)))

    async def CloseConsumer(self, request, context):
        c = self.consumers.pop(request.handle, None)
        if c is None:
            return pb.Empty()
        self.children.get(c[1], set()).discard(request.handle)
        return await self._empty(lambda: self._run(context, c[0].close))


async def _main(factory, name: str, version: str, restart) -> None:
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", 64 << 20),
        ("grpc.max_send_message_length", 64 << 20),
    ])
    pb_grpc.add_AdapterServicer_to_server(Servicer(factory, name, version, restart), server)
    listen = os.environ.get("PUBSUB_ADAPTER_LISTEN", "127.0.0.1:0")
    port = server.add_insecure_port(listen)
    addr = listen if listen.startswith("unix:") else f"127.0.0.1:{port}"
    await server.start()
    print(f"{ANNOUNCE} {addr}", flush=True)
    await server.wait_for_termination()


def serve(factory, *, name: str, version: str, restart=None) -> None:
    """See pubsub_adapter.serve."""
    asyncio.run(_main(factory, name, version, restart))
