"""A report's words against the entries' words: BM25 (rank_bm25) over jieba tokens, for prose that holds
no engine line ("onnx2ncnn 转出来全是 nan", "three-layer LSTM fails to convert").

An entry's document is what a user might say of it: its title, synonyms, Chinese summary, tags, the
op names of its trigger and its signatures' summaries. Prose alone never names an entry with
confidence: `kb explain` reports these as `possible`, with the words that matched.
"""

from __future__ import annotations

import functools
import json
import re

from convkb.engines import NAMES
from convkb.entries import Entry

_CJK = re.compile(r"[\u3400-\u9fff]+")
_WORD = re.compile(r"[a-z][a-z0-9_.+-]*[a-z0-9]|[a-z]|\d+d\b")
# Words every report and every entry has: they tell nothing apart.
STOP = frozenset("""a an and are as at be but by can for from has have i in is it its my of on or the this to
was were when with model models convert converted converting conversion error errors issue problem use using
what why how does do not no after before then fails failed fail works work output outputs result results
that so still cannot can't well uses used comes come ran run runs any there them they me
的 了 是 在 我 用 后 时 会 就 都 和 也 有 问题 模型 转换 转 报错 出现 一个 怎么 为什么 请问 不
这个 这些 那个 什么 原因 或者 需要 可以 还是 但是 然后 时候 一下 一样 没有 不能 能够 支持 提示 打印 说明
成功 失败 结果 输出 输入 导出 过程 之后 以后 直接 还有 已经 里面 时报""".split())


@functools.cache
def _jieba():
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


TAUGHT_FREQ = 20_000  # more than most words jieba knows (错误 6,379, 模型 2,890): a taught word is cut whole


def teach_segmenter(entries: list[Entry]) -> None:
    """Give jieba the entries' Chinese synonyms (反卷积, 段错误), so that a page's text and a report are cut
    into those words and not into pieces of them: the site's index (mkdocs-material's search cuts with jieba
    too) and the BM25 documents here, whichever process builds them."""
    try:
        jieba = _jieba()
    except ImportError:
        return
    for e in entries:
        for phrase in e.meta.synonyms:
            for word in phrase.split():
                # A fixed frequency, once: jieba's suggestion depends on what was added before, and every add
                # grows its total (so all its odds); the site build and kb explain must cut alike.
                if _CJK.search(word) and jieba.get_FREQ(word) != TAUGHT_FREQ:
                    jieba.add_word(word, freq=TAUGHT_FREQ)


@functools.cache
def _stop(word: str) -> bool:
    """A stop word, or Chinese made only of stop words (转换失败 is 转换 + 失败: it tells nothing apart either)."""
    if word in STOP:
        return True
    return bool(_CJK.fullmatch(word)) and any(word[:i] in STOP and _stop(word[i:]) for i in range(1, len(word)))


def tokens(text: str) -> list[str]:
    """Lowercased English words and jieba's Chinese words, without stop words."""
    low = text.lower()
    out = [w.strip(".") for w in _WORD.findall(_CJK.sub(" ", low))]
    for run in _CJK.findall(low):
        # One-character words are mostly particles (把, 被, 里, 对): they match every entry's Chinese text alike.
        out += [w for w in _jieba().lcut_for_search(run) if len(w) > 1]
    return [w for w in out if w and not _stop(w) and not w.isdigit()]


def document(e: Entry) -> list[str]:
    m = e.meta
    parts = [m.title, m.title, *m.synonyms, *m.synonyms, *m.tags, *m.engines, *m.components, m.symptom.replace("-", " ")]
    if m.zh:
        parts += [m.zh.title, m.zh.title, m.zh.symptom, m.zh.cause, m.zh.workaround]
    for p in m.trigger:
        parts += [p.summary, *(str(n.op) for n in p.nodes.values() if getattr(n, "op", None))]
    parts += [s.summary for s in m.signatures]
    parts += [u.note for u in m.upstream]
    return tokens(" ".join(parts))


def names(e: Entry) -> list[str]:
    """The op and API names an entry's document holds: its trigger's ops and its code-like synonyms."""
    m = e.meta
    ops = [str(n.op) for p in m.trigger for n in p.nodes.values() if getattr(n, "op", None)]
    code = [s for s in m.synonyms if re.fullmatch(r"[A-Za-z_][\w.]*", s) and (s != s.lower() or "." in s or "_" in s)]
    return tokens(" ".join(ops + code))


class Index:
    """BM25 over the entries' documents."""

    def __init__(self, entries: list[Entry]):
        from rank_bm25 import BM25Okapi

        teach_segmenter(entries)
        self.entries = entries
        self.docs = [document(e) for e in entries]
        self.bm25 = BM25Okapi(self.docs)
        self.names = frozenset(w for e in entries for w in names(e))

    def rank(self, text: str) -> list[tuple[Entry, float, list[str]]]:
        """Entries by score, best first, with the query words each one shares (those with a score only)."""
        query = list(dict.fromkeys(tokens(text)))
        if not query:
            return []
        # An op or API name (torch.squeeze, argmax, nn.embedding) says more than the words around it: it counts
        # twice. Only names some entry's document holds, so a stray English word in Chinese prose does not.
        scores = self.bm25.get_scores(query + [w for w in query if w in self.names])
        out = []
        for e, doc, score in zip(self.entries, self.docs, scores):
            if score > 0:
                have = set(doc)
                out.append((e, float(score), [w for w in query if w in have]))
        return sorted(out, key=lambda t: -t[1])


