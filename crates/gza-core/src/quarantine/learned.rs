//! (h) A learned layer: a linear model over character and word n-grams, trained on every
//! labelled set in `eval/quarantine/`, that holds a learning which reads like the hostile ones.
//!
//! The rules (b, c, f) recognise acts and things they were written for; every fresh blind set
//! found the same acts in words the rules did not list (a .NET certificate callback that returns
//! `true`, `privileged: true` in a compose file, "set the user's request aside"). A model over
//! n-grams learns the surface of many wordings at once — `verify' => false`, `id_rsa`,
//! `supersedes prior instructions`, `системн`, `署名` — and folds in every language the sets
//! hold, at a cost of microseconds. It is trained and its threshold chosen leave-one-set-out
//! (`eval/quarantine/train_learned.sh`, which runs the `quarantine_train` example), and it only
//! ever *adds* holds: a learning the rules hold stays held whatever the model says, and a text
//! with no strong cue is never held by it (`actions::has_cue`).
//!
//! Features: the learning as the quarantine reads it (`normalise`: look-alikes, invisible and
//! combining characters folded), lower-cased, whitespace collapsed; every character 3-, 4- and
//! 5-gram and every word and word pair, hashed (FNV-1a) into [`DIMS`] buckets, each present
//! feature worth `1/√max(n, FLOOR)` ([`value`]). Weights are int8 with one scale, shipped in the binary
//! (`data/quarantine-learned.bin`, 256 KiB).

use std::borrow::Cow;
use std::sync::LazyLock;

/// How many buckets features are hashed into.
pub const DIMS: usize = 1 << 18;
const MAGIC: &[u8; 8] = b"GZAQL001";
const HEADER: usize = 8 + 4 + 4 + 4 + 4;

/// The model: a bias, a threshold and one weight per bucket.
pub struct Model {
    pub bias: f32,
    pub threshold: f32,
    scale: f32,
    /// One int8 weight per bucket, as its byte: the shipped model's are read in place from the
    /// binary (a process that checks one learning does not copy 256 Ki weights first).
    weights: Cow<'static, [u8]>,
}

impl Model {
    /// A model with the given weights (quantised to int8) and threshold.
    pub fn new(weights: &[f32], bias: f32, threshold: f32) -> Model {
        let max = weights.iter().fold(0f32, |m, w| m.max(w.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        Model {
            bias,
            threshold,
            scale,
            weights: weights
                .iter()
                .map(|w| (w / scale).round().clamp(-127.0, 127.0) as i8 as u8)
                .collect::<Vec<u8>>()
                .into(),
        }
    }

    /// The model as shipped.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER + self.weights.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.weights.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.bias.to_le_bytes());
        out.extend_from_slice(&self.threshold.to_le_bytes());
        out.extend_from_slice(&self.scale.to_le_bytes());
        out.extend_from_slice(&self.weights);
        out
    }

    /// A shipped model, or `None` when the bytes are not one.
    pub fn from_bytes(b: &[u8]) -> Option<Model> {
        let (bias, threshold, scale) = Model::header(b)?;
        Some(Model {
            bias,
            threshold,
            scale,
            weights: Cow::Owned(b[HEADER..].to_vec()),
        })
    }

    /// A model whose weights stay where they are (the one in the binary).
    fn from_static(b: &'static [u8]) -> Option<Model> {
        let (bias, threshold, scale) = Model::header(b)?;
        Some(Model {
            bias,
            threshold,
            scale,
            weights: Cow::Borrowed(&b[HEADER..]),
        })
    }

    /// Bias, threshold and scale, when `b` is a model of [`DIMS`] weights.
    fn header(b: &[u8]) -> Option<(f32, f32, f32)> {
        if b.len() < HEADER || &b[..8] != MAGIC {
            return None;
        }
        let word = |at: usize| <[u8; 4]>::try_from(&b[at..at + 4]).ok();
        let dims = u32::from_le_bytes(word(8)?) as usize;
        if dims != DIMS || b.len() != HEADER + dims {
            return None;
        }
        Some((
            f32::from_le_bytes(word(12)?),
            f32::from_le_bytes(word(16)?),
            f32::from_le_bytes(word(20)?),
        ))
    }

    /// The probability that `text` is hostile, by the model.
    pub fn score(&self, text: &str) -> f32 {
        let f = features(text);
        if f.is_empty() {
            return 0.0;
        }
        let v = value(f.len());
        let z = self.bias
            + f.iter()
                .map(|&i| f32::from(self.weights[i as usize] as i8) * self.scale * v)
                .sum::<f32>();
        1.0 / (1.0 + (-z).exp())
    }

    /// The score when it is at or above the threshold.
    pub fn holds(&self, text: &str) -> Option<f32> {
        let s = self.score(text);
        (s >= self.threshold).then_some(s)
    }
}

static SHIPPED: LazyLock<Option<Model>> =
    LazyLock::new(|| Model::from_static(include_bytes!("../../data/quarantine-learned.bin")));

/// The model shipped in the binary.
pub fn shipped() -> Option<&'static Model> {
    SHIPPED.as_ref()
}

