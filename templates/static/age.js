// A programme page: how long ago its terms were verified, counted to the reader's today. The
// page is built once and read for months, so the build cannot write this count; without
// JavaScript the page shows the date alone.
"use strict";
(function () {
  const DAY = 86400000;
  for (const date of document.querySelectorAll("time.verified-on")) {
    const then = Date.parse(date.dateTime.slice(0, 10) + "T00:00:00Z");
    const age = date.parentElement.querySelector(".verified-age");
    if (Number.isNaN(then) || !age) continue;
    const now = new Date();
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const days = Math.max(0, Math.round((today - then) / DAY));
    age.textContent = days === 0 ? " (today)" : days === 1 ? " (1 day ago)" : ` (${days} days ago)`;
  }
})();
