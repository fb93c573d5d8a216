//! The lexical analyzer: one pure function turns text into search tokens, at index time and at
//! query time alike, so the two can never drift apart.
//!
//! Owns folding (compatibility decomposition, mark stripping, lowercasing), word splitting,
//! CJK bigrams, the English stop list and Porter2 stemming. It does not know about tantivy,
//! fields or scoring; `lexical.rs` wraps it as a tantivy tokenizer. Any change to the output
//! for any input must bump [`TOKENIZER_VERSION`], because the index stores the old tokens.

use std::ops::Range;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::char::{compose, decompose_compatible, is_combining_mark};

/// The analyzer's version; the store rebuilds the lexical index when it changes.
pub(crate) const TOKENIZER_VERSION: u32 = 1;

/// Word tokens longer than this (in bytes, after folding) are dropped: they are pasted blobs
/// (base64, minified code) that nobody types into a search box, and they bloat the term index.
pub(crate) const MAX_TOKEN_BYTES: usize = 128;

/// The stop list, sorted so it can be binary-searched: Snowball English without contractions.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Lowercase search tokens of `text`, in order; see [`tokens_with_offsets`] for the rules.
pub(crate) fn tokenize(text: &str) -> Vec<String> {
    tokens_with_offsets(text).into_iter().map(|(token, _)| token).collect()
}

/// The tokens of `text` with the byte range of the source text each came from.
///
/// Folding is NFKD, then combining marks removed, then lowercase (`Café` -> `cafe`, full-width
/// `ＡＢ１` -> `ab1`). Tokens are maximal runs of alphanumerics; Han, kana and Hangul form runs
/// of their own that become overlapping bigrams (a lone character stays a unigram), because
/// these scripts do not separate words with spaces. Word tokens are then filtered: stop words
/// dropped, ASCII alphabetic tokens stemmed with Porter2, stop words dropped again
/// (`having` -> `have` -> gone). Digits and mixed tokens (`wn70`) are kept verbatim.
pub(crate) fn tokens_with_offsets(text: &str) -> Vec<(String, Range<usize>)> {
    let mut builder =
        Builder { out: Vec::new(), word: String::new(), word_range: None, cjk: Vec::new() };
    for (start, c) in text.char_indices() {
        let end = start + c.len_utf8();
        if c.is_ascii() {
            // Most text is ASCII; skip the normalisation tables for it.
            builder.push(c.to_ascii_lowercase(), start..end);
            continue;
        }
        let mut produced = false;
        decompose_compatible(c, |d| {
            if is_kana_voicing_mark(d) {
                // Kept so that it can recombine with its kana: `が` and `か` are different
                // syllables, and stripping the mark would merge them.
                builder.push_cjk_mark(d, start..end);
                produced = true;
            } else if !is_combining_mark(d) {
                for lower in d.to_lowercase() {
                    if !is_combining_mark(lower) {
                        builder.push(lower, start..end);
                        produced = true;
                    }
                }
            }
        });
        if !produced {
            // A bare combining mark continues the word it decorates (`cafe\u{301}`).
            builder.extend_open_run(end);
        }
    }
    builder.finish()
}

/// Accumulates the current run and emits finished tokens.
struct Builder {
    out: Vec<(String, Range<usize>)>,
    /// The open word run (folded text) and its source range.
    word: String,
    word_range: Option<Range<usize>>,
    /// The open CJK run: folded characters with their source ranges.
    cjk: Vec<(char, Range<usize>)>,
}

impl Builder {
    fn push(&mut self, c: char, source: Range<usize>) {
        if is_cjk(c) {
            self.flush_word();
            self.push_cjk(c, source);
        } else if c.is_alphanumeric() {
            self.flush_cjk();
            self.word.push(c);
            match &mut self.word_range {
                Some(range) => range.end = source.end,
                None => self.word_range = Some(source),
            }
        } else {
            self.flush_word();
            self.flush_cjk();
        }
    }

    fn push_cjk(&mut self, c: char, source: Range<usize>) {
        // Decomposed input (NFD Hangul jamo, kana plus a separate voicing mark) is recomposed
        // so that it tokenizes exactly like the precomposed form.
        if let Some((last, range)) = self.cjk.last_mut()
            && let Some(composed) = compose(*last, c)
        {
            *last = composed;
            range.end = source.end;
            return;
        }
        self.cjk.push((c, source));
    }

    fn push_cjk_mark(&mut self, mark: char, source: Range<usize>) {
        if let Some((last, range)) = self.cjk.last_mut() {
            if let Some(composed) = compose(*last, mark) {
                *last = composed;
            }
            range.end = source.end;
        }
    }

