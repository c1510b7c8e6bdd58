# trustgraph-base 2.8.1 KafkaBackend (sync): ensure_connected() polls once and drops what it got.
import asyncio, sys, uuid
from dataclasses import dataclass
from trustgraph.base.pubsub import get_pubsub
@dataclass
class M:
    data: bytes = b""
b = get_pubsub(pubsub_backend="kafka", kafka_bootstrap_servers=sys.argv[1])
t = f"flow:tg:ec-{uuid.uuid4().hex[:6]}"
asyncio.run(b.ensure_topic(t))
p = b.create_producer(t, M); p.send(M(b"d6-0"), {}); p.close()
c = b.create_consumer(t, "s1", M, initial_position="earliest")
c.ensure_connected()     # Subscriber.start()'s readiness barrier: subscribe + poll(0.5)
try: print("received:", c.receive(timeout_millis=15000).value().data)
except TimeoutError: print("nothing within 15 s")
c.close()
