"""The Pulsar deployment TrustGraph's backends assume, made once per broker.

TrustGraph maps "class:topicspace:topic" to {persistent|non-persistent}://
<topicspace>/<class>/<topic>, so tenant "tg" and its namespaces flow, request,
response and notify must exist before any producer or consumer. TrustGraph does not
create them in its backend: a TrustGraph deployment runs the PulsarTopology
initialiser of its bootstrapper (trustgraph-flow, trustgraph/bootstrap/initialisers/
pulsar_topology.py) once, before any service starts. trustgraph-flow cannot be
installed for that alone (it depends on dozens of LLM and database clients), so this
module makes the same admin calls that initialiser makes: create tenant tg (allowed
on every cluster) when missing, then each namespace when missing, with the namespace
policies TrustGraph sends (response and notify: 3 minute retention; flow and
request: broker defaults).

This is the deployment step, not the system under test: it runs before the backend
is built, and if it fails the failure is logged and the backend's own calls show the
consequence (TopicNotFound: Namespace not found). TrustGraph's initialiser sends no
credentials; an operator of an auth-enabled Pulsar would create the namespaces with
admin credentials, so the token (PULSAR_API_KEY) is sent when set.
"""

from __future__ import annotations

import sys
import threading
from typing import Mapping, Optional

import requests

TENANT = "tg"
NAMESPACES = {
    "flow": {},
    "request": {},
    # TrustGraph's bodies as its initialiser sends them (subscriptionExpirationTimeMinutes sits
    # inside retention_policies there; sent as is, whatever the broker makes of it).
    "response": {"retention_policies": {"retentionSizeInMB": -1, "retentionTimeInMinutes": 3,
                                        "subscriptionExpirationTimeMinutes": 30}},
    "notify": {"retention_policies": {"retentionSizeInMB": -1, "retentionTimeInMinutes": 3,
                                      "subscriptionExpirationTimeMinutes": 5}},
}

_done = set()
_lock = threading.Lock()


def ensure_pulsar_topology(admin_url: Optional[str], token: Optional[str], who: str,
                           timeout: float = 10.0) -> None:
    """Create tenant tg and its four namespaces on admin_url once per process. Logs
    and returns on failure (see the module docstring)."""
    if not admin_url:
        return
    admin = admin_url.rstrip("/")
    with _lock:
        if admin in _done:
            return
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            r = requests.get(f"{admin}/admin/v2/tenants/{TENANT}", headers=headers, timeout=timeout)
            if r.status_code != 200:
                clusters = requests.get(f"{admin}/admin/v2/clusters", headers=headers, timeout=timeout)
                clusters.raise_for_status()
                r = requests.put(f"{admin}/admin/v2/tenants/{TENANT}", headers=headers, timeout=timeout,
                                 json={"adminRoles": [], "allowedClusters": clusters.json()})
                if r.status_code not in (204, 409):
                    raise RuntimeError(f"create tenant {TENANT}: HTTP {r.status_code} {r.text}")
            for ns, policies in NAMESPACES.items():
                url = f"{admin}/admin/v2/namespaces/{TENANT}/{ns}"
                if requests.get(url, headers=headers, timeout=timeout).status_code == 200:
                    continue
                r = requests.put(url, headers=headers, timeout=timeout, json=policies)
                if r.status_code not in (204, 409):
                    raise RuntimeError(f"create namespace {TENANT}/{ns}: HTTP {r.status_code} {r.text}")
            _done.add(admin)
            print(f"{who}: Pulsar deployment ready at {admin}: tenant {TENANT}, namespaces "
                  + ", ".join(NAMESPACES), file=sys.stderr, flush=True)
        except Exception as e:  # noqa: BLE001 - a deployment failure is logged; the backend's calls show it
            print(f"{who}: Pulsar deployment step (TrustGraph's PulsarTopology initialiser) failed at "
                  f"{admin}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)


def settings_admin(settings: Mapping[str, str]):
    return settings.get("PULSAR_ADMIN_URL") or "http://pulsar:8080", settings.get("PULSAR_API_KEY") or None
