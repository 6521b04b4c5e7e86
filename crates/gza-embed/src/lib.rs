//! Sentence embeddings, offline: a sentence-transformers BERT model (all-MiniLM-L6-v2 by
//! default) run by gza's own code, from a Hugging Face model folder (`config.json`,
//! `vocab.txt`, `model.safetensors`).
//!
//! The weights are mmapped (`memmap2`) and checked by the `safetensors` crate, never copied, so
//! loading costs milliseconds; the layer matrices are read from an int8 copy derived once
//! (`quant.rs`) through gza's own matrix-vector kernel (`kernel.rs`). The embedding of a text is
//! the mean of its token vectors, L2-normalised, as sentence-transformers computes it. The
//! BERT forward pass and the WordPiece tokenizer are gza's own, checked against an independent
//! implementation (scripts/reference-embed.py) by the golden tests below.

mod checksum;
mod fingerprint;
mod kernel;
mod mapped;
mod quant;
mod safetensors;
mod tokenizer;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use quant::Quantized;
use safetensors::SafeTensors;
use tokenizer::Tokenizer;

/// A model's JSON settings file larger than this is not read.
const SMALL_FILE: u64 = 1024 * 1024;

/// The model folder scripts/fetch-model installs, under the data directory.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// Why a model cannot be used; each message is one line naming the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(
        "embedding model not found at {} (no model.safetensors); run `gza model install` or set learnings.model_dir",
        .0.display()
    )]
    Missing(PathBuf),
    #[error("cannot read embedding model file {} ({reason}); check its permissions", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("embedding model file {} is corrupt ({reason}); run `gza model install --force`", path.display())]
    Corrupt { path: PathBuf, reason: String },
    /// The int8 copy is missing or failed its checks, and building one was not allowed here.
    #[error("{}", .0.as_deref().unwrap_or("the embedding model's int8 copy is not built yet; ranking by words until it is"))]
    NotDerived(Option<String>),
}

impl ModelError {
    /// A model file that could not be read: the OS refusing it (permissions, say) is
    /// [`ModelError::Unreadable`]; its content refused by gza (not UTF-8 text, too large, not a
    /// regular file) means the file is damaged, and a reinstall is what mends it
    /// ([`ModelError::Corrupt`]): a vocab.txt of bytes 0xff 0xfe said to check its permissions.
    pub fn read_failed(path: &Path, e: std::io::Error) -> ModelError {
        let path = path.to_path_buf();
        if e.raw_os_error().is_some() {
            return ModelError::Unreadable {
                path,
                reason: e.to_string(),
            };
        }
        let reason = if e.kind() == std::io::ErrorKind::InvalidData {
            "it is not UTF-8 text".to_string()
        } else {
            e.to_string()
        };
        ModelError::Corrupt { path, reason }
    }
}

/// gza's cache folder: `$XDG_CACHE_HOME/gza/models`, else `~/.cache/gza/models`.
fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("gza/models"))
}

/// Where the model folder is: `configured`, else `$GZA_MODEL_DIR`, else
/// `$XDG_DATA_HOME/gza/models/all-MiniLM-L6-v2`, else `~/.local/share/gza/models/…`.
pub fn resolve_model_dir(configured: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = configured {
        return Some(dir.to_path_buf());
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env("GZA_MODEL_DIR") {
        return Some(dir);
    }
    let data = env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join(".local/share")))?;
    Some(data.join("gza/models").join(DEFAULT_MODEL))
}

#[derive(Debug, Deserialize)]
struct BertConfig {
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f32,
    max_position_embeddings: usize,
    vocab_size: usize,
    #[serde(default)]
    hidden_act: Option<String>,
}

fn default_eps() -> f32 {
    1e-12
}

/// Where one layer's weights sit in the file; `quantized` is the index of its first matrix
/// (q, k, v, attention output, up, down) in the int8 copy.
struct Layer {
    quantized: usize,
    q: (usize, usize),
    k: (usize, usize),
    v: (usize, usize),
    attn_out: (usize, usize),
    attn_norm: (usize, usize),
    up: (usize, usize),
    down: (usize, usize),
    out_norm: (usize, usize),
}

