//! The embedding model's files as gza meets them (issue 19): a crafted weights file is refused
//! with one line naming it, and everything derived from the weights (the int8 copy, the stored
//! embeddings) follows the weights' content, not their shapes. The model here is a small BERT of
//! the test's own making, written in the safetensors format, so the tests need no download and
//! can change its weights freely.

use std::path::{Path, PathBuf};

use crate::support::project::TestProject;

const HIDDEN: usize = 384;
const MINUTE: std::time::Duration = std::time::Duration::from_secs(60);
const INTERMEDIATE: usize = 16;
const POSITIONS: usize = 64;
const WORDS: [&str; 24] = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "stripe",
    "webhook",
    "##s",
    "must",
    "verify",
    "the",
    "signature",
    "invoice",
    "export",
    "csv",
    "nightly",
    "job",
    "run",
    "cargo",
    "test",
    "before",
    "commit",
    "header",
    "are",
    "by",
];

/// Deterministic pseudo-random weights (xorshift), small enough for LayerNorm to stay sane.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.2
    }
}

/// A one-layer BERT's tensors: (name, shape, values).
fn tensors(seed: u64) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    let mut add = |name: &str, shape: Vec<usize>, ones: bool| {
        let n: usize = shape.iter().product();
        let values = (0..n)
            .map(|_| if ones { 1.0 } else { rng.next() })
            .collect();
        out.push((name.to_string(), shape, values));
    };
    let (h, i) = (HIDDEN, INTERMEDIATE);
    add(
        "embeddings.word_embeddings.weight",
        vec![WORDS.len(), h],
        false,
    );
    add(
        "embeddings.position_embeddings.weight",
        vec![POSITIONS, h],
        false,
    );
    add("embeddings.token_type_embeddings.weight", vec![2, h], false);
    add("embeddings.LayerNorm.weight", vec![h], true);
    add("embeddings.LayerNorm.bias", vec![h], false);
    let p = "encoder.layer.0";
    for (name, rows, cols) in [
        ("attention.self.query", h, h),
        ("attention.self.key", h, h),
        ("attention.self.value", h, h),
        ("attention.output.dense", h, h),
        ("intermediate.dense", i, h),
        ("output.dense", h, i),
    ] {
        add(&format!("{p}.{name}.weight"), vec![rows, cols], false);
        add(&format!("{p}.{name}.bias"), vec![rows], false);
    }
    for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
        add(&format!("{p}.{norm}.weight"), vec![h], true);
        add(&format!("{p}.{norm}.bias"), vec![h], false);
    }
    out
}

