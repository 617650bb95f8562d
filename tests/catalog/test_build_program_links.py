"""A programme's `networks`: validated with clear errors, claimed by one programme only, and
written by the build as the map (network, programId) -> slug in api/program-links.json."""

from __future__ import annotations

import orjson
import pytest
from buildkit import VALID, Content, submission

import build
from catalog.errors import BuildError
from catalog.progress import Progress
from contract import shardformat
from contract.networks import NETWORKS, PROGRAM_ID_MAX_LENGTH, PROGRAM_NETWORKS_MAX


def with_networks(entries: str, base: str = VALID) -> str:
    """VALID with a `networks:` block (its item lines as given) at its end (line 23)."""
    return base + "networks:\n" + entries


def errors_of(content: Content) -> list[tuple[str, int, int, str, str]]:
    """(file name, line, column, field, message) of every error of a check of the content."""
    try:
        build.check(content.options(), [], Progress(quiet=True))
    except BuildError as exc:
        return [
            (
                d.path.rsplit("/", 1)[-1],
                d.problem.line,
                d.problem.column,
                d.problem.field,
                d.problem.message,
            )
            for d in exc.diagnostics
            if d.severity == "error"
        ]
    return []


def links_file(content: Content) -> dict:
    return orjson.loads((content.out / shardformat.PROGRAM_LINKS).read_bytes())


# (case id, networks block, [(line, column, field, words the message contains)]).
# The block starts on line 23 (VALID has 22 lines); its first item on line 24.
BAD = [
    ("not-a-list", None, "networks: awin\n", [(23, 11, "networks", "must be a list of mappings")]),
    ("item-not-a-mapping", "  - awin\n", None, [(24, 5, "networks[0]", "must be a mapping")]),
    (
        "unknown-network",
        '  - {network: awn, programId: "1"}\n',
        None,
        [(24, 15, "networks[0].network", 'not a network the service knows; did you mean "awin"')],
    ),
    (
        "network-in-capitals",
        '  - {network: Awin, programId: "1"}\n',
        None,
        [(24, 15, "networks[0].network", 'write it exactly "awin"')],
    ),
    (
        "program-id-a-number",
        "  - {network: awin, programId: 1234}\n",
        None,
        [(24, 32, "networks[0].programId", 'quote it: "1234"')],
    ),
    (
        "program-id-empty",
        '  - {network: awin, programId: ""}\n',
        None,
        [(24, 32, "networks[0].programId", "must not be empty")],
    ),
    (
        "program-id-too-long",
        f'  - {{network: awin, programId: "{"9" * (PROGRAM_ID_MAX_LENGTH + 1)}"}}\n',
        None,
        [(24, 32, "networks[0].programId", f"at most {PROGRAM_ID_MAX_LENGTH}")],
    ),
    ("no-program-id", "  - {network: awin}\n", None, [(24, 5, "networks[0]", "has no programId")]),
    ("no-network", '  - {programId: "1"}\n', None, [(24, 5, "networks[0]", "has no network")]),
    (
        "unknown-member",
        '  - {network: awin, programId: "1", url: "x"}\n',
        None,
        [(24, 42, "networks[0].url", "is not a member of a network entry")],
    ),
    (
        "duplicate-pair",
        '  - {network: awin, programId: "1"}\n  - {network: cj, programId: "1"}\n'
        '  - {network: awin, programId: "1"}\n',
        None,
        [(26, 5, "networks[2]", "repeats entry 1 (awin 1)")],
    ),
    (
        "too-many",
        "".join(
            f'  - {{network: awin, programId: "{n}"}}\n' for n in range(PROGRAM_NETWORKS_MAX + 1)
        ),
        None,
        [(24, 3, "networks", f"at most {PROGRAM_NETWORKS_MAX}")],
    ),
]


