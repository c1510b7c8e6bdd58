# trustgraph-base 2.11.1 AsyncRabbitMQBackend: initial_position is ignored and a topic is a fanout
# exchange, so a message sent before a subscription's queue exists is dropped by the broker.
import asyncio, sys, uuid
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
async def main():
    b = get_async_pubsub(pubsub_backend="rabbitmq", rabbitmq_host=sys.argv[1], rabbitmq_port=int(sys.argv[2]))
    t = f"flow:tg:earliest-{uuid.uuid4().hex[:6]}"
    await b.ensure_topic(t)
    p = await b.create_producer(t, M); await p.send(M(b"m1"), {}); await p.close()  # confirmed, then closed
    c = await b.create_consumer(t, "s1", M, initial_position="earliest")
    try: print("earliest subscriber:", (await asyncio.wait_for(c.receive(), 10)).value().data)
    except asyncio.TimeoutError: print("earliest subscriber: nothing within 10 s (m1 was dropped: no queue was bound)")
    await c.close(); await b.close()
asyncio.run(main())
