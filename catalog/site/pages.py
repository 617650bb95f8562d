"""The HTML directory: renders the static website from templates/ (`templates_dir`).

`render_site` is called once per build with the published programmes in directory order and
returns every file of the site as {path relative to dist/: bytes}. The output depends only
on its inputs (no clock, no locale, no randomness): the same programmes give byte-identical
files. Templates are compiled once per call; each programme's card is rendered once per
link depth and reused by every listing it appears in, which keeps 20,000 programmes fast.
See docs/site.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import jinja2
import markupsafe
import orjson
from jinja2 import Environment, FileSystemLoader, StrictUndefined, Template, select_autoescape
from markupsafe import Markup, escape

from catalog import guides, scoring
from catalog.cache import output_digest
from catalog.model import Existing, Program
from catalog.site import seo
from catalog.site.meta import (
    excerpt,
    human_date,
    json_ld,
    normalise_base_url,
    number,
    plural,
    safe_url,
    sitemap_chunks,
)
from catalog.site.plan import (
    HOME_TOP,
    PER_PAGE,
    Listing,
    file_of,
    listing_dir,
    listings,
    markdown_of,
    platform_key,
    program_dir,
    root_of,
)
from catalog.site.score import Breakdown, score_view
from contract.countries import COUNTRIES
from contract.labels import LABELS, Kind


def templates_dir() -> Path:
    """The site's templates: the installed data package `catalog.templates` (pyproject.toml
    makes it of templates/), else templates/ beside the package in a checkout."""
    spec = importlib.util.find_spec("catalog.templates")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parents[2] / "templates"


TEMPLATES_DIR = templates_dir()
SITE_NAME = "Affiliate Programme Directory"
CSS_SOURCE = "static/site.css"
# Copied as they are, next to the fingerprinted stylesheet.
STATIC_FILES = (
    "static/favicon.svg",
    "static/search.js",
    "static/age.js",
    "static/dashboard.js",
    "static/dashboard.css",
)
PAGE_TEMPLATES = (
    "home.html",
    "listing.html",
    "sections.html",
    "program.html",
    "about.html",
    "404.html",
    "_card.html",
    "_header.html",
    "_footer.html",
    "sitemap.xml",
    "sitemap-index.xml",
    "robots.txt",
    "program.md",
    "llms.txt",
    "search.html",
    "app.html",
)
# Stands for a page's relative root inside a cached card (see _Renderer.card).
ROOT_MARK = Markup("<root>")
SECTION_TITLES = {
    "verticals": "Verticals",
    "models": "Payout models",
    "markets": "Markets",
    "payouts": "Payment cadences",
    "commission-modes": "Commission types",
    "platforms": "Platforms",
}
# What a platform listing is called when the programmes have none (`platform` empty).
IN_HOUSE_NAME = "In-house (run by the advertiser)"


def make_environment(templates: Path, compiled: Path | None = None) -> Environment:
    """The Jinja2 environment: autoescaping for HTML and XML, errors for undefined names.

    `compiled`: a directory where Jinja2 keeps the templates it compiled (its own bytecode
    cache, keyed by each template's source and Jinja2's version), so that a rebuild does not
    compile them again (80 ms).
    """
    bytecode_cache = None
    if compiled is not None:
        compiled.mkdir(parents=True, exist_ok=True)
        bytecode_cache = jinja2.FileSystemBytecodeCache(str(compiled))
    env = Environment(
        loader=FileSystemLoader(templates),
        bytecode_cache=bytecode_cache,
        autoescape=select_autoescape(("html", "xml")),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.filters.update(number=number, human_date=human_date, plural=plural, md=markdown_text)
    # An object, not the mapping: `labels.model` is then a plain attribute lookup for Jinja
    # (on a mapping it raises and catches AttributeError first, on every use).
    env.globals.update(site_name=SITE_NAME, labels=SimpleNamespace(**LABELS), label=label_text)
    return env


# Characters that would make Markdown of a submission's text: emphasis, code, links, HTML,
# headings and list markers at a line's start. Escaped, the text reads as the advertiser wrote it.
_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>#|"})


def markdown_text(text: object) -> str:
    """`text` for a Markdown page: one line, its Markdown characters escaped."""
    return " ".join(str(text).split()).translate(_MARKDOWN_SPECIAL)


SEARCH_DIR = "search/"
# The publisher dashboard (docs/dashboard.md): served with its own CSP header by the edge.
APP_DIR = "app/"
SEARCH_INDEX = "search.json"


def search_index(programs: Sequence[Program]) -> bytes:
    """What the search page searches, in directory order: each programme's slug, name,
    commission and score, and the text its words come from (name, pitch, host, commission)."""
    return orjson.dumps(
        [
            {
                "slug": p.slug,
                "name": p.name,
                "commission": p.commission,
                "score": p.score,
                "text": " ".join((p.name, p.pitch, p.host, p.commission)),
            }
            for p in programs
        ]
    )


def label_text(kind: Kind, value: str) -> str:
    """`Health (Santé)`: the English label, with the French one when it differs."""
    entry = LABELS[kind][value]
    return entry.en if entry.fr == entry.en else f"{entry.en} ({entry.fr})"


def label_html(kind: Kind, value: str) -> Markup:
    """Like label_text, with the French words marked as French for screen readers."""
    entry = LABELS[kind][value]
    if entry.fr == entry.en:
        return escape(entry.en)
    return (
        escape(entry.en) + Markup(' <span class="fr" lang="fr">(') + entry.fr + Markup(")</span>")
    )


def model_text(value: str) -> str:
    """`Cost per sale (CPS)`: a model's label, with its acronym when the value is one."""
    name = LABELS["model"][value].en
    return name if value.upper() in name.upper() else f"{name} ({value.upper()})"


