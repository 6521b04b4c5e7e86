//! Dump what the ranker sees of a labelled set, for trying ranking rules offline (eval/tune.py):
//! every learning's terms and embedding, every prompt's terms and the embeddings of the prompt
//! whole and of each of its sentences, with the model gza loads.
//! `cargo run --release --example rank_dump -- MODEL_DIR SET.json > dump.json`; given a JSON list of
//! texts instead of a set, it prints their embeddings.

use gza::learn::rank;
use serde_json::{Value, json};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("MODEL_DIR"));
    let set: Value = serde_json::from_str(
        &std::fs::read_to_string(args.next().expect("SET.json")).expect("readable set"),
    )
    .expect("a JSON set");
    let e = gza::learn::embed::Embedder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    if set.is_array() {
        // A list of texts: their embeddings, in order.
        let out: Vec<Vec<f32>> = set
            .as_array()
            .unwrap()
            .iter()
            .map(|t| e.embed(t.as_str().unwrap_or_default()))
            .collect();
        println!("{}", json!(out));
        return;
    }
    let round = |v: Vec<f32>| -> Vec<f64> {
        v.into_iter()
            .map(|x| (f64::from(x) * 1e5).round() / 1e5)
            .collect()
    };
    let learnings: Vec<Value> = set["learnings"]
        .as_array()
        .expect("learnings")
        .iter()
        .map(|l| {
            let text = l["text"].as_str().unwrap();
            let when: Vec<String> = l["applies_when"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            // As gza embeds a learning with hints (`rank::embed_learning`).
            let with_when = rank::hinted(&when).then(|| {
                let mut v = e.embed(text);
                for h in rank::word_hints(&when) {
                    v.iter_mut().zip(e.embed(h)).for_each(|(a, b)| *a += b);
                }
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                round(v.into_iter().map(|x| x / n).collect())
            });
            json!({
                "key": l["key"],
                "terms": gza::learn::rank::terms(text),
                "when_terms": gza::learn::rank::terms(&when.join(" ")),
                "vec": round(e.embed(text)),
                "vec_when": with_when,
            })
        })
        .collect();
    let queries: Vec<Value> = set["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .map(|q| {
            let text = q["prompt"].as_str().unwrap();
            let sentences = gza::learn::rank::sentences(text);
            json!({
                "id": q["id"],
                "terms": gza::learn::rank::terms(text),
                "vec": round(e.embed_prefix(text, 96)),
                "sentences": sentences,
                "sentence_vecs": sentences.iter().map(|s| round(e.embed(s))).collect::<Vec<_>>(),
            })
        })
        .collect();
    println!(
        "{}",
        json!({"learnings": learnings, "queries": queries, "model": e.fingerprint()})
    );
}
