//! Train the quarantine's learned layer (h) and measure it leave-one-set-out.
//!
//!   cargo run --release -p gza-core --example quarantine_train -- \
//!       --out crates/gza-core/data/quarantine-learned.bin eval/quarantine/{corpus,dev,val*,blind}.json \
//!       /tmp/q3-flat.json /tmp/q4-flat.json /tmp/q5-flat.json
//!
//! (`eval/quarantine/flatten_blind.py` makes the flat files of the raw blind sets.) For each
//! set: a model trained on all the others scores it, so every figure below is out of sample.
//! The threshold is then chosen once over those out-of-sample scores by a rule fixed
//! beforehand: the lowest hostile-injected total whose added harmless holds stay within 2 % of
//! the harmless entries. The shipped model is trained on every set with that threshold.
//! Training: logistic regression, AdaGrad, classes weighted to balance, a fixed shuffle.

use gza_core::quarantine::{Layers, check_with, combine, learned};

struct Entry {
    set: usize,
    texts: Vec<String>,
    hostile: bool,
}

fn load(path: &str, set: usize) -> Vec<Entry> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let value: serde_json::Value = serde_json::from_str(&text).expect("a JSON set");
    let list = match &value {
        serde_json::Value::Array(a) => a.clone(),
        serde_json::Value::Object(o) => o
            .get("items")
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    list.iter()
        .filter_map(|e| {
            let texts: Vec<String> = match e.get("texts").and_then(|t| t.as_array()) {
                Some(t) => t
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect(),
                None => vec![e.get("text")?.as_str()?.to_string()],
            };
            let hostile = match e.get("hostile").and_then(|h| h.as_bool()) {
                Some(h) => h,
                None => e.get("label")?.as_str()? == "hostile",
            };
            Some(Entry {
                set,
                texts,
                hostile,
            })
        })
        .collect()
}

/// Whether the rules (every layer but this one) hold any text of the entry, texts combined.
fn rules_hold(e: &Entry) -> bool {
    let mut held: Vec<bool> = e
        .texts
        .iter()
        .map(|t| check_with(t, Layers::RULES).is_some())
        .collect();
    let facts: Vec<combine::Facts> = e.texts.iter().map(|t| combine::facts(&[t])).collect();
    for i in 0..e.texts.len() {
        for j in 0..=i {
            if combine::together(&facts[i], &facts[j]).is_some() {
                held[i] = true;
                held[j] = true;
            }
        }
    }
    held.iter().any(|h| *h)
}

/// Whether the model may hold the text at all (the check's own gate).
fn cued(t: &str) -> bool {
    gza_core::quarantine::normalise::readings(t, true, true)
        .iter()
        .any(|r| gza_core::quarantine::actions::has_cue(r))
}

struct Sample {
    set: usize,
    features: Vec<u32>,
    hostile: bool,
}

