//! Dump, for trying the neighbour layer offline (eval/quarantine/loso.py): every text of the
//! given sets with its set, entry, label, the rules' verdict on its entry, and its embedding.
//!   cargo run --example quarantine_dump -- MODEL_DIR SET.json… > /tmp/q-dump.jsonl
use gza::quarantine::{Layers, check_with, combine};
use serde_json::{Value, json};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("MODEL_DIR"));
    let e = gza::learn::embed::Embedder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("fingerprint {}", e.fingerprint());
    for path in args {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let list = v
            .as_array()
            .cloned()
            .unwrap_or_else(|| v["items"].as_array().cloned().unwrap_or_default());
        for (i, en) in list.iter().enumerate() {
            let texts: Vec<String> = match en.get("texts").and_then(|t| t.as_array()) {
                Some(t) => t
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect(),
                // Every field that reaches a prompt (blind.json has description, checklist, …).
                None => {
                    let mut parts: Vec<String> = Vec::new();
                    for k in [
                        "text",
                        "learning",
                        "insight",
                        "description",
                        "example",
                        "applies_when",
                        "checklist",
                    ] {
                        match en.get(k) {
                            Some(Value::String(s)) => parts.push(s.clone()),
                            Some(Value::Array(a)) => parts
                                .extend(a.iter().filter_map(|x| x.as_str().map(str::to_string))),
                            _ => {}
                        }
                    }
                    if parts.is_empty() {
                        continue;
                    }
                    vec![parts.join(" ")]
                }
            };
            let hostile = en
                .get("hostile")
                .and_then(|h| h.as_bool())
                .unwrap_or_else(|| {
                    matches!(
                        en.get("label").and_then(|l| l.as_str()),
                        Some("hostile" | "malicious" | "attack" | "bad")
                    )
                });
            let mut held: Vec<bool> = texts
                .iter()
                .map(|t| check_with(t, Layers::ALL).is_some())
                .collect();
            let facts: Vec<combine::Facts> = texts.iter().map(|t| combine::facts(&[t])).collect();
            for a in 0..facts.len() {
                for b in 0..=a {
                    if combine::together(&facts[a], &facts[b]).is_some() {
                        held[a] = true;
                        held[b] = true;
                    }
                }
            }
            for (j, t) in texts.iter().enumerate() {
                let emb: Vec<f64> = e
                    .embed(t)
                    .into_iter()
                    .map(|x| (f64::from(x) * 1e4).round() / 1e4)
                    .collect();
                let row = json!({"set": path, "entry": i, "part": j, "hostile": hostile, "held": held[j],
                    "kind": en.get("kind"), "lang": en.get("lang"), "text": t, "emb": emb});
                println!("{row}");
            }
        }
    }
}
