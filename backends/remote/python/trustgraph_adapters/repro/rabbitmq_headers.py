# trustgraph-base 2.11.1 AsyncRabbitMQBackend: properties travel as AMQP headers
# (aio_pika.Message(headers=properties)); a field-table key is at most 128 bytes, and pamqp
# truncates a longer one (it logs "Truncating key ... to 128 bytes"), so the key comes back changed.
import asyncio, sys, uuid
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
async def main():
    b = get_async_pubsub(pubsub_backend="rabbitmq", rabbitmq_host=sys.argv[1], rabbitmq_port=int(sys.argv[2]))
    t = f"flow:tg:headers-{uuid.uuid4().hex[:6]}"
    await b.ensure_topic(t)
    c = await b.create_consumer(t, "s1", M); p = await b.create_producer(t, M)
    sent = {"K" * 300: "long key", "k": "v"}
    await p.send(M(b"m1"), sent)
    got = (await asyncio.wait_for(c.receive(), 10)).properties()
    print("sent key lengths:", sorted(len(k) for k in sent), "received:", sorted(len(k) for k in got))
    await c.close(); await p.close(); await b.close()
asyncio.run(main())
