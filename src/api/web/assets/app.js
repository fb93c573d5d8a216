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
  // Enter was pressed before the answer came: open its top card when it does.
  let openTop = false;
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
        if (openTop) {
          openTop = false;
          const top = cardLinks(results)[0];
          if (top) top.click();
        }
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
  keysThroughResults(form, results, () => {
    // Enter in the box opens the top result of the search typed, once it is answered.
    const params = new URLSearchParams(new FormData(form));
    const busy = results.getAttribute("aria-busy") === "true";
    if (busy && params.toString() === shown) {
      openTop = true;
      return false;
    }
    if (!form.dataset.pending && params.toString() === shown) return true;
    openTop = true;
    clearTimeout(timer);
    run();
    return false;
  });
}

// The links the arrow keys step through: one per note card on view.
function cardLinks(results) {
  return Array.from(results.querySelectorAll("li.note-card a.note-title")).filter(
    (a) => a.offsetParent !== null,
  );
}

// ArrowDown from the search box to the first card, ArrowDown/ArrowUp from card to card (Up
// from the first returns to the box), Enter in the box opens the top card. `answered` says
// whether the cards on view answer what is typed (if not, it sends the search and the top
// card opens when it arrives).
function keysThroughResults(form, results, answered) {
  const q = document.getElementById("q");
  q.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown") {
      const first = cardLinks(results)[0];
      if (first) {
        e.preventDefault();
        first.focus();
      }
    } else if (e.key === "Enter" && !e.isComposing) {
      e.preventDefault();
      if (answered()) {
        const top = cardLinks(results)[0];
        if (top) top.click();
      }
    }
  });
  results.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    const card = e.target.closest && e.target.closest("li.note-card");
    if (!card) return;
    const links = cardLinks(results);
    const at = links.indexOf(card.querySelector("a.note-title"));
    if (at < 0) return;
    e.preventDefault();
    const next = at + (e.key === "ArrowDown" ? 1 : -1);
    if (next < 0) q.focus();
    else if (next < links.length) links[next].focus();
  });
}

// "/" jumps to the search box from any page, as on many sites: on a page without one it opens
// the search page (whose box takes the focus).
function slashToSearch() {
  if (!document.querySelector("header.top nav")) return;
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    const typing =
      t instanceof HTMLInputElement ||
      t instanceof HTMLTextAreaElement ||
      t instanceof HTMLSelectElement ||
      (t instanceof HTMLElement && t.isContentEditable);
    if (typing) return;
    e.preventDefault();
    const q = document.getElementById("q");
    if (q) q.focus();
    else window.location.href = "/ui/";
  });
}

// The editor: focus in the text, Ctrl/Cmd+S saves, Esc cancels, and unsaved text is never
// left behind without a warning (the conflict view's text is unsaved from the start).
function editor() {
  const form = document.querySelector('form.editor[action="/ui/edit"]');
  const text = document.getElementById("text");
  if (!form || !text) return;
  let leaving = false;
  const unsaved = () =>
    !leaving && (form.dataset.unsaved === "1" || text.value !== text.defaultValue);
  if (form.dataset.unsaved !== "1") {
    // At the end of the text: what is typed first is usually added, not put before the heading.
    text.focus();
    text.setSelectionRange(text.value.length, text.value.length);
  }
  form.addEventListener("submit", () => {
    leaving = true;
  });
  window.addEventListener("beforeunload", (e) => {
    if (!unsaved()) return;
    e.preventDefault();
    e.returnValue = "";
  });
  const field = (name) => form.querySelector(`input[name="${name}"]`).value;
  const note =
    "/ui/note?vault=" + encodeURIComponent(field("vault")) + "&path=" + encodeURIComponent(field("path"));
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
      e.preventDefault();
      // After a conflict Ctrl+S is "keep mine", which still asks before deleting their lines.
      const button = document.getElementById("save") || document.getElementById("keep-mine");
      form.requestSubmit(button);
    } else if (e.key === "Escape") {
      e.preventDefault();
      if (unsaved() && !window.confirm("Leave the editor? Your unsaved text will be lost.")) return;
      leaving = true;
      window.location.href = note;
    }
  });
}

// A note opened from a result: the query's words marked, and the page at the passage's
// section (the server names its heading's id in `data-land`).
function landing() {
  const note = document.querySelector("article.note");
  const body = document.getElementById("note-body");
  if (!note || !body) return;
  // The server lists the note's words that the query matches by the search index's own
  // analyzer (stemmed: "servicing" for "service"), so marks are where the search found words.
  const words = (note.dataset.marks || "").split(" ").filter(Boolean);
  if (words.length) markWords(body, words);
  const id = note.dataset.land;
  const target = id && document.getElementById(id);
  if (!target) return;
  history.replaceState(null, "", location.pathname + location.search + "#" + id);
  target.scrollIntoView({ block: "start" });
}

// Marks each of `words` (whole words, any case) in the note's text.
function markWords(body, words) {
  const alts = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp("(?<![\\p{L}\\p{N}])(?:" + alts.join("|") + ")(?![\\p{L}\\p{N}])", "giu");
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  for (const n of nodes) {
    const s = n.nodeValue;
    if (n.parentElement.closest("math, svg, mark")) continue;
    const found = Array.from(s.matchAll(re));
    if (!found.length) continue;
    const out = document.createDocumentFragment();
    let at = 0;
    for (const m of found) {
      out.append(s.slice(at, m.index));
      const mark = document.createElement("mark");
      mark.className = "query";
      mark.textContent = m[0];
      out.append(mark);
      at = m.index + m[0].length;
    }
    out.append(s.slice(at));
    n.replaceWith(out);
  }
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
  slashToSearch();
  editor();
  landing();
  keepPlaceOnBack();
  copyButtons();
  progressPoll();
});
