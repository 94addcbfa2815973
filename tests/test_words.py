"""kb.match.words: how a report's words are cut and scored, for kb explain and the site's search box alike."""

from __future__ import annotations

from kb.match import words
from kb.match.words import best_of, nest, query_groups, spellings, tokens


def test_a_name_is_found_as_people_write_it():
    assert spellings("torch.sum") == ["torch.sum", "sum"]  # `x.sum(dim=1)` in a report
    assert spellings("f.grid_sample") == ["f.grid_sample", "grid_sample", "gridsample"]  # GridSample
    assert spellings("5-d") == ["5d"] and "5d" in tokens("a 5-D permute") and "5d" in tokens("5D permute")


def test_a_call_with_its_numbers_is_one_term():
    want = "permute(2,0,3,1,4)"
    assert want in tokens("qkv.permute(2, 0, 3, 1, 4)") and want in tokens("x.permute(2,0,3,1,4) 不支持")
    assert "permute(1,0)" not in tokens("x.permute(2, 0, 3, 1, 4)")
    assert not [t for t in tokens("softmax(dim=1)") if "(" in t]  # not integer arguments


def test_an_error_code_is_a_word_a_number_is_not():
    """ncnn's extract returns -100: people search for the code (alibaba/MNN and Tencent/ncnn threads quote it)."""
    assert "-100" in tokens("ex.extract return -100") and "-100" in tokens("ex.extract返回-100")
    assert not {"-1", "-06", "100"} & set(tokens("axis=-1 version 2020-06 took 100 ms"))


def test_a_stop_words_pieces_are_no_words():
    """不支持 (not supported) is a stop word: so is 不支, the piece jieba's search cut adds."""
    assert tokens("onnx2ncnn 不支持") == ["onnx2ncnn"]
    assert "不支" not in tokens("LogSoftmax 算子不支持")


def test_a_word_as_typed_heads_its_group():
    groups = query_groups("torch.squeeze 后 Squeeze 不支持")
    assert ["torch.squeeze"] in groups and ["squeeze"] in groups  # not squeeze as torch.squeeze's other spelling
    assert nest(["形状", "输出形状不对", "不对", "形状不对"]) == [["输出形状不对", "形状不对", "不对", "形状"]]


def test_a_group_scores_its_best_term_and_the_typed_one_most():
    """A Chinese phrase cut into overlapping pieces says one thing: document 0 has every piece, document 1 the
    named op the report also gives; the op wins, where summing the pieces made the phrase outweigh it."""
    weights = {"输出形状不对": [(0, 4.0)], "形状不对": [(0, 5.0)], "形状": [(0, 3.0)], "crop": [(1, 5.0)]}
    groups = [["crop"], ["输出形状不对", "形状不对", "形状"]]
    scores = best_of(groups, {"crop"}, lambda t: weights.get(t, ()))
    assert scores == {1: 10.0, 0: max(4.0, words.PART * 5.0, words.PART * 3.0)}
    assert scores[1] > scores[0] < sum(w for t in groups[1] for _, w in weights[t])


def test_the_search_box_puts_the_named_engines_pages_first():
    """A description that says MNN is about MNN's pages, whatever words an ncnn page shares (as kb explain keeps
    word-only results to the engines a report names); within each part, the words' order."""
    from kb import messages as message_index
    from kb.entries import load_all
    from kb.match.words import SiteIndex
    from kb.paths import repo_root

    entries = load_all(repo_root(), broken=[])
    index = SiteIndex(entries, message_index.load_all(entries=entries))
    engines = dict(zip(index.pages, index.engines))
    plain = index.rank("deconvolution output shape")
    assert {engines[p][0] for p in plain[:5]} - {"mnn"}  # some other engine's page ranks high on the words alone
    named = index.rank("deconvolution output shape, MNN")
    mnn = [p for p in plain if "mnn" in engines[p]]
    assert mnn and named == mnn + [p for p in plain if p not in mnn]


def test_an_issue_reference_names_no_engine():
    """pnnx's and onnx2ncnn's bugs are filed in Tencent/ncnn: 'ncnn#5356' (KB183, a pnnx entry) must not put ncnn's
    pages ahead of the page citing it; a word of the engine outside the reference still names it."""
    assert words.named_engines("Tencent/ncnn#5356") == set() == words.named_engines("ncnn#5356")
    assert words.named_engines("ncnn crashes, as in Tencent/ncnn#5356") == {"ncnn"}


