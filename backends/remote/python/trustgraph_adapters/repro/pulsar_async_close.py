# trustgraph-base 2.11.1 AsyncPulsarBackend: consumer.close() unsubscribes, so the
# subscription (and its position) is gone; nack redelivery waits the client's default delay.
import asyncio, sys, uuid, time
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
async def main():   # tenant tg / namespace flow must exist (TrustGraph's PulsarTopology initialiser)
    b = get_async_pubsub(pubsub_backend="pulsar", pulsar_host=sys.argv[1], pulsar_admin_url=sys.argv[2])
    t, sub = f"flow:tg:close-{uuid.uuid4().hex[:6]}", "s1"
    c = await b.create_consumer(t, sub, M, initial_position="latest")
    p = await b.create_producer(t, M)
    await p.send(M(b"m1"), {}); m1 = await c.receive(); t0 = time.time()
    await c.negative_acknowledge(m1)
    m = await asyncio.wait_for(c.receive(), 90); print(f"nacked m1 back after {time.time()-t0:.1f} s"); await c.acknowledge(m)
    await c.close()                       # closing, not meant as unsubscribing
    await p.send(M(b"m2"), {})            # sent while nobody is connected
    c = await b.create_consumer(t, sub, M, initial_position="latest")
    try: print("reopened:", (await asyncio.wait_for(c.receive(), 10)).value().data)
    except asyncio.TimeoutError: print("reopened: nothing within 10 s (close() unsubscribed; m2 lost)")
    await c.close(); await p.close(); await b.close()
asyncio.run(main())
