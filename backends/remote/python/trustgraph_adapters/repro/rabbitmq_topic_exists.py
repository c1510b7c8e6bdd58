# trustgraph-base 2.11.1 AsyncRabbitMQBackend: topic_exists is False for every response/notify
# topic (create_topic is a no-op for them), even while a producer and a consumer use it; and
# create_topic accepts topic strings other backends reject.
import asyncio, sys, uuid
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
async def main():
    b = get_async_pubsub(pubsub_backend="rabbitmq", rabbitmq_host=sys.argv[1], rabbitmq_port=int(sys.argv[2]))
    u = uuid.uuid4().hex[:6]
    for cls in ("flow", "request", "response", "notify"):
        t = f"{cls}:tg:exists-{u}"
        await b.create_topic(t); created = await b.topic_exists(t)
        c = await b.create_consumer(t, "s1", M); p = await b.create_producer(t, M)
        print(f"{cls:8}: topic_exists after create_topic {created}, with a consumer and a producer {await b.topic_exists(t)}")
        await c.close(); await p.close()
    for bad in ("", "flow::x", "flow:tg:", f"flow:t g:{u}", f"flow:tg:{u}/slash"):
        try: await b.create_topic(bad); print(f"create_topic({bad!r}) accepted; topic_exists {await b.topic_exists(bad)}")
        except Exception as e: print(f"create_topic({bad!r}) rejected: {type(e).__name__}: {e}")
    await b.close()
asyncio.run(main())
