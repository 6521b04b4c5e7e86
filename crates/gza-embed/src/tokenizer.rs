//! BERT's tokenizer, as Hugging Face's `BertTokenizer` does it: clean the text, split CJK
//! characters, lowercase and strip accents, split punctuation, then WordPiece.

use std::path::Path;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::ModelError;

/// Words longer than this many characters become `[UNK]`, as in BERT.
const MAX_WORD_CHARS: usize = 100;

/// A vocabulary without one of the special tokens BERT needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the vocabulary has no {0}")]
pub struct MissingToken(pub &'static str);

/// Token to id: an open-addressing table of indexes into the vocabulary's own text, built at
/// every load (every hook that embeds a query). A `HashMap<String, u32>` made 30,522 strings
/// of their own and hashed them as it grew: a tenth of a hook's CPU. Here the file's text is
/// kept whole and each token is a range of it. FxHash, not SipHash: the keys come from the
/// model folder, not from an attacker who could make them collide. As in a map built from the
/// lines in order, a token listed twice has the id of its last line.
pub struct Vocab {
    text: String,
    /// (start, end, id) of each distinct token.
    entries: Vec<(u32, u32, u32)>,
    /// Entry index + 1, or 0 for an empty slot; the length is a power of two.
    slots: Vec<u32>,
}

impl Vocab {
    /// One token a line (its line number is its id).
    fn from_lines(text: String) -> Vocab {
        let lines = text.bytes().filter(|b| *b == b'\n').count() + 1;
        let mut v = Vocab::with_capacity(String::new(), lines);
        let base = text.as_ptr() as usize;
        let mut ranges = Vec::with_capacity(lines);
        for (i, line) in text.lines().enumerate() {
            let start = line.as_ptr() as usize - base;
            ranges.push((start, start + line.len(), i as u32));
        }
        v.text = text;
        for (start, end, id) in ranges {
            v.insert(start, end, id);
        }
        v
    }

    fn with_capacity(text: String, n: usize) -> Vocab {
        Vocab {
            text,
            entries: Vec::with_capacity(n),
            slots: vec![0; (n * 2).next_power_of_two().max(16)],
        }
    }

    fn slot_of(&self, key: &str) -> usize {
        use std::hash::BuildHasher;
        rustc_hash::FxBuildHasher.hash_one(key) as usize & (self.slots.len() - 1)
    }

    fn insert(&mut self, start: usize, end: usize, id: u32) {
        let mut at = self.slot_of(&self.text[start..end]);
        loop {
            match self.slots[at] {
                0 => {
                    self.entries.push((start as u32, end as u32, id));
                    self.slots[at] = self.entries.len() as u32;
                    if self.entries.len() * 2 > self.slots.len() {
                        self.grow();
                    }
                    return;
                }
                e => {
                    let (s, t, _) = self.entries[e as usize - 1];
                    if self.text[s as usize..t as usize] == self.text[start..end] {
                        self.entries[e as usize - 1].2 = id;
                        return;
                    }
                }
            }
            at = (at + 1) & (self.slots.len() - 1);
        }
    }

    fn grow(&mut self) {
        self.slots = vec![0; self.slots.len() * 2];
        for (i, &(s, t, _)) in self.entries.iter().enumerate() {
            let mut at = self.slot_of(&self.text[s as usize..t as usize]);
            while self.slots[at] != 0 {
                at = (at + 1) & (self.slots.len() - 1);
            }
            self.slots[at] = i as u32 + 1;
        }
    }

    pub fn get(&self, key: &str) -> Option<&u32> {
        let mut at = self.slot_of(key);
        loop {
            match self.slots[at] {
                0 => return None,
                e => {
                    let (s, t, id) = &self.entries[e as usize - 1];
                    if &self.text[*s as usize..*t as usize] == key {
                        return Some(id);
                    }
                }
            }
            at = (at + 1) & (self.slots.len() - 1);
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

impl FromIterator<(String, u32)> for Vocab {
    fn from_iter<I: IntoIterator<Item = (String, u32)>>(pairs: I) -> Vocab {
        let mut v = Vocab::with_capacity(String::new(), 16);
        for (token, id) in pairs {
            let start = v.text.len();
            v.text.push_str(&token);
            v.insert(start, v.text.len(), id);
        }
        v
    }
}

/// A WordPiece vocabulary and the special tokens' ids.
pub struct Tokenizer {
    vocab: Vocab,
    lowercase: bool,
    pub cls: u32,
    pub sep: u32,
    unk: u32,
}

impl Tokenizer {
    /// Read `vocab.txt` (one token a line; its line number is its id).
    pub fn load(vocab_path: &Path, lowercase: bool) -> Result<Tokenizer, ModelError> {
        let text = super::mapped::read_text(vocab_path, 64 * 1024 * 1024)
            .map_err(|e| ModelError::read_failed(vocab_path, e))?;
        let vocab = Vocab::from_lines(text);
        Tokenizer::new(vocab, lowercase).map_err(|e| ModelError::Corrupt {
            path: vocab_path.to_path_buf(),
            reason: e.to_string(),
        })
    }

    pub fn new(vocab: Vocab, lowercase: bool) -> Result<Tokenizer, MissingToken> {
        let id = |t: &'static str| vocab.get(t).copied().ok_or(MissingToken(t));
        Ok(Tokenizer {
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            unk: id("[UNK]")?,
            lowercase,
            vocab,
        })
    }

    pub fn vocab_len(&self) -> usize {
        self.vocab.len()
    }

    /// `[CLS] tokens… [SEP]`, at most `max_len` ids in all; stops reading the text once full.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let room = max_len.saturating_sub(2);
        let mut ids = vec![self.cls];
        let mut word = String::new();
        let flush = |word: &mut String, ids: &mut Vec<u32>| {
            if !word.is_empty() {
                self.wordpiece(word, ids);
                word.clear();
            }
        };
        for c in text.chars() {
            if ids.len() > room {
                break;
            }
            if c == '\0' || c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
                continue;
            }
            if c.is_whitespace() {
                flush(&mut word, &mut ids);
            } else if is_cjk(c) || is_punctuation(c) {
                flush(&mut word, &mut ids);
                word.push(c);
                flush(&mut word, &mut ids);
            } else if self.lowercase {
                // Lowercase, then drop the accents NFD splits off.
                for l in c.to_lowercase() {
                    for d in std::iter::once(l).nfd() {
                        if !is_combining_mark(d) {
                            word.push(d);
                        }
                    }
                }
            } else {
                word.push(c);
            }
        }
        flush(&mut word, &mut ids);
        ids.truncate(room + 1);
        ids.push(self.sep);
        ids
    }

    /// Greedy longest-match-first WordPiece; a word with no full split is `[UNK]`.
    fn wordpiece(&self, word: &str, ids: &mut Vec<u32>) {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            ids.push(self.unk);
            return;
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut candidate = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                let from = chars[start].0;
                let to = chars.get(end).map_or(word.len(), |c| c.0);
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[from..to]);
                if let Some(&id) = self.vocab.get(candidate.as_str()) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => pieces.push(id),
                None => {
                    ids.push(self.unk);
                    return;
                }
            }
            start = end;
        }
        ids.extend(pieces);
    }
}

