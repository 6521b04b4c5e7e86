//! Dump, for judging the quarantine's designs offline (eval/quarantine/lowo.py): every text of
//! the given flat sets with its set, entry, part, label, the rules' verdict on it (every layer
//! but (h), split entries combined as `quarantine_train` does), the shipped layer (h)'s verdict,
//! whether it has a cue (the gate of (h)), and the hashed n-gram features of (h).
//!
//!   cargo run --release -p gza-core --example quarantine_features -- SET.json… > /tmp/feat.jsonl
use gza_core::quarantine::{Layers, actions, check_with, combine, learned, normalise};
use serde_json::{Value, json};

fn main() {
    for path in std::env::args().skip(1) {
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
                None => match en.get("text").and_then(|t| t.as_str()) {
                    Some(t) => vec![t.to_string()],
                    None => continue,
                },
            };
            let hostile = en
                .get("hostile")
                .and_then(|h| h.as_bool())
                .unwrap_or_else(|| en.get("label").and_then(|l| l.as_str()) == Some("hostile"));
            let verdicts = |layers: Layers| {
                let mut held: Vec<bool> = texts
                    .iter()
                    .map(|t| check_with(t, layers).is_some())
                    .collect();
                let facts: Vec<combine::Facts> =
                    texts.iter().map(|t| combine::facts(&[t])).collect();
                for a in 0..facts.len() {
                    for b in 0..=a {
                        if combine::together(&facts[a], &facts[b]).is_some() {
                            held[a] = true;
                            held[b] = true;
                        }
                    }
                }
                held
            };
            let rules = verdicts(Layers::RULES);
            let all = verdicts(Layers::ALL);
            let model = learned::shipped().expect("the shipped model");
            for (j, t) in texts.iter().enumerate() {
                let cued = normalise::readings(t, true, true)
                    .iter()
                    .any(|r| actions::has_cue(r));
                let row = json!({"set": path, "entry": i, "part": j, "parts": texts.len(),
                    "hostile": hostile, "rules": rules[j], "all": all[j], "cued": cued,
                    "h": model.score(t), "feat": learned::features(t), "text": t});
                println!("{row}");
            }
        }
    }
}