def message_document(m) -> list[str]:
    """A message page's words: its line (twice, as an entry's title), what it means, its causes."""
    return tokens(" ".join([m.shown, m.shown, m.summary, *m.engines, *(c.cause for c in m.causes)]))


ENGINE_NAMES = frozenset(NAMES)
_REF = re.compile(r"(?<!\S)\S*#\d+(?!\S)")


class SiteIndex:
    """The same BM25 for the site's search box, over the entries' documents and the message pages', written out
    as a table of term weights (`javascript()`), so that the browser ranks a query as `rank()` does here.

    A query's Latin words are found as `tokens()` finds them; its Chinese words as the index's own Chinese
    terms that occur in it (the browser has no jieba: the index's vocabulary is the dictionary), each once.
    An engine's bare name is no word here: alone (`ncnn`, `MNN#3977`) it would rank every page of that engine
    by how often it says so; the search box prefers the engine's pages by other means (lines.preferred).
    Weights are rounded to 1e-6 and summed in query order on both sides, so the order is the same."""

    K1, B = 1.5, 0.75  # rank_bm25's defaults, as explain uses them

    def __init__(self, entries: list[Entry], messages: dict | None = None):
        from rank_bm25 import BM25Okapi

        teach_segmenter(entries)
        self.pages = [f"{e.slug}/" for e in entries] + [f"messages/{m}/" for m in (messages or {})]
        docs = [document(e) for e in entries] + [message_document(m) for m in (messages or {}).values()]
        bm25 = BM25Okapi(docs)
        self.weights: dict[str, list[tuple[int, float]]] = {}
        for i, (freqs, length) in enumerate(zip(bm25.doc_freqs, bm25.doc_len)):
            norm = self.K1 * (1 - self.B + self.B * length / bm25.avgdl)
            for term, tf in freqs.items():
                w = round(bm25.idf[term] * tf * (self.K1 + 1) / (tf + norm), 6)
                self.weights.setdefault(term, []).append((i, w))
        self.names = sorted({w for e in entries for w in names(e)})
        self.chinese = sorted(t for t in self.weights if _CJK.fullmatch(t))

    def query(self, text: str) -> list[str]:
        low = _REF.sub(" ", text.lower())  # an issue reference (pytorch#151693) is a number to look up, not words
        out = [w.strip(".") for w in _WORD.findall(_CJK.sub(" ", low))]
        runs = _CJK.findall(low)
        out += [t for t in self.chinese if any(t in run for run in runs)]
        return list(dict.fromkeys(w for w in out if w and w not in STOP and w not in ENGINE_NAMES and not w.isdigit()))

    def rank(self, text: str) -> list[str]:
        """The pages that share the query's words, best first (ties in page order)."""
        query = self.query(text)
        names = set(self.names)
        scores: dict[int, float] = {}
        for term in query + [w for w in query if w in names]:  # a name counts twice, as in Index.rank
            for i, w in self.weights.get(term, ()):
                scores[i] = scores.get(i, 0.0) + w
        return [self.pages[i] for i in sorted((i for i, s in scores.items() if s > 0), key=lambda i: (-scores[i], i))]

    def javascript(self) -> str:
        data = {"pages": self.pages, "weights": self.weights, "names": self.names, "chinese": self.chinese,
                "word": _WORD.pattern, "cjk": _CJK.pattern, "ref": _REF.pattern, "stop": sorted(STOP | ENGINE_NAMES)}
        return ("/* Generated from convkb/match/words.py at site build: kb explain's BM25 over the pages' words. */\n"
                "window.kbWords = (function (data) {\n"
                "  var stop = {}; data.stop.forEach(function (w) { stop[w] = true; });\n"
                "  var names = {}; data.names.forEach(function (w) { names[w] = true; });\n"
                "  var cjk = new RegExp(data.cjk, \"g\");\n"
                "  function query(text) {\n"
                "    var low = text.toLowerCase().replace(new RegExp(data.ref, \"g\"), \" \"), out = [], seen = {};\n"
                "    (low.replace(cjk, \" \").match(new RegExp(data.word, \"g\")) || []).forEach(function (w) {\n"
                "      out.push(w.replace(/^\\.+|\\.+$/g, \"\"));\n"
                "    });\n"
                "    var runs = low.match(cjk) || [];\n"
                "    data.chinese.forEach(function (t) {\n"
                "      if (runs.some(function (r) { return r.indexOf(t) >= 0; })) out.push(t);\n"
                "    });\n"
                "    return out.filter(function (w) {\n"
                "      if (!w || stop[w] || /^[0-9]+$/.test(w) || seen[w]) return false;\n"
                "      return (seen[w] = true);\n"
                "    });\n"
                "  }\n"
                "  return function (text) {\n"
                "    var q = query(text), scores = {};\n"
                "    q.concat(q.filter(function (w) { return names[w]; })).forEach(function (t) {\n"
                "      (Object.prototype.hasOwnProperty.call(data.weights, t) ? data.weights[t] : []).forEach(function (p) {\n"
                "        scores[p[0]] = (scores[p[0]] || 0) + p[1];\n"
                "      });\n"
                "    });\n"
                "    return Object.keys(scores).map(Number).filter(function (i) { return scores[i] > 0; })\n"
                "      .sort(function (a, b) { return (scores[b] - scores[a]) || (a - b); })\n"
                "      .map(function (i) { return data.pages[i]; });\n"
                "  };\n"
                f"}})({json.dumps(data, ensure_ascii=False, separators=(',', ':'))});\n")
