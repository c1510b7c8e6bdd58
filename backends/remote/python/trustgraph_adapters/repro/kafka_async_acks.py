# trustgraph-base 2.11.1 AsyncKafkaBackend: nack is a no-op, ack commits everything polled.
import asyncio, sys, uuid
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
async def main():
    b = get_async_pubsub(pubsub_backend="kafka", kafka_bootstrap_servers=sys.argv[1])
    t, sub = f"flow:tg:acks-{uuid.uuid4().hex[:6]}", "s1"
    await b.create_topic(t)
    p = await b.create_producer(t, M)
    for x in (b"m1", b"m2"): await p.send(M(x), {})
    c = await b.create_consumer(t, sub, M, initial_position="earliest")
    m1 = await c.receive(); m2 = await c.receive()
    await c.negative_acknowledge(m1)
    try: print("after nack(m1):", (await asyncio.wait_for(c.receive(), 10)).value().data)
    except asyncio.TimeoutError: print("after nack(m1): nothing within 10 s")
    await c.acknowledge(m1); await c.close()   # ack m1 only, m2 never acked
    c = await b.create_consumer(t, sub, M, initial_position="earliest")
    try: print("reopened:", (await asyncio.wait_for(c.receive(), 10)).value().data)
    except asyncio.TimeoutError: print("reopened: nothing within 10 s (m2 was committed by ack(m1))")
    await c.close(); await p.close()
asyncio.run(main())
