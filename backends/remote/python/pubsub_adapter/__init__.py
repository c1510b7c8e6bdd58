"""pubsub_adapter: serve the harness's adapter protocol (proto/pubsub/v1/adapter.proto)
from one Python class. The interface an author implements is in adapter.py; errors in
errors.py; topic helpers in topics.py. A minimal adapter:

    import pubsub_adapter

    def factory(config: pubsub_adapter.Config) -> pubsub_adapter.Backend:
        return MyBackend(config)

    if __name__ == "__main__":
        pubsub_adapter.serve(factory, name="my-adapter", version="1.0")

The worked example is pubsub_adapter/memory.py, the port of backends/memory.
"""

from .adapter import (  # noqa: F401
    CAP_BINARY_PAYLOADS,
    CAP_LOAD_SHARING,
    CAP_MODE_OVERRIDE,
    CAP_RETENTION_EXPIRY,
    CAP_RETENTION_READ_BACK,
    CAP_TLS,
    CAP_TRANSIENT_REDELIVERY,
    CAP_TRANSIENT_REPLAY,
    Backend,
    Config,
    Consumer,
    Delivery,
    Factory,
    Mode,
    Position,
    Producer,
)
from . import errors  # noqa: F401


def serve(factory, *, name: str, version: str, restart=None) -> None:
    """Serve the protocol until the harness kills the process.

    factory: Config -> Backend (sync or async), called once per backends.Open.
    name, version: what the handshake reports (the adapter's own name and version,
    e.g. "trustgraph-kafka", "trustgraph-base 1.4.2").
    restart: ONLY for an in-process reference port (memory.py): a callable (sync or
    async, no arguments) that simulates a restart of the process's in-process broker
    (RestartBroker, for the broker-restart spec R4). Adapters of real brokers leave it
    None: their broker is restarted for real.

    Where to listen comes from the environment the harness sets
    (PUBSUB_ADAPTER_LISTEN); the SDK announces the address on stdout. Blocks.
    """
    from .server import serve as _serve

    _serve(factory, name=name, version=version, restart=restart)
