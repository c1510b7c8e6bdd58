package remote

// TrustGraph's own pub/sub backends (trustgraph-base on PyPI), each behind the Python SDK in
// backends/remote/python/trustgraph_adapters. Every adapter has its own pinned requirements
// (installed after the SDK's), so the two trustgraph-base versions get separate virtualenvs.
// The adapters only translate contract calls to TrustGraph's classes (see the package doc of
// trustgraph_adapters); a failed spec is a result about TrustGraph's code.

const tgDir = SDKDir + "/trustgraph_adapters"

func init() {
	declared = append(declared,
		Adapter{
			Name: "trustgraph-kafka",
			Description: "TrustGraph's AsyncKafkaBackend (aiokafka), trustgraph-base 2.11.1, built by its " +
				"get_async_pubsub factory from the KAFKA_* settings",
			Broker:       "kafka",
			OptIn:        true, // TrustGraph's known failures are results, not make test failures
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "kafka"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
		},
		Adapter{
			Name: "trustgraph-pulsar",
			Description: "TrustGraph's AsyncPulsarBackend (pulsar.asyncio), trustgraph-base 2.11.1, built by " +
				"its get_async_pubsub factory from the PULSAR_* settings",
			Broker:       "pulsar",
			OptIn:        true, // TrustGraph's known failures are results, not make test failures
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "pulsar"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
		},
		Adapter{
			Name: "trustgraph-rabbitmq",
			Description: "TrustGraph's AsyncRabbitMQBackend (aio-pika), trustgraph-base 2.11.1, built by " +
				"its get_async_pubsub factory from the RABBITMQ_* settings",
			Broker:       "rabbitmq",
			OptIn:        true, // TrustGraph's known failures are results, not make test failures
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "rabbitmq"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
		},
		Adapter{
			Name: "trustgraph-kafka-sync",
			Description: "TrustGraph's synchronous KafkaBackend (confluent-kafka), trustgraph-base 2.8.1, the " +
				"last release that ships it, built by its get_pubsub factory from the KAFKA_* settings",
			Broker:       "kafka",
			OptIn:        true, // TrustGraph's known failures are results, not make test failures
			Command:      []string{"{python}", "-m", "trustgraph_adapters.sync_adapter", "kafka"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.8.1.txt"},
		},
	)
}