def test_a_chinese_word_general_chinese_uses_often_counts_little():
    """解决 (solve) and 运行 (run) are rare in our pages, so our IDF alone would rank them above 量化 (quantize)."""
    assert words.general("解决") == words.GENERAL_FLOOR and words.general("运行") < 0.3
    assert words.general("量化") > 0.9 and words.general("段错误") == 1.0  # a term of art general Chinese lacks
    assert words.general("run") == 1.0  # English is left to the corpus's own IDF


def test_one_edit_is_a_letter_added_dropped_changed_or_two_swapped():
    assert words.one_edit("groupnrom", "groupnorm")  # two neighbours swapped: one edit, not two
    assert words.one_edit("deconvlution", "deconvolution") and words.one_edit("softmaxx", "softmax")
    assert words.one_edit("reshape", "reshope")
    assert not words.one_edit("reshape", "reshape") and not words.one_edit("groupnorm", "gropunrom")
    assert not words.one_edit("abcd", "badc")  # two swaps


def test_a_typo_of_five_letters_or_more_finds_the_word():
    vocabulary = {"groupnorm": [], "layernorm": [], "opset11": [], "norm": [], "slice": []}
    assert words.typos("groupnrom", vocabulary) == ["groupnorm"]
    assert words.typos("groupnorm", vocabulary) == []  # a word the pages have is no typo
    assert words.typos("nrom", vocabulary) == []  # shorter than TYPO_MIN: too many words are one edit away
    assert words.typos("opset13", vocabulary) == []  # another opset, not a typo
    assert words.corrected([["groupnrom"], ["slcie"], ["slice"]], vocabulary) == [["groupnrom", "groupnorm"], ["slcie"],
                                                                                 ["slice"]]


def test_kb_explain_and_the_box_read_a_typo_as_the_word():
    """`groupnrom` found nothing: it ranks the GroupNorm pages as `groupnorm` does (at PART, as another spelling)."""
    from kb import messages as message_index
    from kb.entries import load_all
    from kb.match.words import Index, SiteIndex
    from kb.paths import repo_root

    entries = load_all(repo_root(), broken=[])
    msgs = message_index.load_all(entries=entries)
    site, index = SiteIndex(entries, msgs), Index(entries, msgs.values())
    want = site.rank("groupnorm")[:2]
    assert want and site.rank("groupnrom")[:2] == want
    assert [p for p, _, _ in index.rank("groupnrom")][:2] == [p for p, _, _ in index.rank("groupnorm")][:2]


def test_a_report_is_cut_alike_with_the_dictionary_read_word_by_word(tmp_path, monkeypatch):
    """kb explain reads jieba's dictionary from kb's SQLite copy one word at a time (words._few_cuts): every Chinese
    text of the corpus, with the pages' words taught, is cut as jieba cuts it with its whole dictionary."""
    import pytest

    jieba = pytest.importorskip("jieba")
    from kb.entries import load_all
    from kb.messages import load_all as load_messages

    monkeypatch.setenv("KB_CACHE", str(tmp_path))
    words._keep_dictionary()
    entries, messages = load_all(), list(load_messages().values())
    texts = [t for e in entries for t in (e.meta.zh.title if e.meta.zh else "", *e.meta.synonyms)] + \
            [t for m in messages for t in (m.zh, *m.synonyms)]
    texts = [t for t in texts if words._CJK.search(t)]
    assert len(texts) > 300
    whole, kept = jieba.Tokenizer(), jieba.Tokenizer()
    whole.initialize()
    monkeypatch.setattr(jieba, "dt", kept)
    words._few_cuts()
    assert isinstance(kept.FREQ, words._Frequencies) and kept.total == whole.total
    for t in (whole, kept):
        monkeypatch.setattr(jieba, "dt", t)
        monkeypatch.setattr(jieba, "add_word", t.add_word)
        words.teach_segmenter(entries, messages)
    assert [kept.lcut(t) for t in texts] == [whole.lcut(t) for t in texts]
    assert [kept.lcut_for_search(t) for t in texts] == [whole.lcut_for_search(t) for t in texts]