    fn extend_open_run(&mut self, end: usize) {
        if let Some(range) = &mut self.word_range {
            range.end = end;
        } else if let Some((_, range)) = self.cjk.last_mut() {
            range.end = end;
        }
    }

    fn flush_word(&mut self) {
        let Some(range) = self.word_range.take() else { return };
        let word = std::mem::take(&mut self.word);
        if word.len() > MAX_TOKEN_BYTES {
            return;
        }
        let token = if word.bytes().all(|b| b.is_ascii_lowercase()) {
            match STEMS.with_borrow_mut(|stems| stems.token(word)) {
                Some(token) => token,
                None => return,
            }
        } else if is_stop_word(&word) {
            return;
        } else {
            word
        };
        self.out.push((token, range));
    }

    fn flush_cjk(&mut self) {
        match self.cjk.as_slice() {
            [] => {}
            [(c, range)] => self.out.push((c.to_string(), range.clone())),
            run => {
                for pair in run.windows(2) {
                    let (a, first) = &pair[0];
                    let (b, second) = &pair[1];
                    let mut token = String::with_capacity(a.len_utf8() + b.len_utf8());
                    token.push(*a);
                    token.push(*b);
                    self.out.push((token, first.start..second.end));
                }
            }
        }
        self.cjk.clear();
    }

    fn finish(mut self) -> Vec<(String, Range<usize>)> {
        self.flush_word();
        self.flush_cjk();
        self.out
    }
}

/// Words a thread's [`Stems`] holds before it starts afresh: a vault's vocabulary of plain
/// lowercase words is tens of thousands, so the cache rarely fills, and when it does the
/// commonest words are back in it within a few notes.
const STEMS_HELD: usize = 1 << 16;

thread_local! {
    /// This thread's stems: the indexing thread tokenizes the same words over and over.
    static STEMS: std::cell::RefCell<Stems> = std::cell::RefCell::new(Stems {
        stemmer: Stemmer::create(Algorithm::English),
        known: rustc_hash::FxHashMap::default(),
    });
}

/// What a plain lowercase word becomes (its stem, or nothing for a stop word before or after
/// stemming), remembered: Snowball and the two stop-list lookups were a fifth of the words
/// pass, for words most of which the vault had said before.
struct Stems {
    stemmer: Stemmer,
    known: rustc_hash::FxHashMap<String, Option<String>>,
}

impl Stems {
    /// The token `word` (lowercase ASCII letters only) becomes, `None` when it is dropped.
    fn token(&mut self, word: String) -> Option<String> {
        if let Some(known) = self.known.get(&word) {
            return known.clone();
        }
        let token = if is_stop_word(&word) {
            None
        } else {
            Some(self.stemmer.stem(&word).into_owned()).filter(|stem| !is_stop_word(stem))
        };
        if self.known.len() >= STEMS_HELD {
            self.known.clear();
        }
        self.known.insert(word, token.clone());
        token
    }
}

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// The combining (semi-)voiced sound marks that NFKD splits off kana.
fn is_kana_voicing_mark(c: char) -> bool {
    matches!(c, '\u{3099}' | '\u{309A}')
}

