"""A report's words against the entries' words: BM25 (rank_bm25) over jieba tokens, for prose that holds
no engine line ("onnx2ncnn 转出来全是 nan", "three-layer LSTM fails to convert").

An entry's document is what a user might say of it: its title, synonyms, Chinese summary, tags, the
op names of its trigger and its signatures' summaries. Prose alone never names an entry with
confidence: `kb explain` reports these as `possible`, with the words that matched.
"""

from __future__ import annotations

import functools
import re

from kb.entries import Entry

_CJK = re.compile(r"[\u3400-\u9fff]+")
_WORD = re.compile(r"[a-z][a-z0-9_.+-]*[a-z0-9]|[a-z]|\d+d\b")
# Words every report and every entry has: they tell nothing apart.
STOP = frozenset("""a an and are as at be but by can for from has have i in is it its my of on or the this to
was were when with model models convert converted converting conversion error errors issue problem use using
what why how does do not no after before then fails failed fail works work output outputs result results
的 了 是 在 我 用 后 时 会 就 都 和 也 有 问题 模型 转换 转 报错 出现 一个 怎么 为什么 请问 不""".split())


@functools.cache
def _jieba():
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def tokens(text: str) -> list[str]:
    """Lowercased English words and jieba's Chinese words, without stop words."""
    low = text.lower()
    out = [w.strip(".") for w in _WORD.findall(_CJK.sub(" ", low))]
    for run in _CJK.findall(low):
        out += _jieba().lcut_for_search(run)
    return [w for w in out if w and w not in STOP and not w.isdigit()]


def document(e: Entry) -> list[str]:
    m = e.meta
    parts = [m.title, m.title, *m.synonyms, *m.synonyms, *m.tags, *m.engines, *m.components, m.symptom.replace("-", " ")]
    if m.zh:
        parts += [m.zh.title, m.zh.title, m.zh.symptom, m.zh.cause, m.zh.workaround]
    for p in m.trigger:
        parts += [p.summary, *(str(n.op) for n in p.nodes.values() if getattr(n, "op", None))]
    parts += [s.summary for s in m.signatures]
    return tokens(" ".join(parts))


class Index:
    """BM25 over the entries' documents."""

    def __init__(self, entries: list[Entry]):
        from rank_bm25 import BM25Okapi

        self.entries = entries
        self.docs = [document(e) for e in entries]
        self.bm25 = BM25Okapi(self.docs)

    def rank(self, text: str) -> list[tuple[Entry, float, list[str]]]:
        """Entries by score, best first, with the query words each one shares (those with a score only)."""
        query = list(dict.fromkeys(tokens(text)))
        if not query:
            return []
        scores = self.bm25.get_scores(query)
        out = []
        for e, doc, score in zip(self.entries, self.docs, scores):
            if score > 0:
                have = set(doc)
                out.append((e, float(score), [w for w in query if w in have]))
        return sorted(out, key=lambda t: -t[1])
