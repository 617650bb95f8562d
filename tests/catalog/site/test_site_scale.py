"""render_site at the build's scale: 20,000 programmes, timed, in one pass."""

from __future__ import annotations

import time

import pytest
from site_samples import BASE_URL, synthetic

from catalog.site import pages as site
from catalog.site.plan import PER_PAGE
from contract.vocabulary import MODELS, VERTICALS

COUNT = 20_000
# Generous: the point is to catch a regression in kind (quadratic work, a template compiled
# per page), not to benchmark a shared machine. 5 to 10 s of CPU is expected here.
CPU_SECONDS_MAX = 60


@pytest.mark.slow
def test_twenty_thousand_programmes(capsys):
    programs = synthetic(COUNT)
    cpu, wall = time.process_time(), time.perf_counter()
    files = site.render_site(programs, BASE_URL)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    size = sum(map(len, files.values()))
    with capsys.disabled():
        print(
            f"\nrender_site: {COUNT} programmes -> {len(files)} files, {size / 1e6:.0f} MB "
            f"in {wall:.1f} s ({cpu:.1f} s CPU)"
        )
    assert cpu < CPU_SECONDS_MAX
    # Each programme's page and its Markdown twin.
    assert sum(p.startswith("programs/") and p.endswith(".html") for p in files) == COUNT
    assert sum(p.startswith("programs/") and p.endswith(".md") for p in files) == COUNT
    per_vertical = -(-COUNT // len(VERTICALS) // PER_PAGE)
    per_model = -(-COUNT // len(MODELS) // PER_PAGE)
    assert f"verticals/saas/page/{per_vertical}/index.html" in files
    assert f"models/cps/page/{per_model}/index.html" in files


def test_each_card_is_rendered_once(monkeypatch):
    programs = tuple(synthetic(300))
    renderer = site._Renderer(
        base=BASE_URL,
        env=site.make_environment(site.TEMPLATES_DIR),
        css_path="static/site.css",
        countries={},
        breakdown=None,
    )
    template = renderer.templates["_card.html"]
    rendered: list[str] = []
    monkeypatch.setattr(
        template,
        "render",
        lambda p, root, _r=template.render: rendered.append(p.slug) or _r(p=p, root=root),
    )
    asked: list[str] = []
    card = site._Renderer.card
    monkeypatch.setattr(
        site._Renderer, "card", lambda self, p, root: asked.append(p.slug) or card(self, p, root)
    )
    files = dict(renderer.render(programs))
    # Cards appear on the home page and on vertical, model and market listings ...
    assert len(asked) > 4 * len(programs)
    # ... and are rendered once each.
    assert sorted(rendered) == sorted(p.slug for p in programs)
    assert not any(str(site.ROOT_MARK) in data.decode() for data in files.values())
