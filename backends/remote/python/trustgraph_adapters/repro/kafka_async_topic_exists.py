# TrustGraph 2.11.1 AsyncKafkaBackend.topic_exists on a topic that was never created.
import asyncio, uuid, sys
from trustgraph.base.pubsub import get_async_pubsub
async def main():
    b = get_async_pubsub(pubsub_backend="kafka", kafka_bootstrap_servers=sys.argv[1])
    t = f"flow:tg:never-created-{uuid.uuid4().hex[:8]}"
    print("topic_exists(never created) ->", await b.topic_exists(t))
    from aiokafka.admin import AIOKafkaAdminClient
    a = AIOKafkaAdminClient(bootstrap_servers=sys.argv[1]); await a.start()
    print("describe_topics ->", await a.describe_topics([t.split(':')[1] + '.flow.' + t.split(':')[2]])); await a.close()
asyncio.run(main())
