"""A report's words against the entries' words: BM25 (rank_bm25) over jieba tokens, for prose that holds
no engine line ("onnx2ncnn 转出来全是 nan", "three-layer LSTM fails to convert").

An entry's document is what a user might say of it: its title, synonyms, Chinese summary, tags, the
op names of its trigger and its signatures' summaries. Prose alone never names an entry with
confidence: `kb explain` reports these as `possible`, with the words that matched.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path

from kb.engines import NAMES
from kb.entries import Entry
from kb.schema import Message

_CJK = re.compile(r"[\u3400-\u9fff]+")
# A word, a rank (5-d), or an error code: a negative number of two digits or more (extract ... -100, -233).
_WORD = re.compile(r"[a-z][a-z0-9_.+-]*[a-z0-9]|[a-z]|\d+-?d\b|(?<![\w.])-\d{2,}\b")
# A call with its integer arguments (permute(2, 0, 3, 1, 4), x.reshape(1, 3, 6, 10)): people paste the line of
# code, pages quote it, and the numbers say which permute it is. One term: the call's last name and its numbers.
_CALL = re.compile(r"([a-z_][a-z0-9_]*)\(\s*(-?\d+(?:\s*,\s*-?\d+)+)\s*\)")
# Words every report and every entry has: they tell nothing apart.
STOP = frozenset("""a an and are as at be but by can for from has have i in is it its my of on or the this to
was were when with model models convert converted converting conversion error errors issue problem use using
what why how does do not no after before then fails failed fail works work output outputs result results
that so still cannot can't well uses used comes come ran run runs any there them they me
的 了 是 在 我 用 后 时 会 就 都 和 也 有 问题 模型 转换 转 报错 出现 一个 怎么 为什么 请问 不
这个 这些 那个 什么 原因 或者 需要 可以 还是 但是 然后 时候 一下 一样 没有 不能 能够 支持 提示 打印 说明
成功 失败 结果 输出 输入 导出 过程 之后 以后 直接 还有 已经 里面 时报""".split())

ENGINE_WORDS = {e: rf"(?<![A-Za-z0-9_]){e}" for e in ("mnn", "ncnn", "pnnx", "onnx2ncnn")}


REF = re.compile(r"(?<!\S)\S*#\d+(?!\S)")  # an issue reference: Tencent/ncnn#5356, MNN#3977, #169
# The same reference read for its tracker and number (groups 1-2: the thread's address; 3-4: alibaba/MNN#3977, MNN#3977
# or #3977), in the syntax Python and JavaScript read alike: kb.match.lines finds the pages citing it.
ISSUE = re.compile(r"github\.com/[\w.-]+/([\w.-]+)/(?:issues|pull)/(\d+)|(?:[\w.-]+/)?([A-Za-z][\w.-]*)?#(\d+)", re.ASCII)


def named_engines(text: str) -> set[str]:
    """The engines the text names by one of their words (the browser scripts test the same ENGINE_WORDS). An issue
    reference names a tracker, not an engine: pnnx's and onnx2ncnn's bugs are filed as Tencent/ncnn#..."""
    text = REF.sub(" ", text)
    return {e for e, rx in ENGINE_WORDS.items() if re.search(rx, text, re.IGNORECASE | re.ASCII)}


@functools.cache
def _jieba():
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


class _Frequencies:
    """jieba's word frequencies (its FREQ: the words of dict.txt and their prefixes), read from an SQLite file one
    word at a time as a cut asks for it. jieba reads all 498,113 before its first cut (0.6 s from its own cache, 2 s
    without); a report's cut asks for a few hundred. The words taught later (add_word) are kept here."""

    _NONE = object()

    def __init__(self, db):
        self._db, self._known, self._absent = db, {}, set()

    def get(self, word, default=None):
        if word in self._known:
            return self._known[word]
        if word not in self._absent:
            row = self._db.execute("SELECT n FROM freq WHERE w = ?", (word,)).fetchone()
            if row is not None:
                self._known[word] = row[0]
                return row[0]
            self._absent.add(word)
        return default

    def __contains__(self, word) -> bool:
        return self.get(word, self._NONE) is not self._NONE

    def __getitem__(self, word):
        n = self.get(word, self._NONE)
        if n is self._NONE:
            raise KeyError(word)
        return n

    def __setitem__(self, word, n) -> None:
        self._known[word] = n
        self._absent.discard(word)


