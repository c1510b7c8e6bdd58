# trustgraph-base 2.11.1 AsyncPulsarBackend: two subscribers of one response topic with the same
# subscription name (Kafka's TrustGraph backend gives each its own group; Pulsar's uses Exclusive).
import asyncio, sys, uuid
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
async def main():   # tenant tg / namespace response must exist (TrustGraph's PulsarTopology initialiser)
    b = get_async_pubsub(pubsub_backend="pulsar", pulsar_host=sys.argv[1], pulsar_admin_url=sys.argv[2])
    t = f"response:tg:fan-{uuid.uuid4().hex[:6]}"
    c1 = await b.create_consumer(t, "sub", M)
    try: c2 = await b.create_consumer(t, "sub", M); print("second subscriber ok")
    except Exception as e: print("second subscriber:", type(e).__name__, e)
    await c1.close(); await b.close()
asyncio.run(main())
