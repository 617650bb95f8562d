"""The directory the edge serves: one loaded build, held by one reference, swapped whole.

- `load_build` reads `dist/` (`contract.shardformat.load`) and precomputes what the by-slug
  endpoint answers, so that no request ever parses, sorts or serialises a programme.
- `select_page` is the whole list query without search, typed filters or another sort: a
  shard lookup, two binary searches, a slice; `edge.directory.search.Searcher` answers the others.
- `PageCache` keeps a build's rendered list pages by query string (bounded LRU).
- `DirectoryState` holds the build being served. A reload builds a complete new `Build` off
  the event loop and then replaces the one reference, so a request that already took the
  old build finishes on it and the next request sees the new one; a broken build is
  refused and the old one keeps serving.
- `add_sighup` makes SIGHUP reload; `edge.lifecycle.directory_context` loads the first
  build, then watches `dist/manifest.json` every `config.reload_interval` seconds.

It imports nothing else of the edge at run time (edge.appkeys types its key with
`DirectoryState`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import logging
import os
import signal
import threading
import time
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from contract import shardformat
from contract.shardformat import Combo, Directory, FormatError, combo_key
from edge.directory.programlinks import ProgramLinks, program_links
from edge.directory.search import Searcher
from edge.http.httpcache import GZIP_MIN_BYTES, gzip_bytes

log = logging.getLogger("edge.directory.pages")

# Rendered list pages kept per build (PageCache): ~650 pages of 25 programmes. Two builds
# are alive during a reload, so this can count twice; 0 turns the cache off.
PAGE_CACHE_BYTES = 16 * 1024 * 1024
# Bytes charged per cached page besides its data: the RenderedPage, the OrderedDict entry,
# the objects' own headers and the answer's headers, kept as a dict for each coding and kind
# of reader (keyed, public): four at most. Measured with tracemalloc with all four: about
# 1,390 bytes besides the body and key; a next link adds about five and a half times its
# length (the link, then the Link header in each dict).
ENTRY_OVERHEAD = 1400
LINK_COPIES = 6
# By-slug documents are compressed once per build, so they can afford zlib's default level.
DOCUMENT_GZIP_LEVEL = 6

_EMPTY = array("I")

# (dev, inode, size, mtime) of manifest.json: a new build is a new file (the build swaps the
# whole dist/ directory), an in-place rewrite changes its size or mtime. Not ctime: making
# or removing a hard link to the file (a build reusing files of the last one) changes it.
Signature = tuple[int, int, int, int]


def _tag(*parts: bytes) -> str:
    """A short, quoted strong entity tag made of URL-safe characters."""
    digest = hashlib.blake2b(b"\0".join(parts), digest_size=12).digest()
    return '"' + base64.urlsafe_b64encode(digest).decode("ascii") + '"'


@dataclass(frozen=True, slots=True)
class Document:
    """One by-slug answer: the row it wraps (a view of the build's rows) and its tag.

    The body is made when it is sent, `{"data":` and `}` around the row (one copy of a
    couple of kB): kept whole for every programme, the documents were a second copy of
    every row, 34 MB of the edge's memory for 17,000 programmes."""

    row: bytes | memoryview
    etag: str  # strong, derived from the body: unchanged by a rebuild that keeps the row

    @property
    def body(self) -> bytes:
        return shardformat.encode_document(self.row)


@dataclass(slots=True)
class RenderedPage:
    """One list page as sent: what a repeat of the same query string is answered with."""

    body: bytes
    etag: str  # of the identity coding
    next_link: str | None  # path and query of the next page; None on the last page
    gzipped: bytes | None = None  # filled on the first request that accepts gzip
    # The response headers of each (gzip coding?, Cache-Control) answered so far, made on
    # the first such answer: a repeat reuses the dict (aiohttp copies it).
    headers: dict[tuple[bool, str], dict[str, str]] = field(default_factory=dict)


class PageCache:
    """A bounded LRU of one build's rendered list pages, keyed by the raw query string.

    A page is a pure function of (build, query string), so a repeat (the first pages of
    the popular filters, mostly) is answered without parsing, seeking, signing a cursor or
    copying rows: a quarter to a half of the edge's CPU per request in the benchmark
    (bench/README.md, Directory). The cache dies with its build, so a reload can never
    serve a stale page. Only valid queries get in: a key
    is stored after its page rendered, and the same string is valid again for this build.

    The budget counts everything an entry holds, not only its body: the key (a client
    controls it: `&` repeated 8,000 times makes a valid query of an empty 65-byte page),
    the next link, and ENTRY_OVERHEAD for the objects around them. Counting bodies alone
    let such keys grow the edge by gigabytes within its 16 MiB.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0  # bytes charged for the entries held (see entry_cost)
        self._pages: OrderedDict[str, RenderedPage] = OrderedDict()

    def __len__(self) -> int:
        return len(self._pages)

    def get(self, key: str) -> RenderedPage | None:
        page = self._pages.get(key)
        if page is not None:
            self._pages.move_to_end(key)
        return page

    def put(self, key: str, page: RenderedPage) -> None:
        cost = entry_cost(key, page)
        if cost > self.max_bytes or key in self._pages:
            return
        self._pages[key] = page
        self.size += cost
        self._trim()

    def gzipped(self, key: str, page: RenderedPage) -> bytes:
        """The page's gzip coding (level 1: a list page is ~25 kB), kept while it is held."""
        if page.gzipped is not None:
            return page.gzipped
        data = gzip_bytes(page.body)
        if self._pages.get(key) is page:
            page.gzipped = data
            self.size += len(data)
            self._trim()
        return data

    def _trim(self) -> None:
        while self.size > self.max_bytes and self._pages:
            key, old = self._pages.popitem(last=False)
            self.size -= entry_cost(key, old)


def entry_cost(key: str, page: RenderedPage) -> int:
    """What a cached page is charged: its bytes, its key's and link's, and the objects'."""
    cost = ENTRY_OVERHEAD + len(key) + len(page.body)
    if page.next_link is not None:
        # The link, and the Link header of each kept header dict.
        cost += len(page.next_link) * LINK_COPIES
    if page.gzipped is not None:
        cost += len(page.gzipped)
    return cost


@dataclass(frozen=True, slots=True)
class Build:
    """A loaded build plus what the endpoints precompute from it. Never replaced in part."""

    directory: Directory
    index: Index
    searcher: Searcher
    documents: dict[str, Document]  # slug -> by-slug answer
    # By rank: the list row, the row's bytes before its details (shardformat.list_head), a
    # view of the row: the lists and the by-slug answers share one copy of the rows.
    heads: list[bytes | memoryview]
    list_tag: bytes  # seed of the list pages' entity tags: build id and cursor secret
    # Which programme a commission's (network, programme id) belongs to, and the linked
    # programmes' advertised terms: swapped with the build, so a rebuild relinks at once.
    links: ProgramLinks
    loaded_at: float
    pages: PageCache = field(repr=False, compare=False)
    # slug -> gzip of its document, filled on first demand. Compressing all 20,000 documents
    # at load time costs ~0.45 s (about 22 us each, whatever the level) against ~0.35 s for
    # the rest of a reload; on demand it costs each document one compression per build, and
    # the memo is bounded by the build (~6 MB for 20,000 programmes).
    _gzipped: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)

    @property
    def build_id(self) -> str:
        return self.directory.build_id

    def gzipped(self, slug: str, document: Document) -> bytes | None:
        """The gzip coding of a document, or None when it is too small to be worth it."""
        data = self._gzipped.get(slug)
        if data is None:
            body = document.body
            if len(body) < GZIP_MIN_BYTES:
                return None
            data = self._gzipped[slug] = gzip_bytes(body, DOCUMENT_GZIP_LEVEL)
        return data