@pytest.mark.parametrize(
    ("block", "whole", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
def test_a_bad_networks_entry_is_refused_where_it_is_written(
    content: Content, block: str | None, whole: str | None, expected: list
) -> None:
    text = with_networks(block) if block is not None else VALID + (whole or "")
    content.add("acme", text)
    found = [
        (line, column, field, message) for _, line, column, field, message in errors_of(content)
    ]
    assert len(found) == len(expected), found
    for (line, column, field, message), (want_line, want_column, want_field, words) in zip(
        found, expected, strict=True
    ):
        assert (line, column, field) == (want_line, want_column, want_field), message
        assert words in message


def test_the_same_pair_in_two_programmes_names_both_files(content: Content) -> None:
    content.add("acme", with_networks('  - {network: awin, programId: "77"}\n'))
    content.add(
        "other",
        with_networks(
            '  - {network: cj, programId: "77"}\n  - {network: awin, programId: "77"}\n',
            submission(name="Other"),
        ),
    )
    errors = errors_of(content)
    assert sorted((name, line, field) for name, line, _, field, _ in errors) == [
        ("acme.yaml", 24, "networks"),
        ("other.yaml", 25, "networks"),
    ]
    messages = {name: message for name, _, _, _, message in errors}
    assert "also listed by" in messages["acme.yaml"] and "other.yaml" in messages["acme.yaml"]
    assert "acme.yaml" in messages["other.yaml"]
    with pytest.raises(BuildError):
        content.build(site=False)


def test_drafts_and_rejected_files_claim_nothing(content: Content) -> None:
    """Only a published programme's networks count: a draft listing the same pair neither
    blocks the build nor reaches the map."""
    pair = '  - {network: awin, programId: "77"}\n'
    content.add("acme", with_networks(pair))
    content.add("draft", with_networks(pair, submission(status="unpublished")))
    content.add("gone", with_networks(pair, submission(status="rejected")))
    content.build(site=False)
    assert links_file(content)["links"] == [{"network": "awin", "programId": "77", "slug": "acme"}]


def test_the_build_writes_the_map_of_published_programmes(content: Content) -> None:
    content.add(
        "acme",
        with_networks('  - {network: cj, programId: "9"}\n  - {network: awin, programId: "10"}\n'),
    )
    content.add("plain", submission(name="Plain"))
    content.add(
        "other", with_networks('  - {network: awin, programId: "9"}\n', submission(name="O"))
    )
    result = content.build(site=False)
    data = links_file(content)
    assert data["buildId"] == result.build_id
    assert data["links"] == [
        {"network": "awin", "programId": "10", "slug": "acme"},
        {"network": "awin", "programId": "9", "slug": "other"},
        {"network": "cj", "programId": "9", "slug": "acme"},
    ]
    loaded = shardformat.load(content.out)
    assert loaded.program_links == {
        ("awin", "10"): "acme",
        ("awin", "9"): "other",
        ("cj", "9"): "acme",
    }


def test_a_change_of_networks_alone_is_a_new_build(content: Content) -> None:
    """The edge loads a build whose id changed: a link moved from one programme to another,
    with no other change, must give a new id (and a rebuild from the cache the same map as
    a cold one)."""
    content.add("acme", with_networks('  - {network: awin, programId: "1"}\n'))
    content.add("other", submission(name="Other"))
    first = content.build(site=False)
    content.add("acme", VALID)
    content.add(
        "other", with_networks('  - {network: awin, programId: "1"}\n', submission(name="Other"))
    )
    second = content.build(site=False)
    assert second.build_id != first.build_id
    assert links_file(content)["links"] == [{"network": "awin", "programId": "1", "slug": "other"}]
    again = content.build(site=False)  # every outcome from the cache
    assert again.build_id == second.build_id
    cold = content.build(site=False, cache=False)
    assert cold.build_id == second.build_id


def test_no_networks_gives_an_empty_map(content: Content) -> None:
    content.add("acme", VALID)
    content.build(site=False)
    assert links_file(content)["links"] == []


def test_every_known_network_is_accepted(content: Content) -> None:
    block = "".join(
        f'  - {{network: {n}, programId: "{n}-1"}}\n' for n in NETWORKS[:PROGRAM_NETWORKS_MAX]
    )
    content.add("acme", with_networks(block))
    assert errors_of(content) == []


def test_the_sync_registers_exactly_the_contracts_networks() -> None:
    from sync.connectors import MODULES

    assert MODULES == NETWORKS
