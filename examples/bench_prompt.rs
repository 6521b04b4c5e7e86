//! Times `build_prompt` with a learnings file of about 2,000 tokens (benchmark, not a test):
//! `cargo run --release --example bench_prompt`.

use std::time::Instant;

use gza::config::Config;
use gza::project::Project;
use gza::prompt::{build_prompt, read_learnings_file};

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".gza")).unwrap();
    let mut file =
        String::from("# Project Learnings\n\nLast updated: 2026-11-22 (from 15 recent tasks)\n");
    let mut n = 0;
    while file.len() < 2_000 * gza::prompt::CHARS_PER_TOKEN - 120 {
        if n % 8 == 0 {
            file.push_str(&format!("\n## Section {}\n", n / 8));
        }
        file.push_str(&format!(
            "- Learning {n}: run the checks before finishing and keep handlers in api/\n"
        ));
        n += 1;
    }
    std::fs::write(dir.path().join(".gza/learnings.md"), &file).unwrap();
    let project = Project::new(dir.path().to_path_buf(), Config::default());
    let task = sample_task();
    let runs = 10_000;
    let started = Instant::now();
    let mut total = 0;
    for _ in 0..runs {
        let learnings = read_learnings_file(&project).unwrap();
        total += build_prompt(&project, &task, learnings.as_ref())
            .unwrap()
            .len();
    }
    let per = started.elapsed() / runs;
    println!(
        "build_prompt with a {}-byte (~{} token) learnings file, read from disk each time: {:.1} µs per call ({} runs, {} bytes out)",
        file.len(),
        file.len() / gza::prompt::CHARS_PER_TOKEN,
        per.as_secs_f64() * 1e6,
        runs,
        total / runs as usize
    );
}

fn sample_task() -> gza::task::Task {
    gza::task::Task {
        id: gza::task::TaskId(1),
        prompt: "Add pagination to the /users endpoint".into(),
        task_type: gza::task::TaskType::Implement,
        created_at: gza::time::now(),
        based_on: None,
        depends_on: None,
        group: None,
        spec: None,
        model: None,
        provider: None,
        skip_learnings: false,
        urgent: false,
        resume_session_id: None,
        state: gza::task::TaskState::Pending,
        branch: None,
        worktree: None,
        log_file: None,
        base: None,
        session_id: None,
        output: None,
        usage: gza::task::Usage::default(),
        diff_stats: None,
        report_file: None,
        learnings_version: None,
        merged: None,
        pr_url: None,
    }
}