def prepare(directory: Directory, secret: bytes) -> Build:
    """Precompute a build's by-slug entity tags and the list pages' tag seed (CPU only)."""
    documents = {
        slug: Document(row, _tag(b"doc", shardformat.encode_document(row)))
        for slug, row in zip(directory.slugs, directory.rows, strict=True)
    }
    # List pages carry cursors signed with the secret, so their tag depends on it too; the
    # secret only enters through a one-way hash.
    secret_print = hashlib.sha256(b"etag:" + secret).digest()
    list_tag = hashlib.blake2b(
        b"list\0" + secret_print + b"\0" + directory.build_id.encode(), digest_size=12
    ).digest()
    index = Index.of(directory)
    return Build(
        directory=directory,
        index=index,
        searcher=Searcher.of(directory, index.sort_keys),
        documents=documents,
        heads=[shardformat.list_head(row) for row in directory.rows],
        list_tag=list_tag,
        links=program_links(directory),
        loaded_at=time.time(),
        pages=PageCache(PAGE_CACHE_BYTES),
    )


def check(directory: Directory) -> None:
    """Refuse a build whose order the seeks rely on is broken (FormatError).

    `select_page` bisects every shard by (-score, slug); a build out of that order would
    silently answer wrong pages, so it is worth one linear pass at load time.
    """
    scores, slugs = directory.scores, directory.slugs
    if any(type(s) is not int for s in scores) or any(type(s) is not str for s in slugs):
        raise FormatError("api/keys.json: scores must be integers and slugs strings")
    for rank in range(1, len(scores)):
        # Strictly increasing keys also mean the slugs are unique.
        if (-scores[rank - 1], slugs[rank - 1]) >= (-scores[rank], slugs[rank]):
            raise FormatError(f"rows {rank - 1} and {rank} are not in directory order")
    for key, ranks in directory.shards.items():
        # Comparing with a sorted copy runs in C: about 20 ms for the 600,000 ranks of a
        # 20,000-programme build, where a Python loop over pairs takes 50 ms.
        listed = ranks.tolist()
        if listed != sorted(listed):
            raise FormatError(f"shard {key} is not in ascending rank order")