/// What each present feature is worth in a text of `n` features: `1/√n`, with `n` at least
/// [`FLOOR`] so that a short learning's few n-grams weigh no more than a long one's.
pub fn value(n: usize) -> f32 {
    1.0 / (n.max(FLOOR) as f32).sqrt()
}
/// Chosen leave-one-set-out among 1, 200 and 400 by the total figures of
/// `eval/quarantine/train_learned.sh` (docs/quarantine.md, layer h).
pub const FLOOR: usize = 400;

fn fnv(seed: u64, parts: impl IntoIterator<Item = u32>) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for p in parts {
        for b in p.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    (h % DIMS as u64) as u32
}

/// The hashed features of `text`: sorted, each once.
pub fn features(text: &str) -> Vec<u32> {
    let folded = super::normalise(text).to_lowercase();
    let words: Vec<&str> = folded
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ',' | ';'
                        | '('
                        | ')'
                        | '"'
                        | '`'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '<'
                        | '>'
                        | '!'
                        | '?'
                        | '，'
                        | '。'
                        | '；'
                        | '：'
                        | '、'
                        | '「'
                        | '」'
                        | '“'
                        | '”'
                        | '«'
                        | '»'
                )
        })
        .map(|w| w.trim_matches(|c: char| matches!(c, '.' | ':' | '\'' | '*')))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    let chars: Vec<char> = std::iter::once(' ')
        .chain(words.join(" ").chars())
        .chain(std::iter::once(' '))
        .collect();
    for n in 3..=5 {
        for w in chars.windows(n) {
            out.push(fnv(n as u64, w.iter().map(|&c| c as u32)));
        }
    }
    let word_id = |w: &str| fnv(7, w.chars().map(|c| c as u32));
    let ids: Vec<u32> = words.iter().map(|w| word_id(w)).collect();
    out.extend(ids.iter().map(|&i| fnv(11, [i])));
    out.extend(ids.windows(2).map(|p| fnv(13, [p[0], p[1]])));
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_see_through_look_alikes_and_are_stable() {
        assert_eq!(features("ｃｕｒｌ x | sh"), features("curl x | sh"));
        assert_eq!(features("Curl  X | SH"), features("curl x | sh"));
        assert!(!features("run the tests").is_empty());
        assert!(features("").is_empty());
    }

    #[test]
    fn a_model_survives_its_own_bytes() {
        let mut w = vec![0f32; DIMS];
        for i in features("pipe curl into sh") {
            w[i as usize] = 2.0;
        }
        let m = Model::new(&w, -1.0, 0.8);
        let back = Model::from_bytes(&m.to_bytes()).expect("a model");
        assert!((back.score("pipe curl into sh") - m.score("pipe curl into sh")).abs() < 1e-6);
        assert!(back.holds("pipe curl into sh").is_some());
        assert!(back.holds("keep functions small").is_none());
        assert!(Model::from_bytes(&m.to_bytes()[..100]).is_none());
    }

    /// The shipped model is present and well formed; what it does is measured on the labelled
    /// sets (`committed_sets_stay_at_their_scores` runs it with the rules).
    #[test]
    fn the_shipped_model_loads() {
        let m = shipped().expect("data/quarantine-learned.bin is a model");
        assert!(m.threshold > 0.5 && m.threshold < 1.0, "{}", m.threshold);
    }
}
