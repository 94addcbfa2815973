/* The site's three behaviours: a copy-link button on every section heading of a page, the
 * engine / tag / status filters of the home page's entry table (status: overall or per engine), and
 * pasted log lines made safe for search. No dependencies, no network. */
(function () {
  "use strict";

  /* Search runs lunr in a worker, which reads `word:` as a field name, a leading `-` as "must not
   * contain" and `^ ~ *` as operators. Engine logs are full of them ("These Op Not Support:
   * ONNX::TopK", "failed with -1"), and a query holding one matches the wrong pages or none. The
   * index splits on these characters anyway, so the query loses nothing when they become spaces.
   * Material then makes every word a prefix ("Op" finds "opset", "operand", "ops" in titles, which
   * outweigh the line itself): words of a pasted line are whole words (`~0`: exactly this one), only
   * the last, still being typed, stays a prefix, unless it is a number (a trailing "0" is not "0*").
   * Chinese words are left to Material's segmenter, apart from the Latin ones glued to them.
   * First the noise of a pasted line goes (colours, timestamps, addresses, folders, file names, command
   * options: window.kbNoise, generated from kb/match/noise.py, the rules of kb explain's search link);
   * if nothing is left, the text is searched as typed.
   * An issue reference (MNN#3977, alibaba/MNN#3977, #3977) is its number, weighted as a word of a title: the
   * engine's name is in the title of every page of that engine and would outrank the one citing it. */
  var TITLE_WEIGHT = 1000;  /* material's default boost of the `title` field (the number is in `text`) */
  function plainQuery(text) {
    var quiet = typeof window.kbNoise === "function" ? window.kbNoise(text) : text;
    if (/[^\s:^~*+\-]/.test(quiet)) text = quiet;
    text = text.replace(/(\p{sc=Han})(?=[\x21-\x7E])|([\x21-\x7E])(?=\p{sc=Han})/gu, "$1$2 ");  /* 对数softmax */
    var words = text.replace(/[:^~*]+/g, " ").replace(/(^|\s)[+\-]+/g, "$1").trim().split(/\s+/);
    return words.map(function (w, i) {
      var ref = /^(?:(?:[\w.-]+\/)?([A-Za-z][\w.-]*))?#(\d+)$/.exec(w);
      if (ref) return (ref[1] ? ref[1] + "~0 " : "") + ref[2] + "^" + TITLE_WEIGHT;
      if (!/^[\x21-\x7E]+$/.test(w) || /"/.test(w)) return w;
      return i < words.length - 1 || /^[-+]?[0-9][0-9.,x]*$/.test(w) ? w + "~0" : w;
    }).join(" ");
  }
  /* The pages an engine line in the query names by itself (an entry it is evidence for, else its message
   * page: window.kbLines, generated from kb/match/lines.py, kb explain's rules): the worker
   * (theme/.../kb-search.js) puts them first. Word ranking alone put a generic line on whichever entry
   * repeats its words most. */
  function linePages(text) {
    return typeof window.kbLines === "function" ? window.kbLines(text) : [];
  }
  /* Then the pages that share the query's words, ranked as kb explain ranks a report's prose (window.kbWords,
   * generated from kb/match/words.py: BM25 over each page's title, synonyms, Chinese summary, ...). It
   * knows the words people use for a problem that the page's text may not (a synonym, a Chinese phrase). */
  function wordPages(text) {
    return typeof window.kbWords === "function" ? window.kbWords(text) : [];
  }
  /* The pages of the engines the query names ("ncnn", "MNNConvert"): they go before the other engines' pages. */
  function enginePages(text) {
    return typeof window.kbLines === "function" ? window.kbLines.preferred(text) : [];
  }
  if (window.Worker && !Worker.prototype.__kbPlainQuery) {
    var post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (message) {
      if (message && message.type === 2 && typeof message.data === "string")  /* 2: a search query */
        message = { type: message.type, data: plainQuery(message.data), kbFirst: linePages(message.data),
                    kbWords: wordPages(message.data), kbPrefer: enginePages(message.data) };
      return post.apply(this, [message].concat(Array.prototype.slice.call(arguments, 1)));
    };
    Worker.prototype.__kbPlainQuery = true;
  }

  /* A paste never finds nothing. Material reads the box on a key release only, so text pasted from a menu (a
   * phone's long press, a right click) or dropped in was never searched: any change of the box's text counts as
   * one. And the box holds one line: a multi-line paste (ncnn's 'find_blob_index_by_name data failed' with its
   * 'Try' and 'ex.input("in0", in0);' lines) is cut down to the lines worth searching for (window.kbLines.reduce,
   * from kb/match/lines.py: the lines a known message is on, else the lines that read like an error). */
  var SEARCH_BOX = "input.md-search__input";
  function isSearchBox(el) { return !!(el && el.matches && el.matches(SEARCH_BOX)); }
  document.addEventListener("paste", function (ev) {
    var box = ev.target, text = ev.clipboardData && ev.clipboardData.getData("text/plain");
    if (!isSearchBox(box) || !text || !/\S[^\S\n]*[\r\n]+\s*\S/.test(text)) return;  /* one line: the browser's paste */
    var lines = typeof window.kbLines === "function" && window.kbLines.reduce ? window.kbLines.reduce(text) : [text];
    ev.preventDefault();
    box.setRangeText(lines.join(" ").replace(/\s+/g, " "), box.selectionStart, box.selectionEnd, "end");
    box.dispatchEvent(new Event("input", { bubbles: true }));
  }, true);
  document.addEventListener("input", function (ev) {
    if (isSearchBox(ev.target) && !ev.isComposing)  /* an IME's half-typed word: its commit is a key release */
      ev.target.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true }));
  }, true);

  var ICON = '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path fill="currentColor" ' +
    'd="M10.6 13.4a1 1 0 0 1 0-1.4l3.5-3.5a1 1 0 1 1 1.4 1.4L12 13.4a1 1 0 0 1-1.4 0zM7.8 19.1a3.5 3.5 0 0 1-2.5-6' +
    'l2.8-2.8a1 1 0 0 1 1.4 1.4l-2.8 2.8a1.5 1.5 0 0 0 2.1 2.1l2.8-2.8a1 1 0 1 1 1.4 1.4l-2.8 2.8a3.5 3.5 0 0 1-2.4 1.1z' +
    'M16.2 14.2a1 1 0 0 1-1.4-1.4l2.8-2.8a1.5 1.5 0 0 0-2.1-2.1l-2.8 2.8a1 1 0 1 1-1.4-1.4l2.8-2.8a3.5 3.5 0 0 1 4.9 4.9z"/></svg>';

  /* The address to share: this page and the section, without the search-highlight query. */
  function sectionUrl(id) {
    return window.location.origin + window.location.pathname + "#" + encodeURIComponent(id);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext)
      return navigator.clipboard.writeText(text);
    /* Plain http on a remote host has no async clipboard: fall back to a selected textarea. */
    return new Promise(function (resolve, reject) {
      var ta = document.createElement("textarea");
      ta.value = text;
      ta.setAttribute("readonly", "");
      ta.style.position = "fixed";
      ta.style.opacity = "0";
      document.body.appendChild(ta);
      ta.select();
      var ok = document.execCommand("copy");
      document.body.removeChild(ta);
      if (ok) resolve(); else reject(new Error("copy refused"));
    });
  }

  function addCopyButtons() {
    var headings = document.querySelectorAll(".md-content article h2[id], .md-content article h3[id]");
    Array.prototype.forEach.call(headings, function (h) {
      if (h.querySelector(".kb-copy-link")) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "kb-copy-link";
      button.setAttribute("data-anchor", h.id);
      button.title = "Copy link to this section";
      button.setAttribute("aria-label", "Copy link to section: " + h.textContent.trim());
      button.innerHTML = ICON;
      button.addEventListener("click", function () {
        var url = sectionUrl(h.id);
        copyText(url).then(function () {
          button.setAttribute("data-copied", url);
          button.classList.add("kb-copied");
          setTimeout(function () { button.classList.remove("kb-copied"); }, 1500);
        }, function () {
          window.prompt("Copy this link:", url);
        });
      });
      h.appendChild(button);
    });
  }

  function setupFilters() {
    var table = document.querySelector(".kb-entries table");
    if (!table) return;
    var selects = Array.prototype.slice.call(document.querySelectorAll(".kb-filters select[data-filter]"));
    var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr"));
    var count = document.getElementById("kb-filter-count");

    function set(name, value) {
      selects.forEach(function (s) {
        if (s.getAttribute("data-filter") !== name) return;
        var known = Array.prototype.some.call(s.options, function (o) { return o.value === value; });
        s.value = known ? value : "";
      });
    }

    /* A row has a status overall and one per engine: with an engine chosen, that engine's counts
     * (else the entry's); without one, the entry's or any engine's. */
    function hasStatus(tr, status, engine) {
      var per = JSON.parse(tr.getAttribute("data-engine-statuses") || "{}");
      if (engine && Object.prototype.hasOwnProperty.call(per, engine)) return per[engine] === status;
      if (tr.getAttribute("data-status") === status) return true;
      if (engine) return false;
      return Object.keys(per).some(function (e) { return per[e] === status; });
    }

    function apply() {
      var want = {};
      selects.forEach(function (s) { want[s.getAttribute("data-filter")] = s.value; });
      var shown = 0;
      rows.forEach(function (tr) {
        var engines = JSON.parse(tr.getAttribute("data-engines"));
        var tags = JSON.parse(tr.getAttribute("data-tags"));
        var ok = (!want.engine || engines.indexOf(want.engine) >= 0) &&
                 (!want.tag || tags.indexOf(want.tag) >= 0) &&
                 (!want.status || hasStatus(tr, want.status, want.engine)) &&
                 (!want.workaround || tr.getAttribute("data-workaround") === want.workaround);
        tr.hidden = !ok;
        if (ok) shown++;
      });
      if (count) count.textContent = shown + " of " + rows.length + " entries";
      /* Keep the filter in the address, so a filtered list can be shared. */
      var params = new URLSearchParams();
      Object.keys(want).forEach(function (k) { if (want[k]) params.set(k, want[k]); });
      var query = params.toString();
      window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : ""));
    }

    var params = new URLSearchParams(window.location.search);
    selects.forEach(function (s) {
      var name = s.getAttribute("data-filter");
      if (params.has(name)) set(name, params.get(name));
      s.addEventListener("change", apply);
    });
    /* A chip in the table filters in place instead of reloading the page. */
    table.addEventListener("click", function (ev) {
      var chip = ev.target.closest ? ev.target.closest("a.kb-chip") : null;
      if (!chip) return;
      var p = new URL(chip.href).searchParams;
      p.forEach(function (value, name) { set(name, value); });
      apply();
      ev.preventDefault();
    });
    apply();
  }

  function init() {
    addCopyButtons();
    setupFilters();
  }

  /* Material re-renders the page on instant navigation and announces it on document$. */
  if (window.document$ && typeof window.document$.subscribe === "function")
    window.document$.subscribe(init);
  else if (document.readyState === "loading")
    document.addEventListener("DOMContentLoaded", init);
  else
    init();
})();
