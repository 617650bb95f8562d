"""The client address every per-address count reads: the right-most hop of
X-Forwarded-For that is not a trusted proxy, ports and brackets read, and compose.yaml
trusting only its own proxy network."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from edge.http.clientaddress import client_address, parse_networks

COMPOSE = Path(__file__).resolve().parents[3] / "compose.yaml"
PROXIES = "10.0.0.0/8"


@pytest.mark.parametrize(
    ("forwarded", "client"),
    [
        (["203.0.113.7:51234"], "203.0.113.7"),
        (["[2001:db8::5]:443"], "2001:db8::5"),
        (["[2001:db8::5]"], "2001:db8::5"),
        (["2001:db8::5"], "2001:db8::5"),
        (["6.6.6.6, 203.0.113.7:80"], "203.0.113.7"),  # the client wrote 6.6.6.6
        (["203.0.113.7:80, 10.0.0.9:3128"], "203.0.113.7"),  # two proxies, both with ports
        ([" 203.0.113.7 :80"], "10.0.0.2"),  # not a hop: the walk stops at the proxy
        (["203.0.113.7:99999"], "10.0.0.2"),
        (["[2001:db8::5]x"], "10.0.0.2"),
        (["[2001:db8::5:443"], "10.0.0.2"),
    ],
)
def test_hops_with_ports_and_brackets(forwarded, client):
    found = client_address("10.0.0.2", forwarded, parse_networks(PROXIES))
    assert found == ipaddress.ip_address(client)


UNTRUSTED = st.ip_addresses().filter(
    lambda a: a.version == 6 or a not in ipaddress.ip_network(PROXIES)
)


@given(UNTRUSTED, st.integers(0, 65535), st.lists(st.ip_addresses(), max_size=3))
def test_the_right_most_untrusted_hop_whatever_the_client_wrote(client, port, written):
    hop = f"[{client}]:{port}" if client.version == 6 else f"{client}:{port}"
    chain = ", ".join([*map(str, written), hop, "10.0.0.9:8080"])
    assert client_address("10.0.0.2", [chain], parse_networks(PROXIES)) == client


def test_compose_trusts_only_its_own_proxy_network():
    compose = yaml.safe_load(COMPOSE.read_text())
    trusted = compose["services"]["edge"]["environment"]["EDGE_TRUSTED_PROXIES"]
    (subnet,) = [c["subnet"] for c in compose["networks"]["web"]["ipam"]["config"]]
    assert trusted == subnet
    # The default subnet is one fixed block, not the private ranges of a whole LAN.
    default = ipaddress.ip_network(subnet.split(":-", 1)[1].rstrip("}"))
    assert default.prefixlen >= 24
    assert "nginx" in [
        name
        for name, service in compose["services"].items()
        if "web" in service.get("networks", [])
    ]
