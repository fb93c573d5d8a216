// mdvault's web page: search as you type, copy buttons, and the index build's progress.
// Loaded from /ui/static/app.js (the Content-Security-Policy allows no inline script).
// Everything here is an enhancement: every form also works as a plain form without it.
"use strict";

// How long typing must pause before a search is sent: fast enough to feel live, slow
// enough that a word typed at speed is one search, not one per letter.
const SEARCH_DEBOUNCE_MS = 250;
// How often the health page asks for the build's progress while a build runs.
const PROGRESS_POLL_MS = 2000;

function searchAsYouType() {
  const form = document.getElementById("search-form");
  const results = document.getElementById("results");
  if (!form || !results) return;
  let timer = null;
  let sent = 0;
  // The search the results on screen answer (the page may arrive with them). The same search
  // is never sent twice: leaving the box fires "change", and a second answer redrawn over the
  // first would close what the reader just opened.
  let shown = new URLSearchParams(new FormData(form)).toString();
  const run = () => {
    // No search waits any more: the mark says so (the browser test reads it, so it can tell
    // "nothing was set off" at once instead of waiting to see nothing happen).
    delete form.dataset.pending;
    const params = new URLSearchParams(new FormData(form));
    if (params.toString() === shown) return;
    shown = params.toString();
    if (!params.get("q").trim()) {
      results.replaceChildren();
      return;
    }
    params.set("fragment", "1");
    const mine = ++sent;
    results.setAttribute("aria-busy", "true");
    fetch("/ui/search?" + params.toString(), { credentials: "same-origin" })
      .then((r) => {
        if (r.redirected || r.status === 401) {
          window.location.href = "/ui/login";
          return null;
        }
        return r.text();
      })
      .then((html) => {
        // An answer to an older query that arrives late is dropped.
        if (html === null || mine !== sent) return;
        // The fragment is the server's own escaped HTML, rendered by maud.
        results.innerHTML = html;
        results.setAttribute("aria-busy", "false");
        params.delete("fragment");
        history.replaceState(null, "", "/ui/search?" + params.toString());
      })
      .catch(() => results.setAttribute("aria-busy", "false"));
  };
  const later = () => {
    clearTimeout(timer);
    form.dataset.pending = "1";
    timer = setTimeout(run, SEARCH_DEBOUNCE_MS);
  };
  form.addEventListener("input", later);
  // A picked vault is a new search; a text box's "change" (it fires on leaving it) is not.
  form.addEventListener("change", (e) => {
    if (e.target instanceof HTMLSelectElement) later();
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    clearTimeout(timer);
    run();
  });
  // "/" jumps to the search box from anywhere on the page, as on many sites.
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.key === "/" && !(t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement)) {
      e.preventDefault();
      document.getElementById("q").focus();
    }
  });
}

// Back to the results returns to the same place: the scroll position and the link that was
// followed, kept for this tab only.
function keepPlaceOnBack() {
  const results = document.getElementById("results");
  if (!results) return;
  const key = "mdvault-place";
  results.addEventListener("click", (e) => {
    const a = e.target.closest("a");
    if (!a) return;
    const links = Array.from(results.querySelectorAll("a"));
    const place = { url: location.href, y: window.scrollY, link: links.indexOf(a) };
    sessionStorage.setItem(key, JSON.stringify(place));
  });
  const restore = () => {
    let place = null;
    try {
      place = JSON.parse(sessionStorage.getItem(key) || "null");
    } catch (_) {
      return;
    }
    if (!place || place.url !== location.href) return;
    const link = results.querySelectorAll("a")[place.link];
    window.scrollTo(0, place.y);
    if (link) link.focus({ preventScroll: true });
  };
  restore();
  // A page kept whole by the browser (back-forward cache) is shown again without loading.
  window.addEventListener("pageshow", (e) => {
    if (e.persisted) restore();
  });
}

function copyButtons() {
  document.addEventListener("click", (e) => {
    const b = e.target.closest("button.copy");
    if (!b) return;
    const text = b.getAttribute("data-copy");
    const done = () => {
      b.classList.add("copied");
      setTimeout(() => b.classList.remove("copied"), 1200);
    };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, done);
  });
}

function progressPoll() {
  const box = document.getElementById("progress");
  if (!box || box.getAttribute("data-building") !== "true") return;
  setTimeout(() => {
    fetch("/ui/health/progress", { credentials: "same-origin" })
      .then((r) => r.text())
      .then((html) => {
        box.outerHTML = html;
        progressPoll();
      })
      .catch(() => {});
  }, PROGRESS_POLL_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  searchAsYouType();
  keepPlaceOnBack();
  copyButtons();
  progressPoll();
});
