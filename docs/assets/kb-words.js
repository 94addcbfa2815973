/* kb explain's BM25 over the pages' words (kb/match/words.py) in the browser; data in kb-data.js. */
window.kbWords = (function (data) {
  var stop = {}; data.stop.forEach(function (w) { stop[w] = true; });
  var names = {}; data.names.forEach(function (w) { names[w] = true; });
  var cjk = new RegExp(data.cjk, "g");
  function spellings(w) {
    if (/^[0-9]/.test(w)) return [w.replace(/-/g, "")];
    var out = [w], dot = w.lastIndexOf(".");
    if (dot >= 0) out.push(w.slice(dot + 1));
    var last = out[out.length - 1];
    if (last.indexOf("_") >= 0) out.push(last.replace(/_/g, ""));
    return out;
  }
  function nest(terms) {
    var groups = [];
    terms.filter(function (t, i) { return terms.indexOf(t) === i; })
      .sort(function (a, b) { return (b.length - a.length) || (a < b ? -1 : a > b ? 1 : 0); })
      .forEach(function (t) {
        var head = groups.find(function (g) { return g[0].indexOf(t) >= 0; });
        if (head) head.push(t); else groups.push([t]);
      });
    return groups;
  }
  var has = function (o, k) { return Object.prototype.hasOwnProperty.call(o, k); };
  var typo = new RegExp("^(?:" + data.typo + ")$");
  var vocabulary = Object.keys(data.weights).filter(function (t) {
    return t.length >= data.typoMin - 1 && typo.test(t);
  }).sort();
  function oneEdit(a, b) {
    if (a === b || Math.abs(a.length - b.length) > 1) return false;
    var i = 0, n = Math.min(a.length, b.length);
    while (i < n && a[i] === b[i]) i++;
    if (a.length === b.length)
      return a.slice(i + 1) === b.slice(i + 1) || (a.slice(i + 2) === b.slice(i + 2) && a[i] === b[i + 1] && a[i + 1] === b[i]);
    if (a.length > b.length) { var t = a; a = b; b = t; }
    return a.slice(i) === b.slice(i + 1);
  }
  function corrected(groups) {
    var seen = {};
    groups.forEach(function (g) { g.forEach(function (w) { seen[w] = true; }); });
    return groups.map(function (g) {
      var extra = [];
      g.forEach(function (w) {
        if (w.length < data.typoMin || has(data.weights, w) || !typo.test(w)) return;
        vocabulary.forEach(function (c) { if (!seen[c] && oneEdit(w, c)) { seen[c] = true; extra.push(c); } });
      });
      return g.concat(extra);
    });
  }
  function query(text) {
    var low = text.toLowerCase().replace(new RegExp(data.ref, "g"), " "), seen = {};
    var groups = (low.replace(cjk, " ").match(new RegExp(data.word, "g")) || []).map(function (w) {
      return spellings(w.replace(/^\.+|\.+$/g, ""));
    });
    var call = new RegExp(data.call, "g"), m, latin = low.replace(cjk, " ");
    while ((m = call.exec(latin))) groups.push([m[1] + "(" + m[2].replace(/\s+/g, "") + ")"]);
    var runs = low.match(cjk) || [];
    groups = groups.concat(nest(data.chinese.filter(function (t) {
      return runs.some(function (r) { return r.indexOf(t) >= 0; });
    })));
    var heads = {};
    groups.forEach(function (g) { if (g.length) heads[g[0]] = true; });
    function keep(w) { return w && !seen[w] && !stop[w] && !/^[0-9]+$/.test(w); }
    var out = [];
    groups.forEach(function (g) {
      if (!g.length || !keep(g[0])) return;
      g = [g[0]].concat(g.slice(1).filter(function (w, i) {
        return g.indexOf(w, 1) === i + 1 && w !== g[0] && !heads[w] && keep(w);
      }));
      g.forEach(function (w) { seen[w] = true; });
      out.push(g);
    });
    return out;
  }
  return function (text) {
    var scores = {};
    var named = Object.keys(data.engineWords).filter(function (e) {
      return new RegExp(data.engineWords[e], "i").test(text);
    });
    function other(i) {
      return data.engines[i].some(function (e) { return named.indexOf(e) >= 0; }) ? 0 : 1;
    }
    corrected(query(text)).forEach(function (g) {
      var best = {};
      g.forEach(function (t, j) {
        var k = (names[t] ? 2 : 1) * (j === 0 ? 1 : data.part);
        (Object.prototype.hasOwnProperty.call(data.weights, t) ? data.weights[t] : []).forEach(function (p) {
          if (k * p[1] > (best[p[0]] || 0)) best[p[0]] = k * p[1];
        });
      });
      Object.keys(best).forEach(function (i) { scores[i] = (scores[i] || 0) + best[i]; });
    });
    return Object.keys(scores).map(Number).filter(function (i) { return scores[i] > 0; })
      .sort(function (a, b) { return (other(a) - other(b)) || (scores[b] - scores[a]) || (a - b); })
      .map(function (i) { return data.pages[i]; });
  };
})(window.kbData.words);
