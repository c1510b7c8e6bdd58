"""trustgraph-kafka, trustgraph-pulsar and trustgraph-rabbitmq: TrustGraph's async pub/sub
backends (trustgraph-base 2.8.2 and newer: AsyncKafkaBackend on aiokafka, AsyncPulsarBackend
on pulsar.asyncio, AsyncRabbitMQBackend on aio-pika) behind the harness's adapter protocol.

    python -m trustgraph_adapters.async_adapter kafka|pulsar|rabbitmq

The backend is built by TrustGraph's own factory, trustgraph.base.pubsub.
get_async_pubsub(**params), with the parameters a TrustGraph processor passes
(pubsub_backend plus the add_pubsub_args connection options), taken from the
settings under TrustGraph's environment names.

Contract call -> TrustGraph call (see README "TrustGraph's backends in the matrix"):

    Producer(topic)            ensure_topic(topic); create_producer(topic, Payload)
    Send                       producer.send(Payload(data), properties)
    Producer.Close             producer.close()
    Consumer(topic, sub, pos)  ensure_topic(topic); create_consumer(topic, sub, Payload,
                               initial_position=pos); mode: TrustGraph has none (the class
                               decides), so only the class's own mode can be asked for
    Receive(ctx)               await consumer.receive(): TrustGraph's receive has no timeout
                               ("shutdown is signalled by cancelling the awaiting task"); the
                               adapter keeps ONE outstanding receive per consumer and bounds
                               its wait on it by the call's deadline, so a deadline never
                               cancels a receive that may already hold a message. The next
                               Receive awaits the same call. Close cancels it, as TrustGraph's
                               shutdown does.
    Ack / Nack                 consumer.acknowledge(msg) / consumer.negative_acknowledge(msg)
    Consumer.Close             consumer.close()
    CreateTopic / DeleteTopic  create_topic(topic) / delete_topic(topic)
    TopicExists / EnsureTopic  topic_exists(topic) / ensure_topic(topic)
    Retention                  none in TrustGraph -> error naming it
    Backend.Close              backend.close()

Producer, Consumer and Send await TrustGraph within the call's deadline (as the SDK would);
when TrustGraph's call outlives it, the Timeout quotes what TrustGraph's client logged about the
topic meanwhile (common.bounded), so the spec's message names what it was stuck on.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Optional

import pubsub_adapter
from pubsub_adapter import (CAP_TRANSIENT_REDELIVERY, CAP_TRANSIENT_REPLAY,
                            Config, Delivery, Mode, Position, errors)

from . import common

TRANSIENT_PULSAR = (
    "TrustGraph maps request, response and notify to non-persistent:// topics "
    "(AsyncPulsarBackend._map_topic): the broker keeps no copy, so a message cannot be "
    "delivered again after a nack or a reopen")
REPLAY_PULSAR = (
    "TrustGraph maps request, response and notify to non-persistent:// topics "
    "(AsyncPulsarBackend._map_topic): a message reaches only consumers connected when it "
    "arrives; nothing is kept for a later subscriber")


class Producer(pubsub_adapter.Producer):
    def __init__(self, topic: str, tg_producer: Any) -> None:
        self._topic = topic
        self._p = tg_producer

    async def send(self, payload: bytes, properties, *, timeout: float) -> None:
        try:
            await common.bounded(self._p.send(common.payload_of(payload), dict(properties)),
                                 timeout, "producer.send", self._topic)
        except Exception as e:  # noqa: BLE001 - labelled, never hidden
            raise common.translate(e, "producer.send") from e

    async def close(self, *, timeout: float) -> None:
        try:
            await self._p.close()
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "producer.close") from e


class Consumer(pubsub_adapter.Consumer):
    def __init__(self, topic: str, tg_consumer: Any) -> None:
        self._topic = topic
        self._c = tg_consumer
        self._deliveries = common.Deliveries()
        self._pending: Optional[asyncio.Task] = None

    async def receive(self, *, timeout: float) -> Optional[Delivery]:
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._c.receive())
        done, _ = await asyncio.wait({self._pending}, timeout=timeout)
        if not done:
            return None
        task, self._pending = self._pending, None
        try:
            msg = task.result()
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "consumer.receive") from e
        try:
            return self._deliveries.add(self._topic, msg)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "message.value (TrustGraph's deserialisation)") from e

    async def ack(self, delivery: Delivery, *, timeout: float) -> None:
        msg = self._deliveries.get(delivery)
        try:
            await self._c.acknowledge(msg)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "consumer.acknowledge") from e

    async def nack(self, delivery: Delivery, *, timeout: float) -> None:
        msg = self._deliveries.get(delivery)
        try:
            await self._c.negative_acknowledge(msg)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "consumer.negative_acknowledge") from e

    async def close(self, *, timeout: float) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        try:
            await self._c.close()
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "consumer.close") from e


class Backend(common.TopicAdmin, pubsub_adapter.Backend):
    def __init__(self, kind: str, config: Config, tg_backend: Any) -> None:
        self._kind = kind
        self._config = config
        self._b = tg_backend

    def unsupported(self):
        out = common.api_fit(self._kind)
        if self._kind == "pulsar":
            out[CAP_TRANSIENT_REDELIVERY] = TRANSIENT_PULSAR
            out[CAP_TRANSIENT_REPLAY] = REPLAY_PULSAR
        return out

    async def producer(self, topic: str, *, timeout: float):
        try:
            p = await common.bounded(self._producer(topic), timeout, "ensure_topic + create_producer", topic)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "create_producer") from e
        return Producer(topic, p)

    async def _producer(self, topic: str):
        await self._b.ensure_topic(topic)
        return await self._b.create_producer(topic, common.Payload)

    async def _consumer(self, topic: str, subscription: str, position: Position):
        await self._b.ensure_topic(topic)
        return await self._b.create_consumer(topic, subscription, common.Payload,
                                             initial_position=position.value)

    async def consumer(self, topic: str, subscription: str, *, position: Position, mode: Mode,
                       timeout: float):
        common.check_mode(topic, mode)
        try:
            c = await common.bounded(self._consumer(topic, subscription, position), timeout,
                                     "ensure_topic + create_consumer", topic)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "create_consumer") from e
        return Consumer(topic, c)

    async def close(self, *, timeout: float) -> None:
        try:
            await self._b.close()
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "backend.close") from e


def make_factory(kind: str):
    common.install_log_capture()

    async def factory(config: Config) -> Backend:
        from trustgraph.base.pubsub import get_async_pubsub

        print(f"{config.name}: code under test: {common.code_under_test()}", file=sys.stderr, flush=True)

        params = common.factory_params(kind, config.settings)
        if kind == "pulsar":
            from . import deployment

            admin, token = deployment.settings_admin(config.settings)
            await asyncio.to_thread(deployment.ensure_pulsar_topology, admin, token, config.name)
        print(f"{config.name}: get_async_pubsub({common.describe(params)})", file=sys.stderr, flush=True)
        try:
            b = get_async_pubsub(**params)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "get_async_pubsub") from e
        return Backend(kind, config, b)

    return factory


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in ("kafka", "pulsar", "rabbitmq"):
        print("usage: python -m trustgraph_adapters.async_adapter kafka|pulsar|rabbitmq", file=sys.stderr)
        sys.exit(2)
    kind = argv[0]
    pubsub_adapter.serve(make_factory(kind), name=f"trustgraph-{kind}",
                         version=common.code_under_test())


if __name__ == "__main__":
    main()