fn train(samples: &[&Sample]) -> (Vec<f32>, f32) {
    let dims = learned::DIMS;
    let mut w = vec![0f32; dims];
    let mut g2 = vec![1e-8f32; dims];
    let (mut b, mut gb) = (0f32, 1e-8f32);
    let pos = samples.iter().filter(|s| s.hostile).count().max(1) as f32;
    let neg = samples.iter().filter(|s| !s.hostile).count().max(1) as f32;
    let n = samples.len() as f32;
    let (wp, wn) = (n / (2.0 * pos), n / (2.0 * neg));
    let mut order: Vec<usize> = (0..samples.len()).collect();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let env = |k: &str, d: f32| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let lr = env("QT_LR", 0.5);
    let l2 = env("QT_L2", 1e-5);
    for _epoch in 0..env("QT_EPOCHS", 25.0) as usize {
        for i in (1..order.len()).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            order.swap(i, (seed % (i as u64 + 1)) as usize);
        }
        for &k in &order {
            let s = samples[k];
            if s.features.is_empty() {
                continue;
            }
            let v = learned::value(s.features.len());
            let z = b + s.features.iter().map(|&i| w[i as usize] * v).sum::<f32>();
            let p = 1.0 / (1.0 + (-z).exp());
            let (y, weight) = if s.hostile { (1.0, wp) } else { (0.0, wn) };
            let g = (p - y) * weight;
            for &i in &s.features {
                let i = i as usize;
                let gi = g * v + l2 * w[i];
                g2[i] += gi * gi;
                w[i] -= lr * gi / g2[i].sqrt();
            }
            gb += g * g;
            b -= lr * g / gb.sqrt();
        }
    }
    (w, b)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let out = args.iter().position(|a| a == "--out").map(|i| {
        let p = args.remove(i + 1);
        args.remove(i);
        p
    });
    let names: Vec<String> = args.clone();
    let entries: Vec<Entry> = names
        .iter()
        .enumerate()
        .flat_map(|(i, p)| load(p, i))
        .collect();
    eprintln!("{} entries in {} sets", entries.len(), names.len());
    // Training samples: every text of a harmless entry, and hostile entries of one text (a
    // split attack's halves are each harmless to read; layer c is for them).
    let samples: Vec<Sample> = entries
        .iter()
        .flat_map(|e| {
            let single = e.texts.len() == 1;
            e.texts
                .iter()
                .filter(move |_| !e.hostile || single)
                .map(move |t| Sample {
                    set: e.set,
                    features: learned::features(t),
                    hostile: e.hostile,
                })
        })
        .collect();
    let rules: Vec<bool> = entries.iter().map(rules_hold).collect();
    // Out-of-sample score of every entry: its texts' highest, by a model not trained on its set.
    let mut oos = vec![0f32; entries.len()];
    for (s, name) in names.iter().enumerate() {
        let rest: Vec<&Sample> = samples.iter().filter(|x| x.set != s).collect();
        let (w, b) = train(&rest);
        let m = learned::Model::new(&w, b, 1.0);
        for (k, e) in entries.iter().enumerate().filter(|(_, e)| e.set == s) {
            oos[k] = e
                .texts
                .iter()
                .filter(|t| cued(t))
                .map(|t| m.score(t))
                .fold(0.0, f32::max);
        }
        eprintln!("  fold {s} ({name}) done");
    }
    let harmless = entries.iter().filter(|e| !e.hostile).count();
    let hostile = entries.len() - harmless;
    let tally = |tau: f32, set: Option<usize>| {
        let mut injected = (0, 0);
        let mut held = (0, 0);
        for (k, e) in entries.iter().enumerate() {
            if set.is_some_and(|s| s != e.set) {
                continue;
            }
            let model = oos[k] >= tau;
            if e.hostile {
                injected.0 += usize::from(!rules[k]);
                injected.1 += usize::from(!rules[k] && !model);
            } else {
                held.0 += usize::from(rules[k]);
                held.1 += usize::from(rules[k] || model);
            }
        }
        (injected, held)
    };
    println!("all sets, out of sample: {hostile} hostile, {harmless} harmless entries");
    println!("| threshold | hostile injected (rules → rules or model) | harmless held |");
    println!("|---|---|---|");
    let grid: Vec<f32> = (50..100).map(|i| i as f32 / 100.0).collect();
    let mut chosen = 0.99f32;
    let mut best = usize::MAX;
    for &tau in &grid {
        let ((r, m), (hr, hm)) = tally(tau, None);
        if (tau * 100.0).round() as i32 % 5 == 0 {
            println!("| {tau:.2} | {r} → {m} | {hr} → {hm} |");
        }
        if (hm - hr) as f32 <= 0.02 * harmless as f32 && m < best {
            best = m;
            chosen = tau;
        }
    }
    println!(
        "\nchosen threshold {chosen:.2} (lowest injected with added holds ≤ 2 % of harmless)\n"
    );
    println!("| set | hostile injected: rules → with (h) | harmless held: rules → with (h) |");
    println!("|---|---|---|");
    for (s, name) in names.iter().enumerate() {
        let ((r, m), (hr, hm)) = tally(chosen, Some(s));
        let h = entries.iter().filter(|e| e.set == s && e.hostile).count();
        let n = entries.iter().filter(|e| e.set == s && !e.hostile).count();
        println!("| {name} | {r} → {m} of {h} | {hr} → {hm} of {n} |");
    }
    if let Some(out) = out {
        let all: Vec<&Sample> = samples.iter().collect();
        let (w, b) = train(&all);
        let m = learned::Model::new(&w, b, chosen);
        std::fs::write(&out, m.to_bytes()).expect("write the model");
        eprintln!("wrote {out}");
    }
}
