"""TrustGraph's own pub/sub backends (trustgraph-base on PyPI) behind the harness's
adapter protocol, on the pubsub_adapter SDK. Four adapters, each in a virtualenv
pinned by a requirements file here:

    trustgraph-kafka       async_adapter kafka     trustgraph-base 2.11.1 (AsyncKafkaBackend, aiokafka)
    trustgraph-pulsar      async_adapter pulsar    trustgraph-base 2.11.1 (AsyncPulsarBackend)
    trustgraph-rabbitmq    async_adapter rabbitmq  trustgraph-base 2.11.1 (AsyncRabbitMQBackend, aio-pika)
    trustgraph-kafka-sync  sync_adapter kafka    trustgraph-base 2.8.1's synchronous KafkaBackend
                                                 (confluent-kafka): legacy, deleted in 2.8.2, no
                                                 current release ships it

The adapters only translate contract calls to TrustGraph's backend classes, built by
TrustGraph's own factory (pubsub.get_async_pubsub / get_pubsub). They add no waits,
retries, polling or emulation: a spec that fails is a result about TrustGraph's code.
The mapping of each contract call is in the docstrings of async_adapter and sync_adapter.
"""