/// CJK ideographs are split into single characters, as BERT does.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// BERT's punctuation: every non-alphanumeric ASCII symbol, and Unicode punctuation.
fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    matches!(c as u32,
        0x00A1 | 0x00A7 | 0x00AB | 0x00B6 | 0x00B7 | 0x00BB | 0x00BF | 0x037E | 0x0387
        | 0x055A..=0x055F | 0x0589 | 0x05BE | 0x05C0 | 0x05C3 | 0x05C6 | 0x05F3 | 0x05F4
        | 0x060C | 0x060D | 0x061B | 0x061F | 0x066A..=0x066D | 0x06D4
        | 0x2010..=0x2027 | 0x2030..=0x2043 | 0x2045..=0x2051 | 0x2053..=0x205E
        | 0x207D | 0x207E | 0x208D | 0x208E | 0x2308..=0x230B | 0x2329 | 0x232A
        | 0x2768..=0x2775 | 0x27C5 | 0x27C6 | 0x27E6..=0x27EF | 0x2983..=0x2998
        | 0x29D8..=0x29DB | 0x29FC | 0x29FD | 0x2CF9..=0x2CFC | 0x2CFE | 0x2CFF
        | 0x2E00..=0x2E2E | 0x2E30..=0x2E4F | 0x3001..=0x3003 | 0x3008..=0x3011
        | 0x3014..=0x301F | 0x3030 | 0x303D | 0x30A0 | 0x30FB | 0xFE10..=0xFE19
        | 0xFE30..=0xFE52 | 0xFE54..=0xFE61 | 0xFE63 | 0xFE68 | 0xFE6A | 0xFE6B
        | 0xFF01..=0xFF03 | 0xFF05..=0xFF0A | 0xFF0C..=0xFF0F | 0xFF1A | 0xFF1B
        | 0xFF1F | 0xFF20 | 0xFF3B..=0xFF3D | 0xFF3F | 0xFF5B | 0xFF5D | 0xFF5F..=0xFF65)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Tokenizer {
        let words = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "run", "cargo", "sq", "##lx", "prepare", ".",
            "cafe", "un", "##aff", "##able", "好", "`", "-",
        ];
        Tokenizer::new(
            words
                .iter()
                .enumerate()
                .map(|(i, w)| (w.to_string(), i as u32))
                .collect(),
            true,
        )
        .unwrap()
    }

    #[test]
    fn the_vocabulary_table_answers_as_a_map_of_its_lines_would() {
        let lines: Vec<String> = (0..5000).map(|i| format!("w{i}")).collect();
        let text = format!("{}\nw7\n\n##x\r\nlast", lines.join("\n"));
        let v = Vocab::from_lines(text.clone());
        let map: std::collections::HashMap<&str, u32> = text
            .lines()
            .enumerate()
            .map(|(i, t)| (t, i as u32))
            .collect();
        assert_eq!(v.len(), map.len());
        for (t, id) in &map {
            assert_eq!(v.get(t), Some(id), "{t:?}");
        }
        assert_eq!(
            v.get("w7"),
            Some(&5000),
            "a token listed twice: its last line"
        );
        assert_eq!(v.get("##x"), Some(&5002));
        assert_eq!(v.get("nope"), None);
        assert_eq!(v.get("w"), None);
    }

    #[test]
    fn a_vocabulary_without_a_special_token_says_which() {
        let vocab = ["[PAD]", "[UNK]", "[CLS]", "run"]
            .iter()
            .enumerate()
            .map(|(i, w)| (w.to_string(), i as u32))
            .collect();
        let err = Tokenizer::new(vocab, true).err().expect("no [SEP]");
        assert_eq!(err, MissingToken("[SEP]"));
        assert_eq!(err.to_string(), "the vocabulary has no [SEP]");
    }

    #[test]
    fn splits_punctuation_lowercases_strips_accents_and_wordpieces() {
        let t = tiny();
        assert_eq!(
            t.encode("Run `cargo SQLX prepare`.", 64),
            vec![2, 4, 15, 5, 6, 7, 8, 15, 9, 3]
        );
        assert_eq!(t.encode("Café unaffable", 64), vec![2, 10, 11, 12, 13, 3]);
        assert_eq!(t.encode("好好 zzz", 64), vec![2, 14, 14, 1, 3]);
        assert_eq!(t.encode("run\u{0}\u{7}-run", 64), vec![2, 4, 16, 4, 3]);
        assert_eq!(t.encode("", 64), vec![2, 3]);
    }

    #[test]
    fn stops_at_the_length_limit() {
        let t = tiny();
        let long = "run ".repeat(1_000_000);
        let ids = t.encode(&long, 8);
        assert_eq!(ids, vec![2, 4, 4, 4, 4, 4, 4, 3]);
        let word = "x".repeat(200);
        assert_eq!(t.encode(&word, 8), vec![2, 1, 3]);
    }
}
