"""A report's words against the entries' words: BM25 (rank_bm25) over jieba tokens, for prose that holds
no engine line ("onnx2ncnn 转出来全是 nan", "three-layer LSTM fails to convert").

An entry's document is what a user might say of it: its title, synonyms, Chinese summary, tags, the
op names of its trigger and its signatures' summaries. Prose alone never names an entry with
confidence: `kb explain` reports these as `possible`, with the words that matched.
"""

from __future__ import annotations

import functools
import re

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


def tokens(text: str) -> list[str]:
    """Lowercased English words and jieba's Chinese words, without stop words."""
    low = text.lower()
    out = [w.strip(".") for w in _WORD.findall(_CJK.sub(" ", low))]
    for run in _CJK.findall(low):
        # One-character words are mostly particles (把, 被, 里, 对): they match every entry's Chinese text alike.
        out += [w for w in _jieba().lcut_for_search(run) if len(w) > 1]
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
