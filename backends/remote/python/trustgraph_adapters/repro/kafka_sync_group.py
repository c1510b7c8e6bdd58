# trustgraph-base 2.8.1 KafkaBackend (sync): 3 competing consumers on one flow subscription.
import asyncio, sys, uuid, threading
from dataclasses import dataclass
from trustgraph.base.pubsub import get_pubsub
@dataclass
class M:
    data: bytes = b""
b = get_pubsub(pubsub_backend="kafka", kafka_bootstrap_servers=sys.argv[1])
t = f"flow:tg:g1-{uuid.uuid4().hex[:6]}"; asyncio.run(b.ensure_topic(t))
cs = [b.create_consumer(t, "grp", M, initial_position="latest") for _ in range(3)]
for c in cs: c.ensure_connected()          # Subscriber.start()'s readiness barrier
p = b.create_producer(t, M)
for i in range(60): p.send(M(f"g1-{i}".encode()), {})
got = [[] for _ in cs]
def loop(i):
    for _ in range(15):                     # 15 x 2 s, TrustGraph's own receive timeout
        try: got[i].append(cs[i].receive(timeout_millis=2000).value().data)
        except TimeoutError: pass
ts = [threading.Thread(target=loop, args=(i,)) for i in range(3)]; [x.start() for x in ts]; [x.join() for x in ts]
print("per consumer:", [len(g) for g in got], "total", sum(map(len, got)), "of 60")