def _dictionary_file() -> Path | None:
    """Where jieba's dictionary is kept as SQLite (in kb's cache, by the dictionary's size and time); None without
    jieba."""
    from kb import paths

    f = _jieba_file("dict.txt")
    if f is None or not f.is_file():
        return None
    st = f.stat()
    key = hashlib.sha256(f"{f}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:16]
    return paths.state("cache") / "words" / f"jieba-{key}.sqlite"


def _keep_dictionary() -> None:
    """Write jieba's dictionary to _dictionary_file(), as jieba reads dict.txt (its gen_pfdict), once."""
    import sqlite3
    import tempfile

    path = _dictionary_file()
    if path is None or path.is_file():
        return
    jieba = _jieba()
    with open(_jieba_file("dict.txt"), "rb") as f:
        freq, total = jieba.Tokenizer.gen_pfdict(f)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        db = sqlite3.connect(Path(tmp) / path.name)
        db.execute("CREATE TABLE freq (w TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID")
        db.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v INTEGER)")
        db.executemany("INSERT INTO freq VALUES (?, ?)", freq.items())
        db.execute("INSERT INTO meta VALUES ('total', ?)", (total,))
        db.commit()
        db.close()
        os.replace(Path(tmp) / path.name, path)  # whole or not at all


def _few_cuts() -> None:
    """Before a process that cuts only a report (kb explain, kb scan) first cuts: jieba reads its dictionary from
    _dictionary_file() word by word, where that is kept; else as usual. A build, which cuts every page, loads it whole."""
    import sqlite3

    jieba = _jieba()
    path = _dictionary_file()
    if jieba.dt.initialized or path is None or not path.is_file():
        return
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        (total,) = db.execute("SELECT v FROM meta WHERE k = 'total'").fetchone()
    except (sqlite3.Error, TypeError):
        return
    with jieba.dt.lock:
        jieba.dt.FREQ, jieba.dt.total, jieba.dt.initialized = _Frequencies(db), total, True


# How much a Chinese word tells apart in any text, from jieba's own IDF over general Chinese: the corpus's IDF
# sees only our pages, where 解决 (solve), 运行 (run) and 环境 (environment) are rare enough to outweigh 量化 or
# 算子. Below LOW a word counts at FLOOR, above HIGH whole, linearly between (tuned: tests/data/search, 4 query sets).
GENERAL_LOW, GENERAL_HIGH, GENERAL_FLOOR = 5.0, 8.0, 0.2


@functools.cache
def general(term: str) -> float:
    """The factor for a term: 1 for any but a Chinese word that general Chinese uses often."""
    if not _CJK.fullmatch(term):
        return 1.0
    idf = _general_idf().get(term)
    if idf is None:
        return 1.0  # not in general Chinese at all: a term of art
    return max(GENERAL_FLOOR, min(1.0, (idf - GENERAL_LOW) / (GENERAL_HIGH - GENERAL_LOW)))


def _jieba_file(*parts: str):
    """A data file of the installed jieba, found without importing it (None without jieba)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("jieba")
    return Path(spec.origin).parent.joinpath(*parts) if spec and spec.origin else None


@functools.cache
def _general_idf() -> dict[str, float]:
    """jieba.analyse's default IDF table (default_tfidf.idf_freq), read as it reads it: importing jieba.analyse
    also loads jieba.posseg's tag dictionary, seconds for a table of one file."""
    path = _jieba_file("analyse", "idf.txt")
    if path is None or not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, freq = line.strip().split(" ")
        out[word] = float(freq)
    return out


TAUGHT_FREQ = 20_000  # more than most words jieba knows (错误 6,379, 模型 2,890): a taught word is cut whole


def teach_segmenter(entries: list[Entry], messages=()) -> None:
    """Give jieba the entries' and the message pages' Chinese synonyms (反卷积, 段错误), so that a page's text and
    a report are cut into those words and not into pieces of them: the site's index (mkdocs-material's search
    cuts with jieba too) and the BM25 documents here, whichever process builds them."""
    try:
        jieba = _jieba()
    except ImportError:
        return
    for phrases in [e.meta.synonyms for e in entries] + [m.synonyms for m in messages]:
        for phrase in phrases:
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


def spellings(word: str) -> list[str]:
    """A Latin word and the other ways people write the same name: a dotted name also as its last part
    (torch.sum is `sum(dim=1)` in a report, nn.Embedding is "embedding"), a snake_case one also run together
    (grid_sample is GridSample, log_softmax LogSoftmax); a rank as one word (5-D, 5D: 5d)."""
    if word[:1].isdigit():
        return [word.replace("-", "")]  # 5-D is 5D
    out = [word]
    if "." in word:
        out.append(word.rsplit(".", 1)[1])
    if "_" in out[-1]:
        out.append(out[-1].replace("_", ""))
    return out


