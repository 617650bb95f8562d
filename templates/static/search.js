// The search page: finds programmes in the build's search.json, in the browser, in directory
// order (highest score first). Every word of the query must begin a word of a programme's
// name, pitch, site or commission; case and accents do not matter. Nothing but search.json is
// fetched, and results are written as text, never as HTML.
"use strict";
(function () {
  const MAX_TERMS = 10;
  const form = document.getElementById("search-form");
  const input = document.getElementById("q");
  const status = document.getElementById("search-status");
  const list = document.getElementById("search-results");
  const root = form.dataset.root;

  function words(text) {
    return text
      .normalize("NFKD")
      .replace(/\p{M}+/gu, "")
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
  }

  let loaded = null;
  function index() {
    if (loaded === null) {
      loaded = fetch(form.dataset.index)
        .then((answer) => {
          if (!answer.ok) throw new Error("HTTP " + answer.status);
          return answer.json();
        })
        .then((rows) => rows.map((row) => Object.assign(row, { words: words(row.text) })));
    }
    return loaded;
  }

  function matches(row, terms) {
    return terms.every((term) => row.words.some((word) => word.startsWith(term)));
  }

  function show(hits) {
    list.replaceChildren(
      ...hits.map((row) => {
        const item = document.createElement("li");
        const link = document.createElement("a");
        link.href = root + "programs/" + encodeURIComponent(row.slug) + "/";
        link.textContent = row.name;
        item.append(link, " \u2014 " + row.commission + " (score " + row.score + ")");
        return item;
      })
    );
  }

  const query = new URLSearchParams(window.location.search).get("q") || "";
  input.value = query;
  const terms = words(query).slice(0, MAX_TERMS);
  if (terms.length === 0) {
    status.textContent = "";
    return;
  }
  status.textContent = "Searching\u2026";
  index()
    .then((rows) => {
      const hits = rows.filter((row) => matches(row, terms));
      status.textContent =
        hits.length === 1 ? "1 programme matches." : hits.length + " programmes match.";
      show(hits);
    })
    .catch((error) => {
      status.textContent = "The search index could not be loaded (" + error.message + ").";
    });
})();
