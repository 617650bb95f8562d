"""Bad input to /v1/commissions and /v1/me: the right status, code and param, never a 500."""

from __future__ import annotations

import pytest
from support.accountkit import new_key
from support.apierror import assert_api_error
from yarl import URL

from accounts import apikeys
from contract.endpoints import COMMISSIONS, ME
from edge.request import cursor
from store import accounts

# (query string, code, param); every answer is 400 unless the code says otherwise.
COMMISSION_CASES = [
    ("network=", "invalid_parameter", "network"),
    ("network=awin&network=cj", "invalid_parameter", "network"),
    ("network=" + "a" * 201, "invalid_parameter", "network"),
    ("network=%01awin", "invalid_parameter", "network"),
    ("status=", "invalid_parameter", "status"),
    ("status=PAID", "invalid_parameter", "status"),
    ("status=refunded", "invalid_parameter", "status"),
    ("status=paid&status=paid", "invalid_parameter", "status"),
    ("from=", "invalid_parameter", "from"),
    ("from=2026-13-01", "invalid_parameter", "from"),
    ("from=2026-1-1", "invalid_parameter", "from"),
    ("from=yesterday", "invalid_parameter", "from"),
    ("from=2026-01-01T00:00:00Z", "invalid_parameter", "from"),
    ("to=2026-02-30", "invalid_parameter", "to"),
    ("to=2026-01-01&to=2026-01-02", "invalid_parameter", "to"),
    ("from=2026-03-01&to=2026-02-01", "invalid_date_range", None),
    ("limit=", "invalid_parameter", "limit"),
    ("limit=0", "invalid_parameter", "limit"),
    ("limit=101", "invalid_parameter", "limit"),
    ("limit=-1", "invalid_parameter", "limit"),
    ("limit=abc", "invalid_parameter", "limit"),
    ("limit=1.5", "invalid_parameter", "limit"),
    ("limit=%205", "invalid_parameter", "limit"),
    ("limit=99999999999999999999", "invalid_parameter", "limit"),
    ("limit=1&limit=2", "invalid_parameter", "limit"),
    ("cursor=", "invalid_parameter", "cursor"),
    ("cursor=a&cursor=b", "invalid_parameter", "cursor"),
    ("cursor=garbage", "invalid_cursor", "cursor"),
    ("cursor=" + "x" * 2000, "invalid_cursor", "cursor"),
    ("cursor=%E2%82%AC.%E2%82%AC", "invalid_cursor", "cursor"),
    ("foo=1", "unknown_parameter", "foo"),
    ("Network=awin", "unknown_parameter", "Network"),
    ("vertical=saas", "unknown_parameter", "vertical"),
    # The first fault in the documented order is the one reported.
    ("foo=1&limit=0", "unknown_parameter", "foo"),
    ("limit=0&status=bad", "invalid_parameter", "status"),
    ("to=2026-01-01&from=2026-02-01&limit=0", "invalid_parameter", "limit"),
    ("from=2026-02-01&to=2026-01-01&cursor=garbage", "invalid_date_range", None),
]


async def check_error(resp, status: int, code: str, param: str | None, allowed: tuple[int, ...]):
    assert resp.status in allowed, f"{resp.status} is not listed for this endpoint"
    return await assert_api_error(resp, status, code, param)


@pytest.mark.parametrize(("query", "code", "param"), COMMISSION_CASES)
async def test_bad_commission_queries(edge_client, seeded, query, code, param):
    client = await edge_client()
    resp = await client.get(f"/v1/commissions?{query}", headers=seeded.auth)
    await check_error(resp, 400, code, param, COMMISSIONS.statuses)


def forge(
    secret: bytes, endpoint: str, filters: dict, position: list, account: str | None = None
) -> str:
    return cursor.encode(secret, endpoint, filters, position, account)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("tampered", "not one this API issued"),
        ("other filters", "other filters"),
        ("other endpoint", "another endpoint"),
        ("other secret", "not one this API issued"),
        ("bad position", "not one this API issued"),
        ("bool position", "not one this API issued"),
        # Signed with the right secret (a leaked one, a bug): still a 400, never the
        # OverflowError of the SQLite binding as a 500.
        ("row id 2**63", "not one this API issued"),
        ("public id of row 0", "not one this API issued"),
        # A position is the last row's public id, never its row id.
        ("raw row id", "not one this API issued"),
        ("event id", "not one this API issued"),
        # Bound to its account: a directory cursor or another account's is refused.
        ("no account", "another account"),
        ("other account", "another account"),
    ],
)
async def test_foreign_and_forged_cursors(
    edge_client, seeded, admin_store, account_config, case, message
):
    secret = account_config.secret_key.encode()
    five = admin_store.ids.commission(5)
    filters = {"network": "awin", "status": None, "from": None, "to": None}
    ours = seeded.uid

    def forged(*args: object, account: str | None = ours) -> str:
        return forge(*args, account)  # type: ignore[arg-type]

    good = forged(secret, "commissions", filters, ["2026-01-01T00:00:00Z", five])
    token = {
        "no account": forged(
            secret, "commissions", filters, ["2026-01-01T00:00:00Z", five], account=None
        ),
        "other account": forged(
            secret,
            "commissions",
            filters,
            ["2026-01-01T00:00:00Z", five],
            account="acc_someoneelse00000",
        ),
        "tampered": good[:-2] + ("AA" if not good.endswith("AA") else "BB"),
        "other filters": forged(
            secret, "commissions", {**filters, "network": "cj"}, ["2026-01-01T00:00:00Z", five]
        ),
        "other endpoint": forged(secret, "programs", filters, [90, "some-slug"]),
        "other secret": forged(b"z" * 40, "commissions", filters, ["2026-01-01T00:00:00Z", five]),
        "bad position": forged(secret, "commissions", filters, ["yesterday", 5]),
        "bool position": forged(secret, "commissions", filters, ["2026-01-01T00:00:00Z", True]),
        "row id 2**63": forged(
            secret,
            "commissions",
            filters,
            ["2026-01-01T00:00:00Z", admin_store.ids.commission(2**63)],
        ),
        "public id of row 0": forged(
            secret, "commissions", filters, ["2026-01-01T00:00:00Z", admin_store.ids.commission(0)]
        ),
        "raw row id": forged(secret, "commissions", filters, ["2026-01-01T00:00:00Z", 5]),
        "event id": forged(
            secret, "commissions", filters, ["2026-01-01T00:00:00Z", admin_store.ids.event(5)]
        ),
    }[case]
    client = await edge_client()
    resp = await client.get(
        "/v1/commissions", params={"network": "awin", "cursor": token}, headers=seeded.auth
    )
    body = await check_error(resp, 400, "invalid_cursor", "cursor", COMMISSIONS.statuses)
    assert message in body["message"]
    # The same good cursor is accepted with its own filters only.
    ok = await client.get(
        "/v1/commissions", params={"network": "awin", "cursor": good}, headers=seeded.auth
    )
    assert ok.status == 200


