# trustgraph-base 2.11.1 AsyncRabbitMQBackend: create_consumer sets prefetch_count=1, so a consumer
# holds one unacknowledged message at a time: a second receive() waits until the first is acked.
import asyncio, sys, uuid
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
async def main():
    b = get_async_pubsub(pubsub_backend="rabbitmq", rabbitmq_host=sys.argv[1], rabbitmq_port=int(sys.argv[2]))
    t = f"flow:tg:prefetch-{uuid.uuid4().hex[:6]}"
    await b.ensure_topic(t)
    c = await b.create_consumer(t, "s1", M)
    p = await b.create_producer(t, M)
    for x in (b"m1", b"m2", b"m3"): await p.send(M(x), {})
    m1 = await c.receive(); print("first receive:", m1.value().data)
    try: print("second receive, m1 unacked:", (await asyncio.wait_for(c.receive(), 10)).value().data)
    except asyncio.TimeoutError: print("second receive, m1 unacked: nothing within 10 s (prefetch_count=1)")
    await c.acknowledge(m1)
    print("after ack(m1):", (await asyncio.wait_for(c.receive(), 10)).value().data)
    await c.close(); await p.close(); await b.close()
asyncio.run(main())