def load_build(root: Path, secret: bytes) -> Build:
    """Read, check and prepare the build in `root` (blocking: run it in a thread)."""
    directory = shardformat.load(root)
    check(directory)
    return prepare(directory, secret)


def peek_build_id(root: Path) -> str | None:
    """The build id `root/manifest.json` announces, None if unreadable (blocking, cheap)."""
    try:
        manifest = orjson.loads((root / shardformat.MANIFEST).read_bytes())
        build_id = manifest.get("buildId") if isinstance(manifest, dict) else None
    except (OSError, orjson.JSONDecodeError):
        return None
    return build_id if isinstance(build_id, str) else None


def load_if_new(root: Path, secret: bytes, serving: str | None) -> Build | None:
    """The build in `root`, or None when it is the one being served (blocking).

    The manifest alone says which build it is: reading it spares a whole load when the
    manifest's file changed but not the build (a rebuild of the same content).
    """
    if serving is not None and peek_build_id(root) == serving:
        return None
    log.info("loading the build in %s", root)
    return load_build(root, secret)


# --- the list query ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Index:
    """What `select_page` seeks in, precomputed once per build."""

    shards: dict[str, array[int]]  # combo key -> ascending ranks
    sort_keys: list[tuple[int, str]]  # by rank: (-score, slug), ascending = directory order
    neg_scores: list[int]  # by rank: -score, ascending

    @classmethod
    def of(cls, directory: Directory) -> Index:
        neg_scores = [-score for score in directory.scores]
        return cls(
            directory.shards, list(zip(neg_scores, directory.slugs, strict=True)), neg_scores
        )