/// Han, Hiragana, Katakana and Hangul letters and numerals (punctuation in those blocks, such
/// as the katakana middle dot, separates like any other punctuation).
fn is_cjk(c: char) -> bool {
    let in_block = matches!(c,
        '\u{1100}'..='\u{11FF}'     // Hangul Jamo
        | '\u{3005}'..='\u{3007}'   // 々 〆 〇
        | '\u{303B}'                // 〻
        | '\u{3040}'..='\u{30FF}'   // Hiragana, Katakana
        | '\u{3130}'..='\u{318F}'   // Hangul Compatibility Jamo
        | '\u{31F0}'..='\u{31FF}'   // Katakana Phonetic Extensions
        | '\u{3400}'..='\u{4DBF}'   // CJK Extension A
        | '\u{4E00}'..='\u{9FFF}'   // CJK Unified Ideographs
        | '\u{A960}'..='\u{A97F}'   // Hangul Jamo Extended-A
        | '\u{AC00}'..='\u{D7FF}'   // Hangul Syllables, Jamo Extended-B
        | '\u{F900}'..='\u{FAFF}'   // CJK Compatibility Ideographs
        | '\u{20000}'..='\u{3FFFF}' // Supplementary and Tertiary Ideographic Planes
    );
    in_block && c.is_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<String> {
        tokenize(text)
    }

    fn strs(tokens: &[&str]) -> Vec<String> {
        tokens.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn identifiers_split_on_punctuation_and_keep_digits() {
        assert_eq!(toks("KE-8842071"), strs(&["ke", "8842071"]));
        assert_eq!(toks("10.0.4.12"), strs(&["10", "0", "4", "12"]));
        assert_eq!(toks("WN70 RXE"), strs(&["wn70", "rxe"]));
        assert_eq!(toks("NB-7726041"), strs(&["nb", "7726041"]));
        assert_eq!(toks("DP-4418-K"), strs(&["dp", "4418", "k"]));
        assert_eq!(toks("SW1A 2AA"), strs(&["sw1a", "2aa"]));
        assert_eq!(toks("nomic-embed-text"), strs(&["nomic", "emb", "text"]));
    }

    #[test]
    fn folding_strips_accents_and_compatibility_forms() {
        assert_eq!(toks("café"), strs(&["cafe"]));
        assert_eq!(toks("cafe\u{301}"), strs(&["cafe"]));
        assert_eq!(toks("CAFÉ Ñandú"), strs(&["cafe", "nandu"]));
        assert_eq!(toks("ＡＢ１２"), strs(&["ab12"]));
        assert_eq!(toks("ﬁnance"), strs(&["financ"]));
        assert_eq!(toks("İstanbul"), strs(&["istanbul"]));
    }

    #[test]
    fn stemming_applies_to_ascii_alphabetic_tokens_only() {
        assert_eq!(toks("running runs ran"), strs(&["run", "run", "ran"]));
        assert_eq!(toks("Payments PAID invoices"), strs(&["payment", "paid", "invoic"]));
        assert_eq!(toks("routers2 ab12cd"), strs(&["routers2", "ab12cd"]));
        assert_eq!(toks("λόγοι"), strs(&["λογοι"]));
    }

    #[test]
    fn stop_words_are_dropped_before_and_after_stemming() {
        assert_eq!(toks("The cat and the hat"), strs(&["cat", "hat"]));
        assert_eq!(toks("having"), Vec::<String>::new());
        assert_eq!(toks("I should have been there"), Vec::<String>::new());
        // Contractions are not on the list, so their halves survive.
        assert_eq!(toks("don't"), strs(&["don", "t"]));
    }

    #[test]
    fn stop_list_is_sorted_and_unique() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(STOP_WORDS.len(), 125);
    }

    #[test]
    fn chinese_becomes_overlapping_bigrams() {
        assert_eq!(toks("麻婆豆腐"), strs(&["麻婆", "婆豆", "豆腐"]));
        assert_eq!(toks("麻"), strs(&["麻"]));
        assert_eq!(toks("豆腐。麻"), strs(&["豆腐", "麻"]));
    }

    #[test]
    fn mixed_scripts_split_at_script_boundaries() {
        assert_eq!(toks("Order麻婆豆腐x2"), strs(&["order", "麻婆", "婆豆", "豆腐", "x2"]));
        assert_eq!(toks("2023年の予算"), strs(&["2023", "年の", "の予", "予算"]));
    }

    #[test]
    fn japanese_kana_and_kanji_share_a_run() {
        assert_eq!(toks("東京タワー"), strs(&["東京", "京タ", "タワ", "ワー"]));
        assert_eq!(
            toks("ひらがな・カタカナ"),
            strs(&["ひら", "らが", "がな", "カタ", "タカ", "カナ"])
        );
        // Voiced kana keep their mark whether precomposed, decomposed or half-width.
        assert_eq!(toks("がか"), strs(&["がか"]));
        assert_eq!(toks("か\u{3099}か"), strs(&["がか"]));
        assert_eq!(toks("ｶﾞｽ"), strs(&["ガス"]));
    }

    #[test]
    fn korean_stays_in_syllables() {
        assert_eq!(toks("한국어 사전"), strs(&["한국", "국어", "사전"]));
        // NFD jamo (as macOS writes file names) tokenizes like the precomposed form.
        assert_eq!(toks("\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}"), strs(&["한국"]));
    }

    #[test]
    fn empty_whitespace_and_symbols_yield_nothing() {
        assert_eq!(toks(""), Vec::<String>::new());
        assert_eq!(toks(" \t\n  "), Vec::<String>::new());
        assert_eq!(toks("— … !!! 🚗🔥 ❤️"), Vec::<String>::new());
        assert_eq!(toks("car🚗park"), strs(&["car", "park"]));
    }

    #[test]
    fn overlong_words_are_dropped() {
        let blob = "a".repeat(MAX_TOKEN_BYTES + 1);
        assert_eq!(toks(&format!("x {blob} y")), strs(&["x", "y"]));
        let fits = "7".repeat(MAX_TOKEN_BYTES);
        assert_eq!(toks(&fits), vec![fits.clone()]);
    }

    #[test]
    fn offsets_point_at_the_source_text() {
        let text = "Café WN70-rxe, 麻婆豆腐!";
        let got: Vec<(String, &str)> = tokens_with_offsets(text)
            .into_iter()
            .map(|(token, range)| (token, &text[range]))
            .collect();
        let want = [
            ("cafe", "Café"),
            ("wn70", "WN70"),
            ("rxe", "rxe"),
            ("麻婆", "麻婆"),
            ("婆豆", "婆豆"),
            ("豆腐", "豆腐"),
        ];
        let want: Vec<(String, &str)> = want.iter().map(|(t, s)| (t.to_string(), *s)).collect();
        assert_eq!(got, want);
        let decomposed = "cafe\u{301} x";
        assert_eq!(tokens_with_offsets(decomposed)[0].1, 0..6);
    }

    #[test]
    fn every_offset_slice_tokenizes_back_to_its_token() {
        let text = "Running the Café at 10.0.4.12 — 東京タワー, 한국어, ｶﾞｽ; \
                    NB-7726041 cafe\u{301}s ＡＢ１ 🚗 DP-4418-K\n";
        for (token, range) in tokens_with_offsets(text) {
            assert!(text.is_char_boundary(range.start) && text.is_char_boundary(range.end));
            assert_eq!(tokenize(&text[range.clone()]), vec![token.clone()], "{range:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn offsets_hold_for_arbitrary_mixed_text(
            text in "[a-zA-Z0-9 .,'\\-_éÉüßİ\u{301}麻婆豆腐東京カタガか\u{3099}ｶﾞ한국어🚗]{0,60}"
        ) {
            let mut last_start = 0;
            for (token, range) in tokens_with_offsets(&text) {
                proptest::prop_assert!(text.is_char_boundary(range.start));
                proptest::prop_assert!(text.is_char_boundary(range.end));
                proptest::prop_assert!(range.start < range.end && range.end <= text.len());
                // Bigrams overlap, but tokens never start before their predecessor.
                proptest::prop_assert!(range.start >= last_start);
                last_start = range.start;
                proptest::prop_assert_eq!(tokenize(&text[range]), vec![token]);
            }
        }
    }

    #[test]
    fn long_input_is_linear() {
        let unit = "Payment NB-7726041 received 麻婆豆腐 café ";
        let text = unit.repeat(50_000);
        let started = std::time::Instant::now();
        let tokens = tokenize(&text);
        assert_eq!(tokens.len(), 50_000 * 8);
        // Generous even for an unoptimised build; a quadratic pass would take minutes.
        assert!(started.elapsed().as_secs() < 20);
        let one_word = "b".repeat(2_000_000);
        assert_eq!(tokenize(&one_word), Vec::<String>::new());
    }

    /// `word`'s token as the analyzer made it before stems were remembered.
    fn uncached(word: &str) -> Option<String> {
        let stem = Stemmer::create(Algorithm::English).stem(word).into_owned();
        (!is_stop_word(word) && !is_stop_word(&stem)).then_some(stem)
    }

    #[test]
    fn a_remembered_stem_is_the_stem_the_word_had_the_first_time() {
        let words = ["running", "the", "having", "invoices", "caresses", "ponies", "a", "sky"];
        let want: Vec<String> = words.iter().filter_map(|w| uncached(w)).collect();
        let text = words.join(" ");
        assert_eq!(toks(&text), want);
        assert_eq!(toks(&text), want);
    }

    #[test]
    fn stems_stay_right_after_the_cache_fills_and_starts_afresh() {
        // More distinct words than the cache holds, each seen twice, the second time after
        // the cache has started afresh for some of them.
        let word = |mut n: usize| {
            let mut w = String::from("zq");
            while n > 0 {
                w.push((b'a' + (n % 26) as u8) as char);
                n /= 26;
            }
            w.push_str("ing");
            w
        };
        let words: Vec<String> = (0..STEMS_HELD + 500).map(word).collect();
        for round in 0..2 {
            for w in words.iter().step_by(97).chain(words.iter().rev().take(600)) {
                assert_eq!(toks(w), uncached(w).into_iter().collect::<Vec<_>>(), "{w} {round}");
            }
            let all = words.join(" ");
            let want: Vec<String> = words.iter().filter_map(|w| uncached(w)).collect();
            assert_eq!(toks(&all), want);
        }
    }

    #[test]
    fn index_and_query_time_agree() {
        let doc = tokenize("Renewal of policy KE-8842071 for the running costs");
        for token in tokenize("policy ke 8842071 run") {
            assert!(doc.contains(&token), "{token}");
        }
    }
}