def _in_stop(word: str, i: int, j: int) -> bool:
    """word[i:j] lies inside a stop word of `word` (不支 inside 不支持 of 不支持的算子)."""
    return any(_stop(word[a:b]) for a in range(i + 1) for b in range(max(j, a + 2), len(word) + 1))


def _chinese(run: str) -> list[str]:
    """jieba's search cut of a Chinese run (each word, then the dictionary words inside a longer one), without
    the pieces of a stop word: 不支持 is a stop word, and so is its 不支."""
    jieba, out = _jieba(), []
    for w in jieba.lcut(run):
        if _stop(w):
            continue
        for n in (2, 3):
            if len(w) > n:
                out += [w[i:i + n] for i in range(len(w) - n + 1)
                        if jieba.get_FREQ(w[i:i + n]) and not _in_stop(w, i, i + n)]
        out.append(w)
    # One-character words are mostly particles (把, 被, 里, 对): they match every entry's Chinese text alike.
    return [w for w in out if len(w) > 1]


def _latin(low: str) -> list[list[str]]:
    text = _CJK.sub(" ", low)
    return [spellings(w.strip(".")) for w in _WORD.findall(text)] + \
        [[m[1] + "(" + "".join(m[2].split()) + ")"] for m in _CALL.finditer(text)]


def tokens(text: str) -> list[str]:
    """Lowercased English words (with their other spellings) and jieba's Chinese words, without stop words."""
    low = text.lower()
    out = [s for group in _latin(low) for s in group]
    for run in _CJK.findall(low):
        out += _chinese(run)
    return [w for w in out if w and not _stop(w) and not w.isdigit()]


def nest(terms: list[str]) -> list[list[str]]:
    """Chinese terms as groups: the longest heads one, a term inside it joins it (输出形状不对 with 形状不对, 形状,
    不对). In the order longest first, then by code point, which Python and JavaScript sort alike."""
    groups: list[list[str]] = []
    for t in sorted(set(terms), key=lambda t: (-len(t), t)):
        head = next((g for g in groups if t in g[0]), None)
        if head is None:
            groups.append([t])
        else:
            head.append(t)
    return groups


def distinct(groups: list[list[str]], keep) -> list[list[str]]:
    """Each term once: a word as typed heads its group (torch.squeeze ... Squeeze: squeeze is a word of its own,
    not only torch.squeeze's other spelling); a group whose head is no word (a stop word, a number, typed
    before) goes."""
    heads = {g[0] for g in groups if g}
    seen: set[str] = set()
    out = []
    for g in groups:
        if not g or not g[0] or g[0] in seen or not keep(g[0]):
            continue
        g = [g[0]] + [w for w in dict.fromkeys(g[1:]) if w and w not in seen and w not in heads and keep(w)]
        out.append(g)
        seen.update(g)
    return out


def query_groups(text: str) -> list[list[str]]:
    """A report's words, one group per thing it says: a Latin word with its other spellings, a Chinese word with
    the dictionary words inside it. A page scores the best of a group's terms, not their sum: a Chinese phrase
    cut into four overlapping pieces says no more than one English word, and outweighed a named op."""
    low = text.lower()
    chinese = [w for run in _CJK.findall(low) for w in _chinese(run)]
    return distinct(_latin(low) + nest(chinese), lambda w: not _stop(w) and not w.isdigit())


TYPO_MIN = 5  # a word this long, that no page has, may be a typo of a page's word (groupnrom: groupnorm)
# Only words of letters (and _ .): a changed digit is another version, opset or size (opset13, yolov5s), no typo.
_TYPO = re.compile(r"[a-z][a-z_.]*[a-z]")


