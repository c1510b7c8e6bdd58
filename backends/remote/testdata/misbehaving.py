"""A test adapter on the SDK whose methods misbehave on purpose (backends/remote/sdk_test.go)."""

import asyncio
import time

import pubsub_adapter
from pubsub_adapter import errors


class Consumer(pubsub_adapter.Consumer):
    async def receive(self, *, timeout):  # async, ignores its timeout
        await asyncio.sleep(3600)

    def ack(self, delivery, *, timeout):  # sync, ignores its timeout
        time.sleep(timeout + 0.5)

    def nack(self, delivery, *, timeout):
        try:
            {}["missing"]
        except KeyError as e:
            raise errors.Internal(f"the library raised KeyError: {e}") from e

    async def close(self, *, timeout):
        pass


class Backend(pubsub_adapter.Backend):
    def __init__(self, cfg):
        self.cfg = cfg

    def unsupported(self):
        return {pubsub_adapter.CAP_RETENTION_EXPIRY: "test adapter"}

    async def consumer(self, topic, subscription, *, position, mode, timeout):
        return Consumer()

    def topic_exists(self, topic, *, timeout):
        raise ValueError("plain bug")

    def close(self, *, timeout):
        pass


def factory(cfg):
    if cfg.settings.get("BAD") == "1":
        raise errors.AuthError("bad credentials for " + cfg.name)
    return Backend(cfg)


if __name__ == "__main__":
    pubsub_adapter.serve(factory, name="misbehaving", version="0")
