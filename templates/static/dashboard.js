/* The publisher dashboard (/app/): the public API read with the reader's key, drawn here.
   The key lives in sessionStorage only and leaves the page only as the Authorization header
   of same-origin requests. Amounts are shown as the API wrote them; nothing is converted
   or added across currencies. No library: the DOM is built with textContent, never HTML. */
"use strict";
(function () {
  var KEY_SLOT = "affdir.apiKey";
  var API = "../v1/";
  var STATUSES = ["paid", "approved", "pending", "unknown"]; // stacked bottom to top
  var STATUS_NAMES = {paid: "Paid", approved: "Approved", pending: "Pending", unknown: "Unknown", declined: "Declined"};
  var TOP = 10;
  var RANKED_PAGES = 10; // 1,000 ranked rows at most: thousands of sub-ids are not walked whole
  var EVENTS_SHOWN = 20;
  var EVENT_PAGES = 20; // bounded walk to the newest (each filtered page looks at 10,000 events)
  // What happened to known rows and connections; new commissions are the charts' matter
  // (a feed of thousands of creations would be walked page by page to reach its end).
  var EVENT_TYPES = "commission.updated,connection.sync_failed,connection.recovered";
  var SVG = "http://www.w3.org/2000/svg";
  var $ = function (id) { return document.getElementById(id); };
  var generation = 0; // a newer load makes an older one's answers moot

  // --- exact numbers -------------------------------------------------------------------
  // JSON numbers keep their text (the reviver's source, where the browser gives it); else
  // they are written with the currency's decimals when shown.
  var KEEPS_SOURCE = (function () {
    var kept = false;
    try { JSON.parse("1.50", function (k, v, ctx) { kept = !!(ctx && ctx.source === "1.50"); return v; }); } catch (e) { kept = false; }
    return kept;
  })();
  function parseExact(text) {
    if (!KEEPS_SOURCE) return JSON.parse(text);
    return JSON.parse(text, function (k, v, ctx) {
      return typeof v === "number" && ctx && typeof ctx.source === "string" ? {exact: ctx.source, value: v} : v;
    });
  }
  function decimalsOf(currency) {
    try { return new Intl.NumberFormat("en", {style: "currency", currency: currency}).resolvedOptions().maximumFractionDigits; }
    catch (e) { return 2; }
  }
  function numberText(n, currency) {
    if (n === null || n === undefined) return "";
    if (typeof n === "object") return n.exact;
    return currency ? n.toFixed(decimalsOf(currency)) : String(n);
  }
  function numberValue(n) { return n === null || n === undefined ? 0 : typeof n === "object" ? n.value : n; }
  // Exact decimal addition of two amounts of one currency (a month's stacked total).
  function addExact(a, b) {
    var pa = splitDecimal(a), pb = splitDecimal(b), scale = Math.max(pa[1], pb[1]);
    var sum = pa[0] * 10n ** BigInt(scale - pa[1]) + pb[0] * 10n ** BigInt(scale - pb[1]);
    var negative = sum < 0n, digits = (negative ? -sum : sum).toString().padStart(scale + 1, "0");
    var whole = digits.slice(0, digits.length - scale), frac = scale ? digits.slice(-scale).replace(/0+$/, "") : "";
    return (negative ? "-" : "") + whole + (frac ? "." + frac : "");
  }
  function splitDecimal(text) {
    var m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
    if (!m) return [0n, 0];
    var frac = m[3] || "";
    return [BigInt(m[1] + m[2] + frac), frac.length];
  }
  function amount(n, currency) { return numberText(n, currency) + " " + currency; }

  // --- the API -------------------------------------------------------------------------
  function ApiError(status, body) {
    this.status = status;
    this.code = body && body.code;
    this.param = body && body.param;
    this.message = (body && body.message) || "The API answered " + status + ".";
  }
  function api(key, path) {
    return fetch(API + path, {
      headers: {Authorization: "Bearer " + key, Accept: "application/json"},
      credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer", redirect: "error"
    }).then(function (resp) {
      return resp.text().then(function (text) {
        var body = null;
        try { body = parseExact(text); } catch (e) { body = null; }
        if (!resp.ok) throw new ApiError(resp.status, body && body.message !== undefined ? plain(body) : null);
        if (!body) throw new ApiError(resp.status, {message: "The API's answer was not JSON."});
        return body;
      });
    });
  }
  function plain(body) { // an error body: its numbers as plain values
    return {code: body.code, param: body.param, message: body.message};
  }
  function query(params) {
    var q = new URLSearchParams();
    Object.keys(params).forEach(function (k) { if (params[k]) q.set(k, params[k]); });
    var s = q.toString();
    return s ? "?" + s : "";
  }

  // --- the view in the fragment (never the key) ---------------------------------------
  function today() { return new Date().toISOString().slice(0, 10); }
  function defaultFrom() {
    var d = new Date(); d.setUTCDate(1); d.setUTCMonth(d.getUTCMonth() - 11);
    return d.toISOString().slice(0, 10);
  }
  var DATE = /^\d{4}-\d{2}-\d{2}$/;
  function readView() {
    var f = new URLSearchParams(location.hash.slice(1));
    var view = {from: f.get("from") || "", to: f.get("to") || "", network: f.get("network") || "", currency: f.get("currency") || ""};
    if (!DATE.test(view.from)) view.from = defaultFrom();
    if (!DATE.test(view.to)) view.to = today();
    if (!/^[A-Z]{3}$/.test(view.currency)) view.currency = "";
    if (view.network.length > 200) view.network = "";
    return view;
  }
  function writeView(view) {
    var f = new URLSearchParams();
    ["from", "to", "network", "currency"].forEach(function (k) { if (view[k]) f.set(k, view[k]); });
    history.replaceState(null, "", "#" + f.toString());
  }

  // --- DOM helpers --------------------------------------------------------------------
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "className") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  // A table in a scrolling region reachable by keyboard; `rows` are arrays of cells (text,
  // or a node such as a link), `numeric` the columns aligned right. Every table is also a
  // section of the CSV.
  function table(caption, head, rows, numeric) {
    var t = el("table", {className: "data", "data-csv": caption}, [el("caption", {text: caption})]);
    var tr = el("tr");
    head.forEach(function (h, i) { tr.appendChild(el("th", {scope: "col", className: numeric && numeric[i] ? "num" : "", text: h})); });
    t.appendChild(el("thead", null, [tr]));
    var tbody = el("tbody");
    rows.forEach(function (row) {
      var r = el("tr");
      row.forEach(function (cell, i) {
        var c = el(i === 0 ? "th" : "td", {className: numeric && numeric[i] ? "num" : ""}, [cell]);
        if (i === 0) c.setAttribute("scope", "row");
        r.appendChild(c);
      });
      tbody.appendChild(r);
    });
    t.appendChild(tbody);
    return el("div", {className: "table-scroll", tabindex: "0", role: "region", "aria-label": caption}, [t]);
  }
  function note(text) { return el("p", {className: "dash-note", text: text}); }

  // --- what is shown -------------------------------------------------------------------
  function months(from, to) {
    var out = [], y = +from.slice(0, 4), m = +from.slice(5, 7), endY = +to.slice(0, 4), endM = +to.slice(5, 7);
    while ((y < endY || (y === endY && m <= endM)) && out.length < 600) {
      out.push(y + "-" + String(m).padStart(2, "0"));
      if (++m > 12) { m = 1; y++; }
    }
    return out;
  }
  function currenciesOf(rows) {
    var seen = [];
    rows.forEach(function (r) { if (seen.indexOf(r.currency) < 0) seen.push(r.currency); });
    return seen.sort();
  }

  function renderTotals(target, totals, byStatus, shown) {
    clear(target);
    if (!shown.length) { target.appendChild(note("No commissions in this period.")); return; }
    var rows = shown.map(function (cur) {
      var total = totals.filter(function (r) { return r.currency === cur; })[0];
      var cells = [cur, total ? numberText(total.commission, cur) : "0", total ? numberText(total.count) : "0"];
      ["pending", "approved", "paid", "declined"].forEach(function (s) {
        var r = byStatus.filter(function (x) { return x.currency === cur && x.status === s; })[0];
        cells.push(r ? numberText(r.commission, cur) : "0");
      });
      return cells;
    });
    var cards = el("ul", {className: "total-cards"});
    rows.forEach(function (cells) {
      cards.appendChild(el("li", {className: "total-card"}, [
        el("span", {className: "total-currency", text: cells[0]}),
        el("span", {className: "total-amount", "data-currency": cells[0], text: cells[1]}),
        el("span", {className: "total-parts", text: "pending " + cells[3] + " · approved " + cells[4] + " · paid " + cells[5]})
      ]));
    });
    target.appendChild(cards);
    target.appendChild(table("Totals per currency", ["Currency", "Earned", "Commissions", "Pending", "Approved", "Paid", "Declined"], rows, [0, 1, 1, 1, 1, 1, 1]));
  }

  function renderMonths(target, rows, shown, view) {
    clear(target);
    var ms = months(view.from, view.to);
    shown.forEach(function (cur) {
      var cells = {};
      rows.forEach(function (r) { if (r.currency === cur && STATUSES.indexOf(r.status) >= 0) cells[r.month + " " + r.status] = r.commission; });
      var figure = el("figure", {className: "chart"});
      figure.appendChild(el("h3", {text: "Earnings per month in " + cur}));
      figure.appendChild(chart(ms, cells, cur));
      var tableRows = ms.map(function (m) {
        var total = "0";
        var row = [m];
        STATUSES.forEach(function (s) {
          var v = cells[m + " " + s];
          var text = v === undefined ? "0" : numberText(v, cur);
          total = addExact(total, text);
          row.push(text);
        });
        row.push(total);
        return row;
      });
      figure.appendChild(table("Commission per month and status, " + cur, ["Month", "Paid", "Approved", "Pending", "Unknown", "Total"], tableRows, [0, 1, 1, 1, 1, 1]));
      target.appendChild(figure);
    });
    if (!shown.length) target.appendChild(note("No commissions in this period."));
  }

  // A stacked bar per month; the table beside it holds the same numbers (the SVG is hidden
  // from assistive technology).
  function chart(ms, cells, cur) {
    var W = 640, H = 220, left = 56, bottom = 24, top = 10, plotH = H - top - bottom;
    var max = 0;
    ms.forEach(function (m) {
      var sum = 0;
      STATUSES.forEach(function (s) { sum += Math.max(0, numberValue(cells[m + " " + s])); });
      max = Math.max(max, sum);
    });
    var root = svg("svg", {viewBox: "0 0 " + W + " " + H, "aria-hidden": "true", focusable: "false", class: "chart-svg"});
    root.appendChild(svg("line", {x1: left, y1: top + plotH, x2: W, y2: top + plotH, class: "axis"}));
    var maxLabel = svg("text", {x: left - 6, y: top + 10, "text-anchor": "end", class: "tick"});
    maxLabel.textContent = String(Math.round(max)); // a guide: the table has the exact amounts
    root.appendChild(maxLabel);
    var zero = svg("text", {x: left - 6, y: top + plotH, "text-anchor": "end", class: "tick"});
    zero.textContent = "0";
    root.appendChild(zero);
    var step = (W - left) / Math.max(ms.length, 1), bar = Math.max(step * 0.7, 1);
    var every = Math.ceil(ms.length / 8);
    ms.forEach(function (m, i) {
      var x = left + i * step + (step - bar) / 2, y = top + plotH;
      STATUSES.forEach(function (s) {
        var v = Math.max(0, numberValue(cells[m + " " + s]));
        if (!v || !max) return;
        var h = (v / max) * plotH;
        y -= h;
        root.appendChild(svg("rect", {x: x.toFixed(1), y: y.toFixed(1), width: bar.toFixed(1), height: h.toFixed(1), class: "s-" + s}));
      });
      if (i % every === 0) {
        var label = svg("text", {x: (x + bar / 2).toFixed(1), y: H - 6, "text-anchor": "middle", class: "tick"});
        label.textContent = m;
        root.appendChild(label);
      }
    });
    return root;
  }

  // "89 % of 36": a realised rate (4 places, exact in the API) as a whole percentage,
  // halves up, with the count it is a share of; "—" where the API has no rate.
  function rateText(rate, of) {
    if (rate === null || rate === undefined) return "—";
    var tenThousandths = Math.round(numberValue(rate) * 10000);
    return Math.floor((tenThousandths + 50) / 100) + " % of " + numberText(of);
  }
  function approvalText(outcomes) { return outcomes ? rateText(outcomes.approvalRate, outcomes.decided) : "—"; }
  // An API whose summary lacks a grouping or an include refuses it by name: say so plainly.
  function unavailable(answer, what) {
    var missing = answer.status === 400 && answer.code === "invalid_parameter" && (answer.param === "groupBy" || answer.param === "include");
    return note(missing ? "Not available from this API: its summary does not give " + what + " yet." : answer.message);
  }

  function renderTop(target, answer, shown, kind) {
    clear(target);
    if (answer instanceof ApiError) {
      target.appendChild(unavailable(answer, (kind === "program" ? "programmes" : "sub-ids") + " with their outcomes"));
      return;
    }
    shown.forEach(function (cur) {
      var rows = answer.data.filter(function (r) { return r.currency === cur; }).slice(0, TOP).map(function (r) {
        var name = kind === "program"
          ? (r.programName || r.programExternalId || "(no programme)") + (r.network ? " (" + r.network + ")" : "")
          : (r.subId || "(no sub-id)");
        return [name, numberText(r.commission, cur), numberText(r.count), approvalText(r.outcomes)];
      });
      var title = (kind === "program" ? "Top programmes, " : "Top sub-ids, ") + cur;
      target.appendChild(rows.length ? table(title, [kind === "program" ? "Programme" : "Sub-id", "Commission", "Commissions", "Approved (realised)"], rows, [0, 1, 1, 1]) : note(title + ": none."));
    });
    if (!shown.length) target.appendChild(note("No commissions in this period."));
    if (answer.truncated) target.appendChild(note("Only the first 1,000 rows were read: choose a network or a shorter period to see every currency's top rows."));
  }

  // Commissions linked to a directory programme (groupBy=programSlug): what it advertises
  // beside what became of them, a row per programme and currency (never added across).
  function renderDirectory(target, answer, shown) {
    clear(target);
    if (answer instanceof ApiError) { target.appendChild(unavailable(answer, "directory programmes' terms")); return; }
    var rows = answer.data.filter(function (r) { return r.programSlug && shown.indexOf(r.currency) >= 0; }).map(function (r) {
      var t = r.terms || {}, o = r.outcomes || {};
      var link = el("a", {href: "../programs/" + encodeURIComponent(r.programSlug) + "/", text: t.name || r.programSlug});
      var dash = function (v) { return v === null || v === undefined ? "—" : numberText(v); };
      return [link, r.currency, t.commission || "—", dash(t.cookieDays), dash(t.holdbackDays), approvalText(r.outcomes),
        rateText(o.reversalRate, o.everApproved), dash(o.medianDaysToDecision), numberText(r.commission, r.currency)];
    });
    if (!rows.length) { target.appendChild(note("No commission in this period is linked to a programme of the directory.")); return; }
    target.appendChild(table("Directory programmes: advertised vs realised",
      ["Programme", "Currency", "Advertised commission", "Cookie days", "Holdback days", "Approved (realised)", "Reversed (realised)", "Median days to decision", "Earned"],
      rows, [0, 0, 0, 1, 1, 1, 1, 1, 1]));
    if (answer.truncated) target.appendChild(note("Only the first 1,000 rows were read: choose a network or a shorter period to see every programme."));
  }

  function renderConnections(target, me) {
    clear(target);
    var nets = me.data.networks || [];
    if (!nets.length) { target.appendChild(note("No network is connected.")); return; }
    target.appendChild(table("Connections", ["Network", "Status", "Complete through", "Reason", "Last success", "Transactions"], nets.map(function (n) {
      // A network connected for file imports is never synced: say so, with what its imports cover.
      if (n.collection === "import_only") {
        var covered = n.importedFrom ? n.importedFrom + " – " + n.importedThrough : "no import yet";
        return [n.network, "file imports only", covered, "—", n.lastImportAt ? "imported " + n.lastImportAt : "—", numberText(n.transactions)];
      }
      var reason = (n.reasonCode || "—") + (n.nextAttemptAt ? " (resumes " + n.nextAttemptAt + ")" : "");
      return [n.network, n.status, n.completeThrough || "—", reason, n.lastSuccessAt || "—", numberText(n.transactions)];
    }), [0, 0, 0, 0, 0, 1]));
  }

  function eventText(e) {
    var d = e.data || {};
    if (e.type.indexOf("connection.") === 0) {
      return d.network + ": " + d.previousStatus + " → " + d.status + (d.reasonCode ? " (" + d.reasonCode + ")" : "");
    }
    var what = (d.programName || d.network || "") + " " + amount(d.commissionAmount, d.currency) + ", " + d.status;
    if (d.previous) what += " (was " + d.previous.status + ", " + amount(d.previous.commissionAmount, d.previous.currency) + ")";
    return what;
  }
  function renderEvents(target, events) {
    clear(target);
    if (events instanceof ApiError) { target.appendChild(note(events.message)); return; }
    if (!events.length) { target.appendChild(note("No status change, amount change, connection failure or recovery in the last 30 days.")); return; }
    target.appendChild(table("Latest events, newest first", ["When", "Event", "What"], events.map(function (e) {
      return [e.occurredAt, e.type, eventText(e)];
    })));
  }

  // The feed is oldest first: walk it to its end and keep the newest.
  function latestEvents(key) {
    var kept = [];
    function page(cursor, n) {
      return api(key, "events" + query({type: EVENT_TYPES, limit: "100", cursor: cursor})).then(function (body) {
        kept = kept.concat(body.data).slice(-EVENTS_SHOWN);
        if (body.page.hasMore && body.page.nextCursor && n < EVENT_PAGES) return page(body.page.nextCursor, n + 1);
        return kept.reverse();
      });
    }
    return page("", 1);
  }

  // A ranked grouping (by programme, sub-id or directory programme) comes currency by
  // currency, largest first, in pages: read on until every currency's top rows are in,
  // within a bound. `include` asks for the rows' outcomes (and terms).
  function ranked(key, groupBy, include, filters) {
    var rows = [];
    function page(cursor, n) {
      var params = Object.assign({groupBy: groupBy, include: include, limit: "100", cursor: cursor}, filters);
      return api(key, "commissions/summary" + query(params)).then(function (body) {
        rows = rows.concat(body.data);
        var more = !!(body.page && body.page.hasMore && body.page.nextCursor);
        if (more && n < RANKED_PAGES) return page(body.page.nextCursor, n + 1);
        return {data: rows, truncated: more};
      });
    }
    return page("", 1);
  }

  // --- loading ------------------------------------------------------------------------
  function settle(promise) { return promise.catch(function (e) { if (e instanceof ApiError) return e; throw e; }); }

  function load(key) {
    var mine = ++generation;
    var view = readView();
    show(true);
    $("view-from").value = view.from;
    $("view-to").value = view.to;
    $("dash-error").textContent = "";
    $("dash-status").textContent = "Loading…";
    document.documentElement.removeAttribute("data-rendered");
    var filters = {from: view.from, to: view.to, network: view.network};
    var summary = function (groupBy) { return api(key, "commissions/summary" + query(Object.assign({groupBy: groupBy}, filters))); };
    return Promise.all([
      api(key, "me"),
      summary(""),
      summary("status"),
      summary("month,status"),
      settle(ranked(key, "program", "outcomes", filters)),
      settle(ranked(key, "subId", "outcomes", filters)),
      settle(latestEvents(key)),
      settle(ranked(key, "programSlug", "outcomes,terms", filters))
    ]).then(function (answers) {
      if (mine !== generation) return;
      var me = answers[0], totals = answers[1].data;
      fillNetworks(me, view.network);
      var all = currenciesOf(totals.concat(answers[2].data));
      fillCurrencies(all, view.currency);
      var shown = view.currency ? all.filter(function (c) { return c === view.currency; }) : all;
      renderTotals($("totals"), totals, answers[2].data, shown);
      renderMonths($("months"), answers[3].data, shown, view);
      renderTop($("programs"), answers[4], shown, "program");
      renderTop($("subids"), answers[5], shown, "subId");
      renderDirectory($("directory"), answers[7], shown);
      renderConnections($("connections"), me);
      renderEvents($("events"), answers[6]);
      $("dash-status").textContent = "Showing " + view.from + " to " + view.to + (view.network ? ", " + view.network : "") + ".";
      document.documentElement.setAttribute("data-rendered", "true");
      if (performance.mark) performance.mark("dashboard-rendered");
    }).catch(function (e) {
      if (mine !== generation) return;
      $("dash-status").textContent = "";
      if (e instanceof ApiError && e.status === 401) { forget(e.message); return; }
      $("dash-error").textContent = e instanceof ApiError ? e.message : "The API could not be reached.";
    });
  }

  function fillNetworks(me, chosen) {
    var select = $("view-network");
    while (select.options.length > 1) select.remove(1);
    (me.data.networks || []).forEach(function (n) { select.appendChild(el("option", {value: n.network, text: n.network})); });
    select.value = chosen;
  }
  function fillCurrencies(all, chosen) {
    var select = $("view-currency");
    while (select.options.length > 1) select.remove(1);
    all.forEach(function (c) { select.appendChild(el("option", {value: c, text: c})); });
    select.value = all.indexOf(chosen) >= 0 ? chosen : "";
  }

  function show(signedIn) {
    $("key-panel").hidden = signedIn;
    $("dashboard").hidden = !signedIn;
  }
  function forget(message) {
    generation++;
    sessionStorage.removeItem(KEY_SLOT);
    ["totals", "months", "programs", "subids", "directory", "connections", "events"].forEach(function (id) { clear($(id)); });
    $("api-key").value = "";
    $("key-error").textContent = message || "";
    document.documentElement.removeAttribute("data-rendered");
    show(false);
  }

  // --- CSV of what is on screen -------------------------------------------------------
  function csvCell(text) {
    // A cell a spreadsheet would run as a formula is written as text; amounts stay as they are.
    if (/^[=+@\t\r]/.test(text) || /^-[^\d]/.test(text)) text = "'" + text;
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }
  function csvOfScreen() {
    var lines = [];
    document.querySelectorAll("#dashboard table[data-csv]").forEach(function (t) {
      if (lines.length) lines.push("");
      lines.push(csvCell(t.getAttribute("data-csv")));
      t.querySelectorAll("tr").forEach(function (tr) {
        lines.push(Array.prototype.map.call(tr.cells, function (c) { return csvCell(c.textContent); }).join(","));
      });
    });
    return lines.join("\r\n") + "\r\n";
  }
  function downloadCsv() {
    var view = readView();
    var url = URL.createObjectURL(new Blob([csvOfScreen()], {type: "text/csv;charset=utf-8"}));
    var a = el("a", {href: url, download: "commissions-" + view.from + "-" + view.to + ".csv"});
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }

  // --- wiring -------------------------------------------------------------------------
  $("key-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var input = $("api-key"), key = input.value.trim();
    input.value = "";
    $("key-error").textContent = "";
    if (!key) return;
    api(key, "me").then(function () {
      sessionStorage.setItem(KEY_SLOT, key);
      return load(key);
    }).catch(function (e) {
      $("key-error").textContent = e instanceof ApiError ? e.message : "The API could not be reached.";
    });
  });
  $("view-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var from = $("view-from").value, to = $("view-to").value;
    if (from && to && from > to) { $("dash-error").textContent = "The period must start before it ends."; return; }
    writeView({from: from, to: to, network: $("view-network").value, currency: $("view-currency").value});
    var key = sessionStorage.getItem(KEY_SLOT);
    if (key) load(key);
  });
  $("forget-key").addEventListener("click", function () { forget("The key is forgotten."); $("api-key").focus(); });
  $("download-csv").addEventListener("click", downloadCsv);
  window.addEventListener("hashchange", function () {
    var key = sessionStorage.getItem(KEY_SLOT);
    if (key) load(key);
  });
  var saved = sessionStorage.getItem(KEY_SLOT);
  if (saved) load(saved); else show(false);
})();
