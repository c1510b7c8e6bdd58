# trustgraph-base 2.11.1 AsyncRabbitMQBackend after a connection loss: it keeps aio-pika's
# RobustConnection (connect_robust), which reconnects in the background (reconnect_interval 5 s),
# and its calls neither wait for that nor reconnect: until then every call fails at once.
# The connection goes through a socket relay in this script, whose cut drops it for 1 s.
import asyncio, logging, sys, time, uuid
logging.disable(logging.ERROR)  # aio-pika logs every failed reconnect attempt
from dataclasses import dataclass
from trustgraph.base.pubsub import get_async_pubsub
@dataclass
class M:
    data: bytes = b""
HOST, PORT, conns, cut = sys.argv[1], int(sys.argv[2]), set(), False
async def relay(r, w):
    if cut: w.close(); return
    br, bw = await asyncio.open_connection(HOST, PORT); conns.update({w, bw})
    async def pipe(a, b):
        try:
            while (d := await a.read(65536)): b.write(d); await b.drain()
        except Exception: pass
        finally: b.close()
    await asyncio.gather(pipe(r, bw), pipe(br, w))
async def main():
    global cut
    srv = await asyncio.start_server(relay, "127.0.0.1", 0); port = srv.sockets[0].getsockname()[1]
    b = get_async_pubsub(pubsub_backend="rabbitmq", rabbitmq_host="127.0.0.1", rabbitmq_port=port)
    t = f"flow:tg:reconnect-{uuid.uuid4().hex[:6]}"; await b.ensure_topic(t)
    p = await b.create_producer(t, M); await p.send(M(b"before"), {})
    cut = True; [w.close() for w in conns]; conns.clear(); await asyncio.sleep(1); cut = False; healed = time.time()
    for what, call in (("topic_exists", lambda: b.topic_exists(t)), ("send", lambda: p.send(M(b"after"), {}))):
        try: print(f"{what} right after the heal:", await call())
        except Exception as e: print(f"{what} right after the heal: {type(e).__module__}.{type(e).__name__}: {e}")
    while True:   # the script polls to measure when TrustGraph's calls work again
        try: await p.send(M(b"after"), {}); print(f"send works again {time.time()-healed:.1f} s after the heal"); break
        except Exception: await asyncio.sleep(0.2)
    await b.close(); srv.close()
asyncio.run(main())
