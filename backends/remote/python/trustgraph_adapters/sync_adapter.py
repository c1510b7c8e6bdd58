"""trustgraph-kafka-sync: TrustGraph's synchronous Kafka backend (KafkaBackend on
confluent-kafka, trustgraph/base/kafka_backend.py), which trustgraph-base shipped up
to 2.8.1. Legacy: 2.8.2 deleted it, so no current release ships this code (they have only
the aiokafka AsyncKafkaBackend, the trustgraph-kafka adapter); run by name only.

    python -m trustgraph_adapters.sync_adapter kafka

The backend is built by TrustGraph's own factory, trustgraph.base.pubsub.get_pubsub
(**params), with the parameters a TrustGraph processor passes.

Contract call -> TrustGraph call:

    Producer(topic)            await ensure_topic(topic); create_producer(topic, Payload)
    Send                       producer.send(Payload(data), properties)  (produce + flush)
    Producer.Close             producer.close()  (flush)
    Consumer(topic, sub, pos)  await ensure_topic(topic); create_consumer(topic, sub, Payload,
                               initial_position=pos); consumer.ensure_connected() - the
                               readiness barrier TrustGraph's own Subscriber.start() calls
    Receive(ctx)               consumer.receive(timeout_millis=<time left>); its TimeoutError
                               means nothing arrived
    Ack / Nack                 consumer.acknowledge(msg) / consumer.negative_acknowledge(msg)
    Consumer.Close             consumer.close()
    CreateTopic / DeleteTopic  await create_topic(topic) / await delete_topic(topic)
    TopicExists / EnsureTopic  await topic_exists(topic) / await ensure_topic(topic)
    Retention                  none in TrustGraph -> error naming it
    Backend.Close              backend.close()

TrustGraph's topic lifecycle methods are coroutines even on this synchronous backend
(they run the AdminClient in asyncio.to_thread), so those adapter methods are async;
the producer and consumer methods are plain functions the SDK runs in worker threads.
"""

from __future__ import annotations

import sys
from importlib.metadata import version as dist_version
from typing import Any, Optional

import pubsub_adapter
from pubsub_adapter import Config, Delivery, Mode, Position, errors

from . import common


class Producer(pubsub_adapter.Producer):
    def __init__(self, tg_producer: Any) -> None:
        self._p = tg_producer

    def send(self, payload: bytes, properties, *, timeout: float) -> None:
        try:
            self._p.send(common.payload_of(payload), dict(properties))
        except Exception as e:  # noqa: BLE001 - labelled, never hidden
            raise common.translate(e, "producer.send") from e

    def close(self, *, timeout: float) -> None:
        try:
            self._p.close()
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "producer.close") from e


class Consumer(pubsub_adapter.Consumer):
    def __init__(self, topic: str, tg_consumer: Any) -> None:
        self._topic = topic
        self._c = tg_consumer
        self._deliveries = common.Deliveries()

    def receive(self, *, timeout: float) -> Optional[Delivery]:
        try:
            msg = self._c.receive(timeout_millis=max(1, int(timeout * 1000)))
        except TimeoutError:
            return None
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "consumer.receive") from e
        try:
            return self._deliveries.add(self._topic, msg)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "message.value (TrustGraph's deserialisation)") from e

    def ack(self, delivery: Delivery, *, timeout: float) -> None:
        msg = self._deliveries.get(delivery)
        try:
            self._c.acknowledge(msg)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "consumer.acknowledge") from e

    def nack(self, delivery: Delivery, *, timeout: float) -> None:
        msg = self._deliveries.get(delivery)
        try:
            self._c.negative_acknowledge(msg)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "consumer.negative_acknowledge") from e

    def close(self, *, timeout: float) -> None:
        try:
            self._c.close()
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "consumer.close") from e


class Backend(common.TopicAdmin, pubsub_adapter.Backend):
    def __init__(self, config: Config, tg_backend: Any) -> None:
        self._config = config
        self._b = tg_backend

    def unsupported(self):
        out = common.api_fit("kafka")  # 2.8.1's synchronous backend is Kafka's only
        out[common.CAP_TLS] = common.NO_TLS_KAFKA_SYNC
        return out

    async def producer(self, topic: str, *, timeout: float):
        try:
            await self._b.ensure_topic(topic)
            p = self._b.create_producer(topic, common.Payload)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "create_producer") from e
        return Producer(p)

    async def consumer(self, topic: str, subscription: str, *, position: Position, mode: Mode,
                       timeout: float):
        import asyncio

        common.check_mode(topic, mode)
        try:
            await self._b.ensure_topic(topic)
            c = self._b.create_consumer(topic, subscription, common.Payload,
                                        initial_position=position.value)
            # ensure_connected blocks (subscribe + a 0.5 s poll): off the event loop.
            await asyncio.to_thread(c.ensure_connected)
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "create_consumer") from e
        return Consumer(topic, c)

    def close(self, *, timeout: float) -> None:
        try:
            self._b.close()
        except Exception as e:  # noqa: BLE001
            raise common.translate(e, "backend.close") from e


def factory(config: Config) -> Backend:
    from trustgraph.base.pubsub import get_pubsub

    params = common.factory_params("kafka", config.settings)
    print(f"{config.name}: get_pubsub({common.describe(params)})", file=sys.stderr, flush=True)
    try:
        b = get_pubsub(**params)
    except Exception as e:  # noqa: BLE001
        raise common.translate(e, "get_pubsub") from e
    return Backend(config, b)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["kafka"]:
        print("usage: python -m trustgraph_adapters.sync_adapter kafka", file=sys.stderr)
        sys.exit(2)
    pubsub_adapter.serve(factory, name="trustgraph-kafka-sync",
                         version=f"trustgraph-base {dist_version('trustgraph-base')}")


if __name__ == "__main__":
    main()
