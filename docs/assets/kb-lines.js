/* The pages a pasted engine line names by itself: kb/match/lines.py's rules in the browser; data in kb-data.js. */
window.kbLines = (function (data) {
  var native = {}; data.native.forEach(function (n) { native[n] = true; });
  var rules = data.rules.map(function (r, i) {
    return { page: r.page, entry: r.kind === "entry", rx: new RegExp(r.source, r.flags), evidence: r.evidence,
             weight: r.weight, late: r.late ? 1 : 0, index: i };
  });
  var causes = {};
  Object.keys(data.causes).forEach(function (p) {
    causes[p] = data.causes[p].map(function (c) { return { page: c.page, rx: new RegExp(c.source, c.flags) }; });
  });
  var claims = data.claims.map(function (c) { return { page: c.page, rx: new RegExp(c.source, c.flags + "g") }; });
  function overlaps(rx, text, m) {
    rx.lastIndex = 0;
    for (var c; (c = rx.exec(text)); rx.lastIndex = c.index + Math.max(c[0].length, 1)) {
      if (c.index < m.index + m[0].length && m.index < c.index + c[0].length) return true;
    }
    return false;
  }
  var layer = /layer (\S+) not exists or registered/i, issue = new RegExp(data.issue, "g");
  function issuePages(text) {  /* the pages citing an issue the text names (lines.py issue_keys, Table.refs) */
    var out = [], m;
    issue.lastIndex = 0;
    while ((m = issue.exec(text))) {
      if (!m[1] && !m[3] && m[0] !== text.trim()) continue;  /* a bare #1 in a paste is a backtrace's frame */
      (data.refs[((m[1] || m[3] || "").toLowerCase()) + "#" + (m[2] || m[4])] || []).forEach(function (p) {
        if (out.indexOf(p) < 0) out.push(p);
      });
    }
    return out;
  }
  function kbLines(text) {
    var hits = [];
    rules.forEach(function (r) {
      var m = r.rx.exec(text);
      if (!m) return;
      if (r.entry) {
        var l = layer.exec(m[0]);
        if (l && native[l[1]]) return;
        if (r.evidence && claims.some(function (c) { return c.page !== r.page && overlaps(c.rx, text, m); })) return;
      } else {
        var rest = text.slice(0, m.index) + "\n" + text.slice(m.index + m[0].length);
        (causes[r.page] || []).forEach(function (c) {
          if (c.rx.test(rest)) hits.push({ page: c.page, entry: false, late: r.late, at: m.index, weight: r.weight, index: r.index, sub: 0 });
        });
      }
      hits.push({ page: r.page, entry: r.entry, late: r.late, at: r.entry ? 0 : m.index, weight: r.weight, index: r.index, sub: 1 });
    });
    hits.sort(function (a, b) {
      return (b.entry - a.entry) || (a.late - b.late) || (a.at - b.at) || (b.weight - a.weight) || (a.index - b.index) || (a.sub - b.sub);
    });
    var out = issuePages(text);
    hits.forEach(function (r) { if (out.indexOf(r.page) < 0) out.push(r.page); });
    return out;
  };
  kbLines.preferred = function (text) {
    text = text.replace(new RegExp(data.ref, "g"), " ");  /* an issue reference names a tracker (named_engines) */
    var named = Object.keys(data.engineWords).filter(function (e) {
      return new RegExp(data.engineWords[e], "i").test(text);
    });
    return Object.keys(data.engines).filter(function (p) {
      return data.engines[p].some(function (e) { return named.indexOf(e) >= 0; });
    });
  };
  var errorish = new RegExp(data.errorish, "i");
  kbLines.reduce = function (text) {
    var lines = [], m, keep = {}, any = false, re = /[^\r\n]+/g;
    while ((m = re.exec(text))) lines.push([m.index, m.index + m[0].length]);
    rules.forEach(function (r) {
      var h = r.rx.exec(text);
      if (!h) return;
      var end = Math.max(h.index + h[0].length, h.index + 1);
      lines.forEach(function (l, i) { if (l[0] < end && h.index < l[1]) { keep[i] = any = true; } });
    });
    if (!any) lines.forEach(function (l, i) { if (errorish.test(text.slice(l[0], l[1]))) keep[i] = any = true; });
    return lines.filter(function (l, i) { return !any || keep[i]; })
      .map(function (l) { return text.slice(l[0], l[1]).trim(); }).filter(Boolean);
  };
  return kbLines;
})(window.kbData.lines);
