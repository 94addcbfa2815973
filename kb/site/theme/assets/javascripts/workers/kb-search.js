/* Material's search worker with fixes in lunr, which it bundles, and in how material reads lunr's results:
 * the page (kb/site/theme/main.html) starts this script instead of material's, named in `?worker=`, and this one loads it from the same
 * folder (so its own `../lunr/` language files still resolve).
 *
 * 1. (lunr.js#314, "Cannot read properties of undefined (reading '_index')"): lunr stores the
 * index's words as a minimised automaton and merges two nodes when their keys are equal. A key is
 * the node's edges written as label + target id with nothing between them, so digits are ambiguous:
 * edges {1 -> node 5, 7 -> node 89} and {1 -> node 5789} both read "015789". Numbers fill this index
 * (versions, shapes, dates), so such a merge happens, the automaton then holds words the index lacks,
 * and a prefix query that reaches one ("m*" for a query ending in "m") throws; material catches that
 * and shows "No matching documents". A key with a separator after each id cannot be ambiguous. */
(function () {
  "use strict";
  var name = new URLSearchParams(self.location.search).get("worker") || "";
  if (!/^search\.[0-9a-f]+\.min\.js$/.test(name))
    throw new Error("kb-search.js: start it as kb-search.js?worker=search.<hash>.min.js, not " + name);

  /* 3. A query carries `kbFirst` (docs/assets/kb.js): the pages its engine line names by itself. Their
   * results go first, in that order, and a page lunr did not find is added (a line's words may all be
   * stop words or numbers). Material's worker answers a query (type 2) with its results (type 3)
   * before it reads the next message, so the last query's pages are the ones to apply. This listener
   * is added before material's, so it sees each message first. */
  var pages = {}, first = [], prefer = [];
  addEventListener("message", function (ev) {
    var m = ev.data || {};
    if (m.type === 0 && m.data && Array.isArray(m.data.docs))  /* 0: the index is set up */
      m.data.docs.forEach(function (d) { if (d.location.indexOf("#") < 0) pages[d.location] = d; });
    if (m.type === 2) {
      /* then the pages its words rank first (kb explain's BM25) */
      first = (Array.isArray(m.kbFirst) ? m.kbFirst : []).concat(Array.isArray(m.kbWords) ? m.kbWords : []);
      prefer = Array.isArray(m.kbPrefer) ? m.kbPrefer : [];  /* the named engines' pages: before the others */
    }
  });
  var post = self.postMessage;
  self.postMessage = function (message) {
    if (message && message.type === 3 && message.data && Array.isArray(message.data.items) &&
        (first.length || prefer.length)) {
      var items = message.data.items, head = [];
      if (prefer.length) {
        var named = items.filter(function (group) { return group[0] && prefer.indexOf(group[0].location.split("#")[0]) >= 0; });
        items = named.concat(items.filter(function (group) { return named.indexOf(group) < 0; }));
      }
      first.forEach(function (loc, n) {
        if (first.indexOf(loc) < n) return;  /* named by the line and by the words: once, at its first place */
        var i = items.findIndex(function (group) { return group[0] && group[0].location.split("#")[0] === loc; });
        if (i >= 0) head.push(items.splice(i, 1)[0]);
        else if (pages[loc]) head.push([Object.assign({}, pages[loc], { score: 0, terms: {} })]);
      });
      message = { type: 3, data: Object.assign({}, message.data, { items: head.concat(items) }) };
    }
    return post.apply(self, [message].concat(Array.prototype.slice.call(arguments, 1)));
  };

  importScripts(name);
  var TokenSet = self.lunr && self.lunr.TokenSet;
  if (!TokenSet || typeof TokenSet.prototype.toString !== "function")
    throw new Error("kb-search.js: " + name + " holds no lunr.TokenSet to correct");

  TokenSet.prototype.toString = function () {
    if (this._str) return this._str;  /* lunr caches a minimised node's key here */
    var labels = Object.keys(this.edges).sort(), key = this.final ? "1" : "0";
    for (var i = 0; i < labels.length; i++)
      key += labels[i] + this.edges[labels[i]].id + ",";
    return key;
  };

  /* 6.'s number of other pages (result groups) shown as they would be without it; `&top=0` in the worker's address
   * turns 6. off (tests/test_site_browser.py compares the two). */
  var TOP = Number(new URLSearchParams(self.location.search).get("top") || 30);

  /* 2. (lunr.js#256) The index holds stems ("transform" for transformer), but lunr passes a prefix
   * query ("transformer*": material makes the word being typed one) by the stemmer, so a one-word query
   * whose stem differs found nothing. With the stemmer in the pipeline, a prefix is stemmed as its word.
   * 4. The pages' words were trimmed of the quotes and marks around them ('Unknown -> unknown) and the
   * query's were not (lunr's search pipeline is the stemmer alone): a pasted 'Unknown data type 0' found no
   * "unknown". A query word is trimmed as the pages' were; one that is only marks (a lone ') goes.
   * 5. Material shows a result's query words that it did not find as "Missing: ~~word~~", testing whether
   * a word found in the page (a stem: "regist", "exist", "normal") starts with the word as typed
   * ("registered", "exists", "normalization"): every word whose stem differs was "missing" from a page whose
   * title says it (and counted so in material's boost). A word the page holds, trimmed and stemmed, is entered
   * in the result's match data as found (with no positions, so nothing more is highlighted). */
  var EDGES = /^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu;
  var lunr = self.lunr, query = lunr.Index.prototype.query;
  lunr.Index.prototype.query = function (fn) {
    var pipeline = this.pipeline, words = [];
    if (pipeline._stack.indexOf(lunr.stemmer) < 0) return query.call(this, fn);
    var results = query.call(this, function (q) {
      fn.call(q, q);
      q.clauses = q.clauses.filter(function (c) {
        var typed = c.term.replace(/^\*|\*$/g, "");  /* the word as material's own parse of the query has it */
        var prefix = /^[^*]+\*$/.test(c.term), word = typed.replace(EDGES, "");
        words.push({ typed: typed, stems: word ? pipeline.runString(word).filter(Boolean) : [] });
        if (!word) return false;
        if (/^\*/.test(c.term)) return true;
        c.term = word + (prefix ? "*" : "");
        if (c.usePipeline || !prefix) return true;
        var stem = pipeline.runString(word)[0];
        if (stem && stem !== word) c.term = stem + "*";
        return true;
      });
    });
    /* 6. A pasted log line shares a word with most of the 5,600 sections ("not", "layer"), and material then
     * highlights, groups and posts every one of them: most of a query's time in the worker. Material ranks a
     * result at lunr's score times 1 to 5 (a page, the query's words it holds) and shows a page's results as one
     * group; 3. then puts the pages the query names (first, prefer) ahead, whatever their score: all of their
     * results stay. Of the others, where the first TOP pages in lunr's order start at score s, a page whose every
     * result scores under s / 5 ranks below all of them: it goes. The pages that stay keep every result, so all
     * groups are shown as before, down to the TOP-th other page (only the count of matching pages is smaller). */
    var named = {}, shown = {}, n = 0, floor = 0;
    first.concat(prefer).forEach(function (loc) { named[loc] = true; });
    for (var i = 0; i < results.length && n < TOP; i++) {
      var page = results[i].ref.split("#")[0];
      if (!shown[page] && !named[page]) { n++; floor = results[i].score / 5; }
      shown[page] = true;
    }
    if (TOP && n === TOP) {
      results.forEach(function (r) { if (r.score >= floor) shown[r.ref.split("#")[0]] = true; });
      results = results.filter(function (r) { var page = r.ref.split("#")[0]; return shown[page] || named[page]; });
    }
    /* 5. on the results that stay (6. reads lunr's scores alone) */
    results.forEach(function (r) {
      var metadata = r.matchData.metadata, found = Object.keys(metadata);
      words.forEach(function (w) {
        if (!w.typed || found.some(function (k) { return k.indexOf(w.typed) === 0; })) return;  /* material sees it */
        if (!w.stems.length || found.some(function (k) { return w.stems.some(function (s) { return k.indexOf(s) === 0; }); }))
          metadata[w.typed] = {};
      });
    });
    return results;
  };
})();