/// The bytes of a safetensors file holding `tensors`; `shape_of` may claim another shape for a
/// tensor than its values have (a crafted file).
fn safetensors(
    tensors: &[(String, Vec<usize>, Vec<f32>)],
    shape_of: impl Fn(&str, &[usize]) -> Vec<usize>,
) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        let start = data.len();
        for v in values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "F32", "shape": shape_of(name, shape), "data_offsets": [start, data.len()]}),
        );
    }
    let mut header = serde_json::Value::Object(header).to_string();
    while !header.len().is_multiple_of(8) {
        header.push(' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&data);
    bytes
}

/// A model folder at `dir` whose weights are drawn from `seed`.
fn write_model(dir: &Path, weights: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    let config = serde_json::json!({
        "hidden_size": HIDDEN, "num_hidden_layers": 1, "num_attention_heads": 2,
        "intermediate_size": INTERMEDIATE, "max_position_embeddings": POSITIONS,
        "vocab_size": WORDS.len(), "hidden_act": "gelu", "layer_norm_eps": 1e-12,
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    std::fs::write(dir.join("vocab.txt"), WORDS.join("\n") + "\n").unwrap();
    // A new file renamed over the old one, as model installers replace weights.
    let tmp = dir.join("model.safetensors.new");
    std::fs::write(&tmp, weights).unwrap();
    std::fs::rename(&tmp, dir.join("model.safetensors")).unwrap();
}

fn model(p: &TestProject) -> PathBuf {
    p.scratch().join("tiny-model")
}

#[test]
fn a_weights_file_whose_shape_overflows_is_refused_in_one_line_naming_it() {
    let mut p = TestProject::new();
    let dir = model(&p);
    // The header: 3,072 bytes of data (two rows of 384 f32s) claimed to be a
    // [108086391056891906, 384] tensor, whose element count times four wraps round to 3,072.
    let crafted = safetensors(&tensors(1), |name, shape| {
        if name == "embeddings.token_type_embeddings.weight" {
            vec![108_086_391_056_891_906, HIDDEN]
        } else {
            shape.to_vec()
        }
    });
    write_model(&dir, &crafted);
    p.set_env("GZA_MODEL_DIR", &dir.to_string_lossy());
    for text in [
        "Stripe webhooks must verify the signature header",
        "Invoices export as CSV by the nightly job",
        "Run cargo test before every commit",
        "Migrations are numbered and never edited once landed",
        "The staging database is reset every Monday",
    ] {
        p.ok(&["learnings", "add", text]);
    }
    let run = p.run(&["learnings", "search", "--json", "stripe webhook signature"]);
    assert_eq!(run.code, 0, "{run}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{run}");
    let weights = dir.join("model.safetensors");
    assert!(
        lines[0].contains(&weights.display().to_string())
            && lines[0].contains("is corrupt")
            && lines[0].contains("overflow"),
        "{run}"
    );
    // Searching still works, by words.
    let hits: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(hits[0]["id"], "L1", "{run}");
    assert!(hits[0]["semantic"].is_null(), "{run}");

    // A task still runs to its end, its learnings chosen by words.
    p.command_agent("echo finished\n", "");
    p.add(&["verify the stripe webhook signature"]);
    let work = p.run(&["work"]);
    assert_eq!(work.code, 0, "{work}");
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
    // A hook still answers, by words, and says nothing on stderr that a session would show.
    let prompt = serde_json::json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
        "cwd": p.root(), "prompt": "do stripe webhooks verify the signature header"});
    let mut child = p
        .command(&["hook", "user-prompt-submit"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        prompt.to_string().as_bytes(),
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("Stripe webhooks must verify"), "{stdout}");
}

/// (model, vector) of each stored embedding, by learning id.
fn stored(p: &TestProject) -> Vec<(i64, String, Vec<u8>)> {
    let db = p.db();
    let mut stmt = db
        .prepare("SELECT learning_id, model, vector FROM learning_embeddings ORDER BY learning_id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The int8 copy derived beside the model (its name carries the copy's format version).
fn int8_copy(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(".gza-int8") && name.ends_with(".bin")
        })
        .expect("the int8 copy was derived beside the model")
}

#[test]
fn other_weights_with_the_same_shapes_are_a_new_model_re_embedded_and_re_derived() {
    let mut p = TestProject::new();
    let dir = model(&p);
    let plain = |seed| safetensors(&tensors(seed), |_, s| s.to_vec());
    write_model(&dir, &plain(1));
    p.set_env("GZA_MODEL_DIR", &dir.to_string_lossy());
    for text in [
        "Stripe webhooks must verify the signature header",
        "Invoices export as CSV by the nightly job",
    ] {
        p.ok(&["learnings", "add", text]);
    }
    let before = stored(&p);
    assert_eq!(before.len(), 2, "both embedded when added");
    let copy = int8_copy(&dir);
    let copy_before = std::fs::read(&copy).unwrap();

    // A fine-tuned model: the same header, shapes and size, other values.
    let tuned = plain(2);
    assert_eq!(tuned.len(), plain(1).len());
    write_model(&dir, &tuned);
    let run = p.run(&["learnings", "search", "--json", "stripe webhook signature"]);
    assert_eq!(run.code, 0, "{run}");
    let after = stored(&p);
    assert_eq!(after.len(), 2, "{after:?}");
    for ((id, model_before, vector_before), (_, model_after, vector_after)) in
        before.iter().zip(&after)
    {
        assert_ne!(model_before, model_after, "L{id} kept the old fingerprint");
        assert_ne!(vector_before, vector_after, "L{id} kept the old vector");
    }
    let copy_after = std::fs::read(&copy).unwrap();
    assert_ne!(copy_before, copy_after, "the int8 copy was reused");
    // Only the changed file was hashed again: a second search re-embeds nothing.
    p.ok(&["learnings", "search", "--json", "invoice export"]);
    assert_eq!(stored(&p), after);
}

/// Other weights once the ranking index is built (by the background job, as any search or hook
/// asks for it): the index holds the learnings with the old model's vectors, and a search embeds
/// them with the new model within its budget, reading their rows by key, rather than ranking
/// them by words and leaving them on the old fingerprint until the job runs again.
#[test]
fn other_weights_after_the_index_is_built_are_re_embedded_by_the_next_search() {
    let mut p = TestProject::new();
    let dir = model(&p);
    let plain = |seed| safetensors(&tensors(seed), |_, s| s.to_vec());
    write_model(&dir, &plain(1));
    p.set_env("GZA_MODEL_DIR", &dir.to_string_lossy());
    for text in [
        "Stripe webhooks must verify the signature header",
        "Invoices export as CSV by the nightly job",
    ] {
        p.ok(&["learnings", "add", text]);
    }
    // The job, run here in the foreground, builds the index of what is stored (or, when a job
    // the adds started holds its lock, that one does).
    let indexed = || {
        std::fs::read_dir(p.path(".gza")).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("rank-index")
        })
    };
    let started = std::time::Instant::now();
    while !indexed() {
        assert!(started.elapsed() < MINUTE, "no job built the ranking index");
        p.ok(&["hook", "embed"]);
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let before = stored(&p);
    assert_eq!(before.len(), 2, "{before:?}");

    // No background job may run meanwhile: what is stored is what the search did.
    // (A job the adds started may still be finishing: wait for its lock.)
    let started = std::time::Instant::now();
    let _job = loop {
        match gza::learn::rank::take_job_lock(p.root()) {
            Some(lock) => break lock,
            None if started.elapsed() < MINUTE => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            None => panic!("a background job held its lock for a minute"),
        }
    };
    write_model(&dir, &plain(2));
    let run = p.run(&["learnings", "search", "--json", "stripe webhook signature"]);
    assert_eq!(run.code, 0, "{run}");
    let after = stored(&p);
    assert_eq!(after.len(), 2, "{after:?}");
    for ((id, model_before, _), (_, model_after, _)) in before.iter().zip(&after) {
        assert_ne!(model_before, model_after, "L{id} kept the old fingerprint");
    }
}

/// A damaged vocab.txt (bytes that are not UTF-8) is said to be damaged, with the reinstall that
/// mends it, as a damaged weights or config file is; it said "cannot read … check its
/// permissions", which nothing about its permissions would fix.
#[test]
fn a_vocabulary_that_is_not_utf8_is_damaged_and_reinstalled_not_a_permission_problem() {
    let mut p = TestProject::new();
    let dir = model(&p);
    write_model(&dir, &safetensors(&tensors(1), |_, shape| shape.to_vec()));
    let vocab = dir.join("vocab.txt");
    let mut bytes = std::fs::read(&vocab).unwrap();
    bytes.splice(0..0, [0xff, 0xfe]);
    std::fs::write(&vocab, bytes).unwrap();
    p.set_env("GZA_MODEL_DIR", &dir.to_string_lossy());
    p.ok(&["learnings", "add", "Run cargo test before every commit"]);
    let run = p.run(&["learnings", "search", "cargo test"]);
    assert_eq!(run.code, 0, "{run}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{run}");
    assert!(
        lines[0].contains(&format!(
            "{} is corrupt (it is not UTF-8 text)",
            vocab.display()
        )) && lines[0].contains("run `gza model install --force`"),
        "{run}"
    );
    assert!(!lines[0].contains("permissions"), "{run}");
}