def pager(current: int, total: int, around: int = 2) -> list[int | None]:
    """Page numbers to show around `current`, None where a gap is elided: 1 … 4 5 6 7 8 … 70."""
    shown = sorted({1, total, *range(max(1, current - around), min(total, current + around) + 1)})
    out: list[int | None] = []
    for number_ in shown:
        if out and number_ - (out[-1] or 0) > 1:
            out.append(None)
        out.append(number_)
    return out


class CountryNames(dict[str, str]):
    """ISO code (either case) -> `France (FR)`; the bare code when the table lacks it."""

    def __missing__(self, code: str) -> str:
        upper = code.upper()
        return self[upper] if upper != code and upper in self else upper


@dataclass(frozen=True)
class Names:
    """Display names, computed once per build: templates look them up instead of calling
    helpers, which Jinja does much more slowly (20,000 pages add up)."""

    vertical: dict[str, Markup]
    model: dict[str, str]
    country: CountryNames
    payout: dict[str, Markup]
    commission_mode: dict[str, Markup]

    @classmethod
    def build(cls, countries: dict[str, str]) -> Names:
        return cls(
            vertical={value: label_html("vertical", value) for value in LABELS["vertical"]},
            model={value: model_text(value) for value in LABELS["model"]},
            country=CountryNames({code: f"{name} ({code})" for code, name in countries.items()}),
            payout={value: label_html("payout", value) for value in LABELS["payout"]},
            commission_mode={
                value: label_html("commissionMode", value) for value in LABELS["commissionMode"]
            },
        )


def fingerprinted(path: str, content: bytes) -> str:
    """`static/site.css` -> `static/site.<hash>.css`: a new name whenever the content changes,
    so the file can be cached for a year."""
    stem, dot, ext = path.rpartition(".")
    return f"{stem}.{hashlib.sha256(content).hexdigest()[:10]}{dot}{ext}"


# What a page can depend on besides its programme: these modules (catalog.site and what it
# imports from the project; a test keeps the list complete), every file of templates/,
# Python's version, Jinja2's and MarkupSafe's, and the base URL.
SITE_SOURCES = (
    "catalog/site/pages.py",
    "catalog/guides.py",
    "catalog/site/meta.py",
    "catalog/site/plan.py",
    "catalog/site/score.py",
    "catalog/site/seo.py",
    "catalog/cache.py",
    "catalog/scoring.py",
    "catalog/model.py",
    "contract/commission.py",
    "contract/countries.py",
    "contract/currencies.py",
    "contract/labels.py",
    "contract/resources.py",
    "contract/textsearch.py",
    "contract/vocabulary.py",
)


