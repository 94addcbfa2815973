/* The search box's reading of pasted noise: kb explain's rules (kb/match/noise.py), whose data kb-data.js holds. */
window.kbNoise = (function (rules) {
  rules = rules.map(function (r) { return [new RegExp(r.source, r.flags), r.replace]; });
  return function (text) {
    rules.forEach(function (r) { text = text.replace(r[0], r[1]); });
    return text.split(/\s+/).filter(Boolean).join(" ");
  };
})(window.kbData.noise);