def one_edit(a: str, b: str) -> bool:
    """b is a with one letter added, dropped or changed, or two neighbours swapped (nrom: norm)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or (a[i + 2:] == b[i + 2:] and a[i] == b[i + 1] and a[i + 1] == b[i])
    if len(a) > len(b):
        a, b = b, a
    return a[i:] == b[i + 1:]


def typos(word: str, vocabulary) -> list[str]:
    """The vocabulary's words one edit from `word`, if it is a word of TYPO_MIN letters or more that the
    vocabulary lacks; sorted, as the browser sorts them."""
    if len(word) < TYPO_MIN or word in vocabulary or not _TYPO.fullmatch(word):
        return []
    return sorted(t for t in vocabulary if len(t) >= TYPO_MIN - 1 and _TYPO.fullmatch(t) and one_edit(word, t))


def corrected(groups: list[list[str]], vocabulary) -> list[list[str]]:
    """Each group with the vocabulary's words its unknown terms may be typos of, as its other terms (so at PART:
    a page that has the word as typed outranks one that has a correction); a word another group holds stays
    there."""
    seen = {w for g in groups for w in g}
    out = []
    for g in groups:
        extra = [c for t in g for c in typos(t, vocabulary) if c not in seen]
        seen.update(extra)
        out.append(g + list(dict.fromkeys(extra)))
    return out


PART = 0.5  # a group's other terms (another spelling, a piece of the phrase) count at this fraction


def best_of(groups: list[list[str]], names, scores_of) -> dict[int, float]:
    """Per document, the sum over the groups of the group's best term. The words as typed (a group's first term)
    count whole, its other terms at PART: a page that says what the user said (nn.LSTM, 可变形卷积) beats one
    that only shares a part of it (lstm, 卷积). An op or API name (torch.squeeze, argmax, nn.embedding) says
    more than the words around it: it counts twice. Only names some entry's document holds, so a stray English
    word in Chinese prose does not."""
    total: dict[int, float] = {}
    for g in groups:
        best: dict[int, float] = {}
        for j, term in enumerate(g):
            k = (2 if term in names else 1) * (1 if j == 0 else PART)
            for i, w in scores_of(term):
                if k * w > best.get(i, 0.0):
                    best[i] = k * w
        for i, w in best.items():
            total[i] = total.get(i, 0.0) + w
    return total


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
    """BM25 over the entries' and the message pages' documents, as one table of term weights (rank_bm25's IDF,
    k1 and b; a Chinese word general Chinese uses often scaled down): kb explain ranks a report with it, and the
    site's box with the same table, written out (SiteIndex). Weights are rounded to 1e-6, so that the browser's
    sums come out in the same order."""

    K1, B = 1.5, 0.75  # rank_bm25's defaults

    def __init__(self, entries: list[Entry], messages=()):
        from rank_bm25 import BM25Okapi

        messages = list(messages)
        teach_segmenter(entries, messages)
        self.pages: list[Entry | Message] = [*entries, *messages]
        self.docs = [document(e) for e in entries] + [message_document(m) for m in messages]
        bm25 = BM25Okapi(self.docs)
        self.weights: dict[str, list[tuple[int, float]]] = {}
        for i, (freqs, length) in enumerate(zip(bm25.doc_freqs, bm25.doc_len)):
            norm = self.K1 * (1 - self.B + self.B * length / bm25.avgdl)
            for term, tf in freqs.items():
                w = round(general(term) * bm25.idf[term] * tf * (self.K1 + 1) / (tf + norm), 6)
                self.weights.setdefault(term, []).append((i, w))
        self.names = frozenset(w for e in entries for w in names(e))

    _untaught: tuple | None = None  # (entries, messages) of an index read from the cache: jieba not yet taught

    @classmethod
    def load(cls, entries: list[Entry], messages=()) -> Index:
        """Index(entries, messages), kept in the cache (.kb/cache/words) by what it is built from: the pages'
        fields, this module's code and jieba's dictionaries. Building it cuts every page with jieba (seconds);
        reading it takes milliseconds, and a report without Chinese never loads jieba at all."""
        import hashlib
        import pickle

        from kb import paths
        from kb.entries import write_whole

        messages = list(messages)
        h = hashlib.sha256(Path(__file__).read_bytes())
        for f in (_jieba_file("dict.txt"), _jieba_file("analyse", "idf.txt")):
            st = f.stat() if f and f.is_file() else None
            h.update(f"{f}:{st and (st.st_size, st.st_mtime_ns)}".encode())
        for e in entries:
            h.update(f"\0{e.slug}\0".encode() + e.meta.model_dump_json().encode())
        for m in messages:
            h.update(b"\0" + m.model_dump_json().encode())
        kept = paths.state("cache") / "words" / f"{h.hexdigest()[:32]}.pickle"
        try:
            docs, weights, names_ = pickle.loads(kept.read_bytes())
        except Exception:  # absent, torn or from another Python: build it
            index = cls(entries, messages)
            write_whole(kept, pickle.dumps((index.docs, index.weights, index.names)))
            _keep_dictionary()
            return index
        index = cls.__new__(cls)
        index.pages, index.docs, index.weights, index.names = [*entries, *messages], docs, weights, names_
        index._untaught = (entries, messages)
        return index

    def scores(self, groups: list[list[str]]) -> dict[int, float]:
        return best_of(groups, self.names, lambda term: self.weights.get(term, ()))

    def rank(self, text: str) -> list[tuple[Entry | Message, float, list[str]]]:
        """Pages (entries and messages) by score, best first, with the query words each one shares (those with a
        score only)."""
        if self._untaught and _CJK.search(text):  # cut the report as the pages were cut: with their words taught
            _few_cuts()
            teach_segmenter(*self._untaught)
            self._untaught = None
        groups = corrected(query_groups(text), self.weights)
        query = [w for g in groups for w in g]
        out = []
        for i, score in self.scores(groups).items():
            if score > 0:
                have = set(self.docs[i])
                out.append((self.pages[i], score, [w for w in query if w in have]))
        return sorted(out, key=lambda t: -t[1])


def message_document(m) -> list[str]:
    """A message page's words, as an entry's: its line (twice, as an entry's title) and its example, the users'
    words for it (twice, as an entry's synonyms), what it means (in English and Chinese), its causes."""
    return tokens(" ".join([m.shown, m.shown, m.example, *m.synonyms, *m.synonyms, m.summary, m.zh, *m.engines,
                            *(c.cause for c in m.causes)]))


ENGINE_NAMES = frozenset(NAMES)


class SiteIndex:
    """Index's table for the site's search box, written out (`data()`, read by docs/assets/kb-words.js), so that the browser ranks a query
    as `rank()` does here.

    A query's Latin words are found as `tokens()` finds them; its Chinese words as the index's own Chinese
    terms that occur in it (the browser has no jieba: the index's vocabulary is the dictionary), each once;
    they are scored in groups, as Index.rank scores them (query_groups, best_of).
    An engine's bare name is no word here: alone (`ncnn`, `MNN#3977`) it would rank every page of that engine
    by how often it says so. It says which engine the query is about instead: the pages of the engines it names
    come first, each group in its words' order (as kb explain keeps word-only results to the engines a report
    names, and lines.preferred orders the box's other results). Scores are summed in query order on both sides."""

    def __init__(self, entries: list[Entry], messages: dict | None = None, ops: dict[str, list[str]] | None = None):
        """`ops`: the op pages (kb.site.ops), op -> the engines measured on it."""
        messages = messages or {}
        self.index = Index(entries, messages.values())
        self.pages = [f"{e.slug}/" for e in entries] + [f"messages/{m}/" for m in messages]
        self.engines = [list(e.meta.engines) for e in entries] + [list(m.engines) for m in messages.values()]
        for op, engines in (ops or {}).items():
            self._add_op(op, engines)
        self.chinese = sorted(t for t in self.index.weights if _CJK.fullmatch(t))

    OP_ALONE = 1.0  # an op page's weight for its op's name where no other page has the name

    def _add_op(self, op: str, engines: list[str]) -> None:
        """An op page (/ops/<Op>/) is found by its op's name alone, and ranks as the weakest page that has the
        name: the entries and messages about the op come first, and the other pages' weights stay as kb explain
        has them (op pages are outside its BM25, whose IDF they would change)."""
        i = len(self.pages)
        self.pages.append(f"ops/{op}/")
        self.engines.append(list(engines))
        for term in dict.fromkeys(tokens(op)):
            have = self.index.weights.get(term)
            weight = min(w for _, w in have) if have else self.OP_ALONE
            self.index.weights[term] = [*(have or ()), (i, weight)]  # a new list: the index's stays as built

    def query(self, text: str) -> list[list[str]]:
        """The query's groups of terms (query_groups), its Chinese ones found in the index's vocabulary."""
        low = REF.sub(" ", text.lower())  # an issue reference (pytorch#151693) is a number to look up, not words
        runs = _CJK.findall(low)
        chinese = [t for t in self.chinese if any(t in run for run in runs)]
        return distinct(_latin(low) + nest(chinese),
                        lambda w: w not in STOP and w not in ENGINE_NAMES and not w.isdigit())

    def rank(self, text: str) -> list[str]:
        """The pages that share the query's words, best first (ties in page order); the named engines' first."""

        scores = self.index.scores(corrected(self.query(text), self.index.weights))
        named = named_engines(text)
        return [self.pages[i] for i in sorted((i for i, s in scores.items() if s > 0),
                                              key=lambda i: (not named & set(self.engines[i]), -scores[i], i))]

    def data(self) -> dict:
        """The index for the browser: docs/assets/kb-words.js ranks a query with it as rank() does."""
        return {"pages": self.pages, "weights": self.index.weights, "names": sorted(self.index.names), "chinese": self.chinese,
                "word": _WORD.pattern, "call": _CALL.pattern, "cjk": _CJK.pattern, "ref": REF.pattern,
                "stop": sorted(STOP | ENGINE_NAMES), "engines": self.engines, "engineWords": ENGINE_WORDS, "part": PART,
                "typo": _TYPO.pattern, "typoMin": TYPO_MIN}