/// A loaded sentence-embedding model.
pub struct Embedder {
    weights: SafeTensors,
    tokenizer: Tokenizer,
    config: BertConfig,
    max_tokens: usize,
    word: usize,
    position: usize,
    token_type: usize,
    embed_norm: (usize, usize),
    layers: Vec<Layer>,
    /// The int8 copy of the layer matrices, unless exact f32 arithmetic was asked for.
    quantized: Option<Quantized>,
    /// What was wrong with a derived file and what was done, when something was.
    notice: Option<String>,
    fingerprint: String,
}

fn exact_asked() -> bool {
    std::env::var("GZA_EMBED_EXACT").is_ok_and(|v| v == "1")
}

impl Embedder {
    /// Load a sentence-transformers BERT folder (with int8 layer matrices, unless
    /// `GZA_EMBED_EXACT=1` asks for f32 arithmetic throughout), building the int8 copy when
    /// there is no valid one.
    pub fn load(dir: &Path) -> Result<Embedder, ModelError> {
        Self::load_with(dir, exact_asked(), true)
    }

    /// Load for a Claude Code hook: never derive the int8 copy here (that reads the 42 MB of f32
    /// weights: more than a hook's budget). Without a valid copy the answer is
    /// [`ModelError::NotDerived`], and the caller ranks by words meanwhile.
    pub fn load_prepared(dir: &Path) -> Result<Embedder, ModelError> {
        let exact = exact_asked();
        let e = Self::load_with(dir, exact, false)?;
        if !exact && e.quantized.is_none() {
            return Err(ModelError::NotDerived(e.notice));
        }
        Ok(e)
    }