def site_version(base_url: str, templates: Path = TEMPLATES_DIR) -> bytes:
    """A digest of everything but the programme that a programme's page is rendered from."""
    digest = hashlib.blake2b(digest_size=16, person=b"affdir-site")
    digest.update(f"{sys.version}\0{normalise_base_url(base_url)}\0".encode())
    # Jinja2's and MarkupSafe's versions: their __init__ modules (Jinja2's holds its version,
    # MarkupSafe's its escaping), read instead of asking importlib.metadata (30 ms to import).
    for package in (jinja2, markupsafe):
        digest.update(Path(package.__file__ or "").read_bytes())
    root = Path(__file__).resolve().parents[2]
    for name in SITE_SOURCES:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes())
    for path in sorted(p for p in templates.rglob("*") if p.is_file()):
        digest.update(path.relative_to(templates).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.digest()


@dataclass
class Reuse:
    """Pages that dist/ already holds, so that a rebuild need not render them again.

    A programme's page is a pure function of the programme and of `site_version`; a listing
    page, of where it is, its listing's size and its programmes. The last build remembered,
    per page, the key of its inputs and the digest of its bytes (`known`, the build cache's
    pages.bin); when the key is the same and dist/ still holds those bytes (`live`, what
    catalog.cache.Outputs knows of dist/), the page is handed to the writer as `Existing`
    and hard-linked from dist/. Rendering all 21,000 pages of 20,000 submissions takes 9 s.
    The home page, section indexes and sitemaps are always rendered (a few dozen files).
    """

    version: bytes  # site_version()
    live: Mapping[str, str]  # {path: digest} of the files dist/ holds now
    known: Mapping[str, list]  # {path: [key, digest, size]} of the last build's pages
    # slug -> the content key of its submission (catalog.cache.content_key), which decides
    # the programme entirely (it covers the validation and scoring code): the page key is
    # made from it instead of from the programme's JSON, 17,000 dumps and hashes less.
    program_keys: Mapping[str, str] = field(default_factory=dict)
    compiled: Path | None = None  # where Jinja2 keeps compiled templates (make_environment)
    pages: dict[str, list] = field(default_factory=dict)  # the same, for this build
    reused: int = 0
    _keys: dict[str, str] = field(default_factory=dict, repr=False)  # slug -> key()

    def key(self, program: Program) -> str:
        """The key of everything a programme's page (and its card) is made of."""
        key = self._keys.get(program.slug)
        if key is None:
            content = self.program_keys.get(program.slug)
            data = self.version + (
                b"content:" + content.encode() if content else orjson.dumps(program)
            )
            key = self._keys[program.slug] = hashlib.blake2b(data, digest_size=16).hexdigest()
        return key

    def listing_key(self, listing: Listing, number: int) -> str:
        """The key of a listing page: where it is, its listing's size, its programmes."""
        inputs = [listing.section, listing.value, listing.name, number, listing.pages]
        inputs.append(len(listing.programs))
        inputs += [self.key(program) for program in listing.page(number)]
        return hashlib.blake2b(self.version + orjson.dumps(inputs), digest_size=16).hexdigest()

    def take(self, path: str, key: str) -> Existing | None:
        """The page dist/ holds at `path`, if it was made from the same inputs."""
        known = self.known.get(path)
        if known is None or known[0] != key or self.live.get(path) != known[1]:
            return None
        self.pages[path] = known
        self.reused += 1
        return Existing(known[1], known[2])

    def remember(self, path: str, key: str, body: bytes) -> bytes:
        """Note a page just rendered, for the next build; returns it."""
        self.pages[path] = [key, output_digest(body), len(body)]
        return body

    @property
    def changed(self) -> bool:
        return self.pages != self.known


def render_site(
    programs: Sequence[Program], base_url: str, reuse: Reuse | None = None
) -> dict[str, bytes | Existing]:
    """Every page of the website, as {path relative to dist/: bytes}, programmes in directory
    order; with `reuse`, the unchanged programme pages dist/ holds come as `Existing`."""
    css = (TEMPLATES_DIR / CSS_SOURCE).read_bytes()
    renderer = _Renderer(
        base=normalise_base_url(base_url),
        env=make_environment(TEMPLATES_DIR, reuse.compiled if reuse else None),
        css_path=fingerprinted(CSS_SOURCE, css),
        countries=dict(COUNTRIES),
        breakdown=scoring.breakdown,
        # The day the terms' ages are counted to, as the score counts them: the same
        # content gives the same pages whenever it is built.
        reference=scoring.reference_day(p.lastVerifiedAt for p in programs),
        reuse=reuse,
    )
    files: dict[str, bytes | Existing] = {renderer.css_path: css, CSS_SOURCE: css}
    for path in STATIC_FILES:
        files[path] = (TEMPLATES_DIR / path).read_bytes()
    files.update(renderer.render(tuple(programs)))
    return files


@dataclass
class _Renderer:
    """One build's rendering: the compiled templates and the per-build card cache."""

    base: str
    env: Environment
    css_path: str
    countries: dict[str, str]
    breakdown: Breakdown | None
    reference: str = ""  # the build's reference day, YYYY-MM-DD (catalog.scoring)
    reuse: Reuse | None = None
    templates: dict[str, Template] = field(init=False)
    cards: dict[str, str] = field(init=False, default_factory=dict)
    chromes: dict[tuple[str, str], dict[str, Markup]] = field(init=False, default_factory=dict)
    names: Names = field(init=False)

    def __post_init__(self) -> None:
        self.names = Names.build(self.countries)
        self.env.globals.update(names=self.names, css_path=self.css_path)
        self.templates = {name: self.env.get_template(name) for name in PAGE_TEMPLATES}

    # --- helpers --------------------------------------------------------------------

    def url(self, directory: str) -> str:
        return f"{self.base}/{directory}"

    def chrome(self, root: str, section: str) -> dict[str, Markup]:
        """The header and footer shared by every page at one link depth and section."""
        key = (root, section)
        if key not in self.chromes:
            ctx = {"root": root, "home_href": root or "./", "section": section}
            # Markup: the output of an autoescaping template, inserted as it is.
            self.chromes[key] = {
                part: Markup(self.templates[f"_{part}.html"].render(ctx))
                for part in ("header", "footer")
            }
        return self.chromes[key]

    def common(self, directory: str, section: str = "", root: str | None = None) -> dict[str, Any]:
        """What base.html needs, for a page living in `directory` (relative to the root)."""
        root = root_of(directory) if root is None else root
        return {
            "root": root,
            "chrome": self.chrome(root, section),
            "home_href": root or "./",
            "canonical": self.url(directory),
            "robots": "",
            "prev_href": "",
            "next_href": "",
            "og_image": "",
            "og_title": "",
            "breadcrumbs": (),
            "jsonld": "",
        }

    def crumbs(
        self, root: str, trail: Sequence[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], dict]:
        """(name, directory) pairs -> relative links for the page and BreadcrumbList JSON-LD."""
        full = [("Home", ""), *trail]
        links = [(name, (root + directory) or "./") for name, directory in full]
        data = seo.breadcrumb_list([(name, self.url(directory)) for name, directory in full])
        return links, data

    def card(self, program: Program, root: str) -> Markup:
        """A programme's card, rendered once and reused by every listing it appears in.

        Its links start with the page's path back to the root, which differs with the depth
        of the listing page: the card is rendered with ROOT_MARK there, then the mark is
        replaced. The mark contains `<`, which autoescaping turns into `&lt;` everywhere in
        a submission's text, so the raw mark can only be where the template put it."""
        html = self.cards.get(program.slug)
        if html is None:
            html = self.templates["_card.html"].render(p=program, root=ROOT_MARK)
            self.cards[program.slug] = html
        # Markup: the output of an autoescaping template, inserted as it is.
        return Markup(html.replace(ROOT_MARK, root))

    def page(self, template: str, **context: Any) -> bytes:
        return self.templates[template].render(**context).encode()

    # --- pages ----------------------------------------------------------------------

    def render(self, programs: tuple[Program, ...]) -> Iterator[tuple[str, bytes | Existing]]:
        groups = listings(programs)
        urls: list[str] = [self.url("")]
        yield "index.html", self.home(programs, groups)
        for section, section_listings in groups.items():
            yield file_of(f"{section}/"), self.section_index(section, section_listings)
            urls.append(self.url(f"{section}/"))
            for listing in section_listings:
                for number_ in range(1, listing.pages + 1):
                    directory = listing_dir(section, listing.value, number_)
                    yield file_of(directory), self.listing_file(listing, number_, directory)
                    urls.append(self.url(directory))
        for program in programs:
            directory = program_dir(program.slug)
            yield file_of(directory), self.program_file(program, directory)
            yield markdown_of(directory), self.program_markdown_file(program, directory)
            urls.append(self.url(directory))
        yield file_of("about/"), self.about()
        urls.append(self.url("about/"))
        yield file_of(SEARCH_DIR), self.search_page()
        yield SEARCH_INDEX, search_index(programs)
        yield file_of(APP_DIR), self.dashboard()
        # The API's docs (written by the build beside the site, catalog.docpages).
        urls.extend(self.url(path) for path in guides.urls())
        yield "404.html", self.not_found()
        yield from self.sitemaps(urls)
        yield "robots.txt", self.page("robots.txt", sitemap=self.url("sitemap.xml"))
        yield "llms.txt", self.llms(programs)

    def home(self, programs: tuple[Program, ...], groups: dict[str, tuple[Listing, ...]]) -> bytes:
        ctx = self.common("")
        top = programs[:HOME_TOP]
        ctx.update(
            title="Affiliate programmes, ranked",
            og_title=SITE_NAME,
            description=(
                f"{plural(len(programs), 'affiliate programme')} submitted by advertisers, "
                "with their commission, cookie window and payout terms, ranked by score."
            ),
            total=len(programs),
            cards=[self.card(p, "") for p in top],
            browse=[
                (section, SECTION_TITLES[section], [self.chip(listing) for listing in group])
                for section, group in groups.items()
            ],
            jsonld=json_ld(
                seo.graph(
                    {"@type": "WebSite", "name": SITE_NAME, "url": self.url("")},
                    seo.item_list(
                        "Top affiliate programmes",
                        [(self.url(program_dir(p.slug)), p.name) for p in top],
                    ),
                )
            ),
        )
        return self.page("home.html", **ctx)

    def section_index(self, section: str, section_listings: tuple[Listing, ...]) -> bytes:
        directory = f"{section}/"
        ctx = self.common(directory, section)
        title = SECTION_TITLES[section]
        links, crumbs = self.crumbs(ctx["root"], [(title, directory)])
        ctx.update(
            title=f"Affiliate programmes by {title.lower().removesuffix('s')}",
            description=f"Browse affiliate programmes by {title.lower().removesuffix('s')}.",
            heading=title,
            entries=[self.chip(listing) for listing in section_listings],
            breadcrumbs=links,
            jsonld=json_ld(seo.graph(crumbs)),
        )
        return self.page("sections.html", **ctx)

    def chip(self, listing: Listing) -> SimpleNamespace:
        """A link to a listing for an index: its path segment, display name, count and
        explanation (home page, section indexes)."""
        return SimpleNamespace(
            value=listing.value,
            name=self.listing_html(listing),
            count=len(listing.programs),
            about=self.listing_about(listing),
        )

    def listing_html(self, listing: Listing) -> Markup | str:
        """A listing's display name for a page, French words marked as French."""
        section, value = listing.section, listing.value
        if section == "verticals":
            return self.names.vertical[value]
        if section == "payouts":
            return self.names.payout[value]
        if section == "commission-modes":
            return self.names.commission_mode[value]
        return self.listing_name(listing)

    def listing_about(self, listing: Listing) -> str:
        """The one-line explanation of a vocabulary value, where it has one."""
        kind = {"models": "model", "payouts": "payout", "commission-modes": "commissionMode"}
        if listing.section not in kind:
            return ""
        return LABELS[kind[listing.section]][listing.value].about_en

    def listing_name(self, listing: Listing) -> str:
        """`Health (Santé)`, `Cost per sale (CPS)`, `France (FR)`, `Monthly (Mensuel)`,
        `Awin`: for titles and breadcrumbs."""
        section, value = listing.section, listing.value
        if section == "verticals":
            return label_text("vertical", value)
        if section == "models":
            return model_text(value)
        if section == "payouts":
            return label_text("payout", value)
        if section == "commission-modes":
            return label_text("commissionMode", value)
        if section == "platforms":
            return listing.name or IN_HOUSE_NAME
        return self.names.country[value]

    def listing_title(self, listing: Listing) -> str:
        name = self.listing_name(listing)
        if listing.section == "markets":
            return f"Affiliate programmes in {name}"
        if listing.section == "payouts":
            return f"Affiliate programmes paid {LABELS['payout'][listing.value].en.lower()}"
        if listing.section == "commission-modes":
            mode = LABELS["commissionMode"][listing.value].en.lower()
            return f"Affiliate programmes with {mode} commissions"
        if listing.section == "platforms":
            if not listing.name:
                return "In-house affiliate programmes (run by the advertiser)"
            return f"Affiliate programmes on {name}"
        return f"{name} affiliate programmes"

    def listing_page(self, listing: Listing, number_: int) -> bytes:
        directory = listing_dir(listing.section, listing.value, number_)
        ctx = self.common(directory, listing.section)
        root = ctx["root"]
        heading = self.listing_title(listing)
        suffix = f" — page {number_} of {listing.pages}" if number_ > 1 else ""
        items = listing.page(number_)
        first = (number_ - 1) * PER_PAGE + 1
        trail = [
            (SECTION_TITLES[listing.section], f"{listing.section}/"),
            (self.listing_name(listing), listing_dir(listing.section, listing.value)),
        ]
        if number_ > 1:
            trail.append((f"Page {number_}", directory))
        links, crumbs = self.crumbs(root, trail)
        ctx.update(
            title=heading + suffix,
            description=(
                f"{heading}: {plural(len(listing.programs), 'programme')} ranked by score{suffix}."
            ),
            heading=heading,
            listing=listing,
            about=self.listing_about(listing),
            page_number=number_,
            first=first,
            last=first + len(items) - 1,
            cards=[self.card(p, root) for p in items],
            pager=[
                (n, root + listing_dir(listing.section, listing.value, n) if n else "")
                for n in pager(number_, listing.pages)
            ],
            breadcrumbs=links,
            jsonld=json_ld(
                seo.graph(
                    seo.item_list(
                        heading,
                        [(self.url(program_dir(p.slug)), p.name) for p in items],
                        first=first,
                    ),
                    crumbs,
                )
            ),
        )
        if number_ > 1:
            ctx["prev_href"] = root + listing_dir(listing.section, listing.value, number_ - 1)
        if number_ < listing.pages:
            ctx["next_href"] = root + listing_dir(listing.section, listing.value, number_ + 1)
        return self.page("listing.html", **ctx)

    def program_file(self, program: Program, directory: str) -> bytes | Existing:
        """A programme's page: the one dist/ holds when its inputs did not change (Reuse)."""
        if self.reuse is None:
            return self.program_page(program, directory)
        path, key = file_of(directory), self.reuse.key(program)
        kept = self.reuse.take(path, key)
        if kept is not None:
            return kept
        return self.reuse.remember(path, key, self.program_page(program, directory))

    def program_markdown_file(self, program: Program, directory: str) -> bytes | Existing:
        """A programme's Markdown page (`program_file`'s rule: kept when unchanged)."""
        if self.reuse is None:
            return self.program_markdown(program, directory)
        path, key = markdown_of(directory), self.reuse.key(program)
        kept = self.reuse.take(path, key)
        if kept is not None:
            return kept
        return self.reuse.remember(path, key, self.program_markdown(program, directory))

    def program_markdown(self, program: Program, directory: str) -> bytes:
        return self.page(
            "program.md",
            p=program,
            verified_days=scoring.age_days(program.lastVerifiedAt, self.reference),
            reference=self.reference,
            page=self.url(directory),
            api=f"{self.base}/v1/programs/{program.slug}",
        )

    def llms(self, programs: tuple[Program, ...]) -> bytes:
        """`llms.txt` (llmstxt.org): the directory in one Markdown file, a line per programme."""
        return self.page(
            "llms.txt",
            programs=programs,
            count=len(programs),
            markdown_urls={p.slug: self.url(markdown_of(program_dir(p.slug))) for p in programs},
            api=f"{self.base}/v1/programs",
            docs=self.url("docs/"),
            openapi=f"{self.base}/openapi.json",
            sitemap=self.url("sitemap.xml"),
        )

    def listing_file(self, listing: Listing, number_: int, directory: str) -> bytes | Existing:
        """A listing page: the one dist/ holds when its inputs did not change (Reuse)."""
        if self.reuse is None:
            return self.listing_page(listing, number_)
        path, key = file_of(directory), self.reuse.listing_key(listing, number_)
        kept = self.reuse.take(path, key)
        if kept is not None:
            return kept
        return self.reuse.remember(path, key, self.listing_page(listing, number_))

    def program_page(self, program: Program, directory: str) -> bytes:
        ctx = self.common(directory, "")
        canonical = ctx["canonical"]
        vertical_dir = listing_dir("verticals", program.vertical)
        links, crumbs = self.crumbs(
            ctx["root"],
            [(label_text("vertical", program.vertical), vertical_dir), (program.name, directory)],
        )
        signup, website, image, evidence = (
            safe_url(program.signupUrl),
            safe_url(program.site),
            safe_url(program.image),
            safe_url(program.evidence),
        )
        offer = seo.program_offer(program, canonical, signup=signup, website=website)
        ctx.update(
            title=f"{program.name} affiliate programme",
            og_title=program.name,
            description=excerpt(f"{program.commission}. {program.pitch}"),
            p=program,
            signup=signup,
            website=website,
            image=image,
            evidence=evidence,
            platform_dir=listing_dir("platforms", platform_key(program.platform)),
            score=score_view(program, self.breakdown),
            og_image=image or "",
            breadcrumbs=links,
            jsonld=json_ld(seo.graph(offer, crumbs)),
        )
        return self.page("program.html", **ctx)

    def about(self) -> bytes:
        ctx = self.common("about/", "about")
        links, crumbs = self.crumbs(ctx["root"], [("How it works", "about/")])
        ctx.update(
            title="How the directory and its score work",
            description="How programmes are listed, reviewed and scored in the directory.",
            score=score_view(None),
            breadcrumbs=links,
            jsonld=json_ld(seo.graph(crumbs)),
        )
        return self.page("about.html", **ctx)

    def search_page(self) -> bytes:
        """The search page: a form, and a script that reads `search.json` (no server code)."""
        ctx = self.common(SEARCH_DIR, "search")
        links, _ = self.crumbs(ctx["root"], [("Search", SEARCH_DIR)])
        ctx.update(
            title="Search programmes",
            description="Find affiliate programmes by name, pitch, site or commission.",
            breadcrumbs=links,
            robots="noindex",  # a page of results per query: nothing for a search engine
            jsonld="",
        )
        return self.page("search.html", **ctx)

    def dashboard(self) -> bytes:
        """The publisher dashboard: a shell that its script fills from the API with the
        reader's key; nothing of an account is in the file, nothing for a search engine."""
        ctx = self.common(APP_DIR)
        ctx.update(
            title="Publisher dashboard",
            description="Your commissions, connections and events, read from the API with your key.",
            robots="noindex",
        )
        return self.page("app.html", **ctx)

    def not_found(self) -> bytes:
        # Served for any missing path at any depth: links must not be relative to it.
        root = urlsplit(self.base).path + "/"
        ctx = self.common("", "", root=root)
        ctx.update(
            canonical="",
            robots="noindex",
            title="Page not found",
            description="This page does not exist.",
        )
        return self.page("404.html", **ctx)

    def sitemaps(self, urls: list[str]) -> Iterator[tuple[str, bytes]]:
        chunks = sitemap_chunks(urls)
        if len(chunks) == 1:
            yield "sitemap.xml", self.page("sitemap.xml", urls=chunks[0])
            return
        names = [f"sitemap-{i}.xml" for i in range(1, len(chunks) + 1)]
        for name, chunk in zip(names, chunks, strict=True):
            yield name, self.page("sitemap.xml", urls=chunk)
        yield "sitemap.xml", self.page("sitemap-index.xml", urls=[self.url(name) for name in names])
