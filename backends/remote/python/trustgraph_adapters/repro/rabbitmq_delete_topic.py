# trustgraph-base 2.11.1 AsyncRabbitMQBackend: delete_topic deletes the exchange only. A flow
# subscription's queue stays, with its old messages and unbound, so after delete + re-create the
# old subscription name resumes with the deleted topic's message and misses the new topic's.
import asyncio, sys, uuid
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
async def main():
    b = get_async_pubsub(pubsub_backend="rabbitmq", rabbitmq_host=sys.argv[1], rabbitmq_port=int(sys.argv[2]))
    t = f"flow:tg:delete-{uuid.uuid4().hex[:6]}"
    await b.create_topic(t)
    c = await b.create_consumer(t, "old", M, initial_position="earliest")
    p = await b.create_producer(t, M); await p.send(M(b"old-1"), {}); await p.close()
    await c.close()
    await b.delete_topic(t); print("topic_exists after delete_topic:", await b.topic_exists(t))
    await b.create_topic(t)
    p = await b.create_producer(t, M); await p.send(M(b"new-1"), {}); await p.close()
    c = await b.create_consumer(t, "old", M, initial_position="earliest")
    got = []
    try:
        while True:
            m = await asyncio.wait_for(c.receive(), 5); got.append(m.value().data); await c.acknowledge(m)
    except asyncio.TimeoutError: pass
    print("old subscription after delete + re-create:", got, "(want [b'new-1'])")
    await c.close(); await b.close()
asyncio.run(main())