    /// What loading found wrong with the model's derived files and did about it (one line),
    /// for the caller to show or log once.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// Load a model folder; `exact` keeps every matrix in f32; `build` allows deriving the
    /// int8 copy when no valid one is found.
    pub fn load_with(dir: &Path, exact: bool, build: bool) -> Result<Embedder, ModelError> {
        let weights_path = dir.join("model.safetensors");
        if !weights_path.is_file() {
            return Err(ModelError::Missing(dir.to_path_buf()));
        }
        let config_path = dir.join("config.json");
        let config: BertConfig = read_json(&config_path)?;
        let corrupt = |path: &Path, reason: String| ModelError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        if let Some(act) = config.hidden_act.as_deref()
            && act != "gelu"
        {
            return Err(corrupt(
                &config_path,
                format!("hidden_act {act:?} is not supported, only gelu"),
            ));
        }
        let h = config.hidden_size;
        if h == 0
            || config.num_attention_heads == 0
            || !h.is_multiple_of(config.num_attention_heads)
        {
            return Err(corrupt(
                &config_path,
                "hidden_size is not a multiple of num_attention_heads".into(),
            ));
        }
        let max_tokens = mapped::read_text(&dir.join("sentence_bert_config.json"), SMALL_FILE)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["max_seq_length"].as_u64())
            .map_or(256, |n| n as usize)
            .min(config.max_position_embeddings);
        let lowercase = mapped::read_text(&dir.join("tokenizer_config.json"), SMALL_FILE)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["do_lower_case"].as_bool())
            .unwrap_or(true);
        let tokenizer = Tokenizer::load(&dir.join("vocab.txt"), lowercase)?;
        if tokenizer.vocab_len() > config.vocab_size {
            return Err(corrupt(
                &dir.join("vocab.txt"),
                "it has more tokens than config.json's vocab_size".into(),
            ));
        }
        let mut w = SafeTensors::open(&weights_path)?;
        let prefix = if w.has("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        let i = config.intermediate_size;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("{prefix}encoder.layer.{l}");
            layers.push(Layer {
                quantized: l * 6,
                q: linear(&mut w, &format!("{p}.attention.self.query"), h, h)?,
                k: linear(&mut w, &format!("{p}.attention.self.key"), h, h)?,
                v: linear(&mut w, &format!("{p}.attention.self.value"), h, h)?,
                attn_out: linear(&mut w, &format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: linear(&mut w, &format!("{p}.attention.output.LayerNorm"), h, 0)?,
                up: linear(&mut w, &format!("{p}.intermediate.dense"), i, h)?,
                down: linear(&mut w, &format!("{p}.output.dense"), h, i)?,
                out_norm: linear(&mut w, &format!("{p}.output.LayerNorm"), h, 0)?,
            });
        }
        let e = format!("{prefix}embeddings");
        let word = w.tensor(
            &format!("{e}.word_embeddings.weight"),
            &[config.vocab_size, h],
        )?;
        let position = w.tensor(
            &format!("{e}.position_embeddings.weight"),
            &[config.max_position_embeddings, h],
        )?;
        let token_type = w.tensor(&format!("{e}.token_type_embeddings.weight"), &[0, h])?;
        let embed_norm = linear(&mut w, &format!("{e}.LayerNorm"), h, 0)?;
        let name = dir
            .file_name()
            .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
        // The weights' content fingerprint: cached while the file is unchanged, else hashed
        // here (once), except where no model work beyond a query is allowed (a hook).
        let (file, bytes) = w.file();
        let Some(fingerprint) = fingerprint::of_weights(dir, file, bytes, build) else {
            return Err(ModelError::NotDerived(None));
        };
        let weights = quant::Weights { fingerprint };
        let loaded = (!exact).then(|| {
            let mut sources = Vec::with_capacity(layers.len() * 6);
            for l in &layers {
                for (weight, bias) in [l.q, l.k, l.v, l.attn_out, l.up, l.down] {
                    let values = w.get(weight);
                    let rows = w.get(bias).len();
                    sources.push((values, rows, values.len() / rows));
                }
            }
            let mut paths = vec![dir.join(".gza-int8-v3.bin")];
            if let Some(c) = cache_dir() {
                paths.push(c.join(format!("{name}-{fingerprint:016x}.int8")));
            }
            Quantized::load_or_build(&paths, weights, &sources, build)
        });
        let (quantized, notice) = match loaded {
            Some(l) => (l.quantized, l.notice),
            None => (None, None),
        };
        Ok(Embedder {
            quantized,
            notice,
            word,
            position,
            token_type,
            embed_norm,
            fingerprint: format!("{name}:{fingerprint:016x}"),
            weights: w,
            tokenizer,
            config,
            max_tokens,
            layers,
        })
    }

    /// The vectors' length.
    pub fn dim(&self) -> usize {
        self.config.hidden_size
    }

    /// A short id of these weights (the folder's name and a hash of the weights file's
    /// content): stored vectors made by other weights are not used.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The L2-normalised sentence embedding of `text` (all zeros for blank text), from at most
    /// the model's maximum number of tokens.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_prefix(text, self.max_tokens)
    }

    /// Whether all of `text` is within `max_tokens` tokens (and the model's limit), so that
    /// [`Embedder::embed_prefix`] reads the whole of it, not only its start.
    pub fn fits(&self, text: &str, max_tokens: usize) -> bool {
        let limit = max_tokens.min(self.max_tokens);
        self.tokenizer.encode(text, limit + 1).len() <= limit
    }

    /// How many tokens [`Embedder::embed_prefix`] reads of `text` with `max_tokens`.
    pub fn tokens(&self, text: &str, max_tokens: usize) -> usize {
        self.tokenizer
            .encode(text, max_tokens.min(self.max_tokens))
            .len()
    }

    /// The embedding of the start of `text`: at most `max_tokens` tokens (and the model's limit).
    /// Time grows with the tokens, so a long query is embedded by its start.
    pub fn embed_prefix(&self, text: &str, max_tokens: usize) -> Vec<f32> {
        let h = self.dim();
        if text.trim().is_empty() {
            return vec![0.0; h];
        }
        let ids = self.tokenizer.encode(text, max_tokens.min(self.max_tokens));
        let n = ids.len();
        let w = |i: usize| self.weights.get(i);
        // Embeddings: word + position + token type 0, then LayerNorm.
        let mut x = vec![0f32; n * h];
        let (word, pos, tt) = (w(self.word), w(self.position), w(self.token_type));
        for (t, &id) in ids.iter().enumerate() {
            let row = &mut x[t * h..(t + 1) * h];
            let id = (id as usize).min(self.config.vocab_size - 1);
            for j in 0..h {
                row[j] = word[id * h + j] + pos[t * h + j] + tt[j];
            }
        }
        self.layer_norm(&mut x, self.embed_norm);
        let heads = self.config.num_attention_heads;
        let d = h / heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut q = vec![0f32; n * h];
        let mut k = vec![0f32; n * h];
        let mut v = vec![0f32; n * h];
        let mut ctx = vec![0f32; n * h];
        let mut tmp = vec![0f32; n * h];
        let mut up = vec![0f32; n * self.config.intermediate_size];
        let mut scores = vec![0f32; n];
        for layer in &self.layers {
            let m = layer.quantized;
            self.linear(&x, n, layer.q, m, &mut q);
            self.linear(&x, n, layer.k, m + 1, &mut k);
            self.linear(&x, n, layer.v, m + 2, &mut v);
            for head in 0..heads {
                let off = head * d;
                for i in 0..n {
                    let qi = &q[i * h + off..i * h + off + d];
                    let mut max = f32::NEG_INFINITY;
                    for (j, s) in scores.iter_mut().enumerate() {
                        let kj = &k[j * h + off..j * h + off + d];
                        *s = qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale;
                        max = max.max(*s);
                    }
                    let mut sum = 0.0;
                    for s in scores.iter_mut() {
                        *s = (*s - max).exp();
                        sum += *s;
                    }
                    let out = &mut ctx[i * h + off..i * h + off + d];
                    out.fill(0.0);
                    for (j, s) in scores.iter().enumerate() {
                        let p = s / sum;
                        let vj = &v[j * h + off..j * h + off + d];
                        for (o, vv) in out.iter_mut().zip(vj) {
                            *o += p * vv;
                        }
                    }
                }
            }
            self.linear(&ctx, n, layer.attn_out, m + 3, &mut tmp);
            for (a, b) in x.iter_mut().zip(&tmp) {
                *a += b;
            }
            self.layer_norm(&mut x, layer.attn_norm);
            self.linear(&x, n, layer.up, m + 4, &mut up);
            for u in up.iter_mut() {
                *u = gelu(*u);
            }
            self.linear(&up, n, layer.down, m + 5, &mut tmp);
            for (a, b) in x.iter_mut().zip(&tmp) {
                *a += b;
            }
            self.layer_norm(&mut x, layer.out_norm);
        }
        // Mean over tokens, then unit length.
        let mut pooled = vec![0f32; h];
        for t in 0..n {
            for (p, v) in pooled.iter_mut().zip(&x[t * h..(t + 1) * h]) {
                *p += v;
            }
        }
        let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            pooled.iter_mut().for_each(|v| *v /= norm);
        }
        pooled
    }

    /// `out[n × rows] = input[n × cols] · Wᵀ + b`, W stored `[rows × cols]` as PyTorch keeps it.
    /// A query is a few dozen tokens, so each weight row is read once and dotted with every
    /// token (held in L1), rather than packed for a general matrix product.
    fn linear(
        &self,
        input: &[f32],
        n: usize,
        (weight, bias): (usize, usize),
        quantized: usize,
        out: &mut [f32],
    ) {
        let b = self.weights.get(bias);
        match &self.quantized {
            Some(q) => {
                let m = &q.matrices[quantized];
                kernel::linear(input, n, m.cols, q.data(m), Some(q.scales(m)), b, out);
            }
            None => {
                let w = self.weights.get(weight);
                kernel::linear(input, n, w.len() / b.len(), w, None, b, out);
            }
        }
    }

    fn layer_norm(&self, x: &mut [f32], (gamma, beta): (usize, usize)) {
        let g = self.weights.get(gamma);
        let b = self.weights.get(beta);
        let h = g.len();
        let eps = self.config.layer_norm_eps;
        for row in x.chunks_mut(h) {
            let mean = row.iter().sum::<f32>() / h as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(g).zip(b) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

/// A linear layer's (or, with `cols` 0, a LayerNorm's) weight and bias handles.
fn linear(
    w: &mut SafeTensors,
    name: &str,
    rows: usize,
    cols: usize,
) -> Result<(usize, usize), ModelError> {
    let shape: &[usize] = if cols == 0 { &[rows] } else { &[rows, cols] };
    Ok((
        w.tensor(&format!("{name}.weight"), shape)?,
        w.tensor(&format!("{name}.bias"), &[rows])?,
    ))
}

/// BERT's exact GELU: x · Φ(x).
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// The error function (Abramowitz and Stegun 7.1.26 refined; |error| < 1.5e-7).
fn erf(x: f32) -> f32 {
    let x = f64::from(x);
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    (sign * y) as f32
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ModelError> {
    let text = mapped::read_text(path, SMALL_FILE).map_err(|e| ModelError::read_failed(path, e))?;
    serde_json::from_str(&text).map_err(|e| ModelError::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_gelu_match_known_values() {
        assert!((erf(0.5) - 0.520_499_9).abs() < 1e-6);
        assert!((erf(-1.0) + 0.842_700_8).abs() < 1e-6);
        assert!((gelu(1.0) - 0.841_344_7).abs() < 1e-5);
        assert_eq!(gelu(0.0), 0.0);
    }

    /// The installed model (scripts/fetch-model); its absence fails the test.
    fn model_dir() -> PathBuf {
        let dir = resolve_model_dir(None).expect("HOME is set");
        assert!(
            dir.join("model.safetensors").is_file(),
            "the embedding model is not at {}; run scripts/fetch-model",
            dir.display()
        );
        dir
    }

    /// Sentences and the first 8 values of their embeddings, from scripts/reference-embed.py
    /// (an independent numpy implementation of the same model and tokenizer).
    const REFERENCE: [(&str, [f32; 8]); 4] = [
        (
            "Run cargo sqlx prepare after changing any SQL query",
            [
                0.033414, -0.048641, 0.021243, 0.094519, -0.0795, -0.008906, 0.025465, -0.001128,
            ],
        ),
        (
            "Café naïve résumé — déjà vu!",
            [
                -0.06831, -0.014997, 0.049152, 0.044147, 0.078054, 0.054963, -0.056174, -0.051981,
            ],
        ),
        (
            "fn main() { println!(\"{}\", x_y.z); } // src/db/invoiceRepo.rs",
            [
                -0.070412, 0.08477, -0.102778, -0.004968, -0.126986, -0.018406, -0.029418, 0.09867,
            ],
        ),
        (
            "好 世界 mixed 東京 text",
            [
                0.059826, 0.112857, 0.079067, -0.080806, 0.007682, 0.015453, 0.04996, -0.048833,
            ],
        ),
    ];

    #[test]
    fn matches_the_reference_implementation_and_int8_stays_close() {
        let dir = model_dir();
        let exact = Embedder::load_with(&dir, true, true).unwrap();
        let fast = Embedder::load_with(&dir, false, true).unwrap();
        assert_eq!(exact.dim(), 384);
        assert_eq!(exact.fingerprint(), fast.fingerprint());
        for (text, want) in REFERENCE {
            let e = exact.embed(text);
            for (got, want) in e.iter().zip(want) {
                assert!((got - want).abs() < 1e-4, "{text}: {got} vs {want}");
            }
            let norm: f32 = e.iter().map(|v| v * v).sum();
            assert!((norm - 1.0).abs() < 1e-4);
            let q = fast.embed(text);
            let cos: f32 = e.iter().zip(&q).map(|(a, b)| a * b).sum();
            assert!(cos > 0.998, "{text}: int8 drifted to cosine {cos}");
        }
        assert!(fast.embed("   ").iter().all(|v| *v == 0.0));
        // A megabyte of text is cut at the model's 256 tokens, not read to its end.
        let long = "word ".repeat(200_000);
        let t = std::time::Instant::now();
        assert_eq!(fast.embed(&long).len(), 384);
        assert!(t.elapsed().as_secs() < 5);
    }

    #[test]
    fn missing_and_broken_folders_are_one_line_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = Embedder::load(dir.path()).err().unwrap().to_string();
        assert!(e.starts_with("embedding model not found at"), "{e}");
        std::fs::write(dir.path().join("model.safetensors"), b"x").unwrap();
        std::fs::write(dir.path().join("config.json"), b"{not json").unwrap();
        let e = Embedder::load(dir.path()).err().unwrap().to_string();
        assert!(e.contains("config.json is corrupt"), "{e}");
        assert!(!e.contains('\n'));
    }
}