@pytest.mark.parametrize(
    ("value", "ours"),
    [
        (cursor.INT64_MAX, True),
        (cursor.INT64_MIN, True),
        (cursor.INT64_MAX + 1, False),
        (2**64 - 1, False),
    ],
)
def test_a_cursor_holds_signed_64_bit_integers_only(value, ours):
    secret, filters = b"s" * 40, {"network": None}
    token = cursor.encode(secret, "commissions", filters, ["2026-01-01T00:00:00Z", value])
    if ours:
        assert cursor.decode(secret, token, "commissions", filters)[1] == value
        return
    with pytest.raises(cursor.ApiError) as refused:
        cursor.decode(secret, token, "commissions", filters)
    assert (refused.value.status, refused.value.code) == (400, "invalid_cursor")


def auth_cases(key: str) -> list[tuple[dict[str, str], str | None]]:
    """(headers, expected code or None for 200)."""
    wrong_checksum = key[:-1] + ("A" if key[-1] != "A" else "B")
    return [
        ({}, "missing_api_key"),
        ({"Authorization": ""}, "missing_api_key"),
        ({"Authorization": "Bearer"}, "missing_api_key"),
        ({"Authorization": "Bearer    "}, "missing_api_key"),
        ({"Authorization": f"Basic {key}"}, "missing_api_key"),
        ({"Authorization": key}, "missing_api_key"),
        ({"Authorization": f"Bearer {wrong_checksum}"}, "invalid_api_key"),
        ({"Authorization": f"Bearer {key[:20]}"}, "invalid_api_key"),
        ({"Authorization": f"Bearer {apikeys.generate_key().key}"}, "invalid_api_key"),
        ({"Authorization": f"Bearer {key} extra"}, "invalid_api_key"),
        ({"Authorization": f"bearer {key}"}, None),
        ({"Authorization": f"BEARER {key}"}, None),
        ({"Authorization": f"  Bearer   {key}  "}, None),
    ]


@pytest.mark.parametrize("endpoint", [ME, COMMISSIONS], ids=lambda e: e.name)
@pytest.mark.parametrize("index", range(13))
async def test_keys_and_headers(edge_client, seeded, endpoint, index):
    headers, code = auth_cases(seeded.key)[index]
    client = await edge_client()
    resp = await client.get(endpoint.path, headers=headers)
    if code is None:
        assert resp.status == 200
        return
    await check_error(resp, 401, code, None, endpoint.statuses)
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("endpoint", [ME, COMMISSIONS], ids=lambda e: e.name)
async def test_a_revoked_key_stops_working_within_the_cache_bound(
    edge_client, admin_store, seeded, clock, account_config, endpoint
):
    spare = await new_key(admin_store, seeded.uid)
    client = await edge_client()
    assert (await client.get(endpoint.path, headers=seeded.auth)).status == 200
    await admin_store.write(accounts.revoke_key, seeded.prefix)
    clock.advance(account_config.key_cache_seconds - 0.01)
    assert (await client.get(endpoint.path, headers=seeded.auth)).status == 200  # documented lag
    clock.advance(0.01)
    resp = await client.get(endpoint.path, headers=seeded.auth)
    await check_error(resp, 401, "invalid_api_key", None, endpoint.statuses)
    assert (await client.get(endpoint.path, headers=spare.auth)).status == 200


@pytest.mark.parametrize(
    "path", ["/v1/%6De", "/%761/commissions", "/v1/program%73", "/v1/programs/%61bc", "/v1/me/"]
)
async def test_a_percent_encoded_path_needs_the_key_its_route_needs(edge_client, path):
    """The key is required by the route a request matched, not by how its path was spelled:
    an encoded path that reaches an account route is no way around it, and one that reaches
    a directory route is answered as the public, as its plain spelling is (a path with a
    trailing slash matches none: 404, with or without a key)."""
    client = await edge_client()
    resp = await client.get(URL(path, encoded=True))
    if path.endswith("/"):
        assert resp.status == 404
        return
    body = await resp.json()
    if "program" in path:
        # Answered as the public: no build is loaded here (503), or no programme "abc" (404).
        assert (resp.status, body["code"]) in ((503, "unavailable"), (404, "not_found"))
        return
    assert resp.status == 401 and body["code"] == "missing_api_key"