@dataclass(frozen=True, slots=True)
class Page:
    ranks: Sequence[int]  # the rows of this page, in directory order
    has_more: bool


def select_page(
    index: Index,
    combo: Combo,
    *,
    min_score: int | None,
    after: tuple[int, str] | None,
    limit: int,
) -> Page:
    """The page of `combo`'s shard that follows the row `after`, above the minScore cut.

    `after` is the (score, slug) of the last row the client saw: the page starts strictly
    after that sort key, whether or not the row is still in this build, so a rebuild
    between two pages neither repeats nor skips a programme it did not change.
    """
    ranks = index.shards.get(combo_key(combo))
    if ranks is None:  # no programme has this combination of terms
        return Page(_EMPTY, False)
    start = 0
    if after is not None:
        score, slug = after
        # key= a list's __getitem__: the bisection stays in C, no lambda per probe.
        start = bisect_right(ranks, (-score, slug), key=index.sort_keys.__getitem__)
    end = len(ranks)
    if min_score:
        # Scores descend along the shard: the cut is the first rank scoring below min_score.
        end = bisect_right(ranks, -min_score, lo=start, key=index.neg_scores.__getitem__)
    stop = min(start + limit, end)
    return Page(ranks[start:stop], stop < end)


# --- holding and reloading the build -------------------------------------------------


def manifest_signature(root: Path) -> Signature | None:
    """The identity of `root/manifest.json`, or None when there is none (yet)."""
    try:
        st = os.stat(root / shardformat.MANIFEST)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class DirectoryState:
    """The build being served (`current`, None before the first good one) and its source."""

    root: Path
    secret: bytes
    current: Build | None = None
    sighup: bool = False  # whether SIGHUP triggers a reload in this process
    _seen: Signature | None = field(default=None, repr=False)
    _wake: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def request_reload(self) -> None:
        """Make the watcher reload now, even if the manifest looks unchanged."""
        self._wake.set()

    async def refresh(self, *, force: bool = False) -> bool:
        """Load the build in `root` if it changed (or `force`); True when it was swapped in."""
        signature = manifest_signature(self.root)
        if signature is None:
            # dist/ is absent, or mid-swap by a plain rename: keep serving what we have.
            return False
        if signature == self._seen and not force:
            return False
        # Remember it before loading: a broken build is refused once, not every interval.
        self._seen = signature
        serving = self.current.build_id if self.current is not None else None
        started = time.perf_counter()
        try:
            build = await asyncio.to_thread(load_if_new, self.root, self.secret, serving)
        except Exception as exc:
            # FormatError is the expected refusal; anything else is a reader bug, but the
            # answer is the same: the build in service stays.
            log.error(
                "refused the build in %s: %s (still serving %s)",
                self.root,
                exc,
                serving or "nothing",
                exc_info=not isinstance(exc, FormatError),
            )
            return False
        if build is None or (self.current is not None and build.build_id == self.current.build_id):
            return False
        # The swap: one reference. Requests holding the old Build finish on it.
        self.current = build
        log.info(
            "serving build %s: %d programmes, loaded in %.3f s",
            build.build_id,
            len(build.directory.rows),
            time.perf_counter() - started,
        )
        return True

    async def watch(self, interval: float) -> None:
        """Poll the manifest every `interval` seconds, or sooner when woken (SIGHUP)."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), interval)
            forced = self._wake.is_set()
            self._wake.clear()
            try:
                await self.refresh(force=forced)
            except Exception:  # the watcher must outlive any surprise; the build stays
                log.exception("directory reload failed")


def add_sighup(state: DirectoryState) -> bool:
    """Reload on SIGHUP where that is possible: a Unix loop running in the main thread."""
    if not hasattr(signal, "SIGHUP") or threading.current_thread() is not threading.main_thread():
        return False
    try:
        asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, state.request_reload)
    except (NotImplementedError, RuntimeError, ValueError):
        return False
    return True
