//! Learnings that help (issue 20): the ranking and merging defects, each through the binary
//! with the real embedding model, and what reaches an agent with the real Claude Code CLI.

use serde_json::json;

use crate::hooks::{conversation, hooked_project, run_claude};
use crate::support::claude::claude_bin;
use crate::support::fake_anthropic::{FakeAnthropic, Reply};
use crate::support::project::TestProject;

fn ids(json: &serde_json::Value) -> Vec<String> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

fn search(p: &TestProject, query: &str) -> Vec<String> {
    ids(&p.json(&["learnings", "search", "--json", query]))
}

/// A MEDIUM learning a person scoped to a tool and a file (confidence 0.7 by default) scored
/// 0.4 + 0.4 times 0.7 = 0.56, under the 0.7 threshold: it never fired. It must reach the very
/// tool call it was scoped to, and no other.
#[test]
fn a_medium_learning_scoped_to_a_tool_and_a_file_reaches_that_tool_call() {
    let Some(claude) = claude_bin() else { return };
    let p = hooked_project();
    let lesson = "Bump marketplace.json whenever plugin.json version changes";
    p.ok(&[
        "learnings",
        "add",
        "--tool",
        "Edit",
        "--file",
        "**/plugin.json",
        lesson,
    ]);
    std::fs::write(p.path("plugin.json"), "{\"version\": \"1.0.0\"}\n").unwrap();
    std::fs::write(p.path("package.json"), "{\"version\": \"1.0.0\"}\n").unwrap();
    let plugin = p.path("plugin.json").display().to_string();
    let package = p.path("package.json").display().to_string();
    let edit = |file: &str| {
        Reply::tool_use(
            "Edit",
            json!({"file_path": file, "old_string": "1.0.0", "new_string": "1.1.0"}),
        )
    };
    // Claude Code edits a file only after reading it.
    let server = FakeAnthropic::start_with_default(
        vec![
            Reply::tool_use("Read", json!({"file_path": package})),
            edit(&package),
            Reply::tool_use("Read", json!({"file_path": plugin})),
            edit(&plugin),
            Reply::text("Bumped."),
        ],
        Reply::text("Done."),
    )
    .without_side_messages();
    run_claude(&p, &claude, &server, "Bump the version to 1.1.0");
    let texts = conversation(&server);
    for (i, text) in texts.iter().take(4).enumerate() {
        assert!(
            !text.contains(lesson),
            "request {i}: only the edit of plugin.json is the call it was scoped to: {text}"
        );
    }
    assert_eq!(
        texts[4].matches(lesson).count(),
        1,
        "after the edit of plugin.json: {}",
        texts[4]
    );
    assert_eq!(
        std::fs::read_to_string(p.path("plugin.json")).unwrap(),
        "{\"version\": \"1.1.0\"}\n"
    );
}

/// The class of the MEDIUM-trigger defect: a learning scoped to a tool and words of the call
/// (no file) reaches that call at HIGH, as one scoped to a file does at MEDIUM; a glob names
/// files from the project's root wherever the session has moved to (`cd src`) and in a task's
/// worktree; a tool list written as Claude Code's matcher (`Edit|Write`) names both tools.
/// Each reaches only its call.
#[test]
fn learnings_scoped_to_a_call_reach_it_from_any_folder_and_by_tool_and_words() {
    let Some(claude) = claude_bin() else { return };
    let p = hooked_project();
    let push = "Run cargo publish --dry-run before pushing a release";
    let rust = "Keep every module's tests in a tests submodule at its end";
    p.ok(&[
        "learnings",
        "add",
        "--priority",
        "HIGH",
        "--tool",
        "Bash",
        "--keyword",
        "git push",
        push,
    ]);
    p.ok(&[
        "learnings",
        "add",
        "--tool",
        "Edit|Write",
        "--file",
        "./src/**/*.rs",
        rust,
    ]);
    let shown = p.json(&["learnings", "show", "--json"]);
    let stored = shown
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["text"] == rust)
        .unwrap_or_else(|| panic!("{shown}"));
    assert_eq!(
        stored["triggers"]["tools"],
        json!(["Edit", "Write"]),
        "{stored}"
    );
    assert_eq!(
        stored["triggers"]["files"],
        json!(["src/**/*.rs"]),
        "{stored}"
    );
    std::fs::create_dir_all(p.path("src")).unwrap();
    let notes = p.path("src/NOTES.md").display().to_string();
    let module = p.path("src/lib/a.rs").display().to_string();
    let in_worktree = p
        .path(".gza/worktrees/t1/src/lib/b.rs")
        .display()
        .to_string();
    let server = FakeAnthropic::start_with_default(
        vec![
            Reply::tool_use("Bash", json!({"command": "cd src && git status --short"})),
            Reply::tool_use("Write", json!({"file_path": notes, "content": "hi\n"})),
            Reply::tool_use(
                "Write",
                json!({"file_path": in_worktree, "content": "pub fn b() {}\n"}),
            ),
            Reply::tool_use(
                "Write",
                json!({"file_path": module, "content": "pub fn a() {}\n"}),
            ),
            Reply::tool_use(
                "Bash",
                json!({"command": "git push --dry-run . HEAD:refs/heads/scratch 2>&1 || true"}),
            ),
            Reply::text("Done."),
        ],
        Reply::text("Done."),
    )
    .without_side_messages();
    run_claude(&p, &claude, &server, "Tidy up and push");
    let texts = conversation(&server);
    let count = |i: usize, lesson: &str| texts[i].matches(lesson).count();
    // Requests 1-2 follow `git status` and a Markdown file's write: neither is a scoped call.
    for (i, text) in texts.iter().enumerate().take(3) {
        assert_eq!(
            (count(i, push), count(i, rust)),
            (0, 0),
            "request {i}: {text}"
        );
    }
    assert_eq!(
        (count(3, push), count(3, rust)),
        (0, 1),
        "after the worktree's write: {}",
        texts[3]
    );
    // Given once per session: the module's write is the same learning's call again.
    assert_eq!(
        (count(4, push), count(4, rust)),
        (0, 1),
        "after the module's write: {}",
        texts[4]
    );
    assert_eq!(
        (count(5, push), count(5, rust)),
        (1, 1),
        "after the push: {}",
        texts[5]
    );
    assert!(std::path::Path::new(&in_worktree).exists() && std::path::Path::new(&module).exists());
}

/// What a person scopes a learning to is what reaches the model, through Claude Code's own
/// PreToolUse hook: a CRITICAL learning scoped to a tool alone (which SessionStart promises
/// "before matching tool calls"), a HIGH one scoped to words alone, a LOW one scoped to files.
#[test]
fn a_persons_learning_reaches_the_calls_it_was_scoped_to_however_narrowly() {
    let Some(claude) = claude_bin() else { return };
    let p = hooked_project();
    let header = "Always add the license header to new source files";
    let compose = "Use docker compose v2 syntax without the hyphen";
    let docs = "Keep doc headings in sentence case";
    p.ok(&[
        "learnings",
        "add",
        "--tool",
        "Write",
        "--priority",
        "CRITICAL",
        header,
    ]);
    p.ok(&[
        "learnings",
        "add",
        "--keyword",
        "docker compose",
        "--priority",
        "HIGH",
        compose,
    ]);
    p.ok(&[
        "learnings",
        "add",
        "--file",
        "docs/*.md",
        "--priority",
        "LOW",
        docs,
    ]);
    std::fs::create_dir_all(p.path("docs")).unwrap();
    let intro = p.path("docs/intro.md").display().to_string();
    let server = FakeAnthropic::start_with_default(
        vec![
            Reply::tool_use("Bash", json!({"command": "ls"})),
            Reply::tool_use("Bash", json!({"command": "docker compose version || true"})),
            Reply::tool_use("Write", json!({"file_path": intro, "content": "# Intro\n"})),
            Reply::text("Done."),
        ],
        Reply::text("Done."),
    )
    .without_side_messages();
    run_claude(&p, &claude, &server, "Tidy the docs");
    let texts = conversation(&server);
    let has = |i: usize, lesson: &str| texts[i].matches(lesson).count();
    // The SessionStart context names the CRITICAL one; after `ls`, nothing new is given.
    assert_eq!(
        (has(1, compose), has(1, docs)),
        (0, 0),
        "after ls: {}",
        texts[1]
    );
    assert_eq!(has(2, compose), 1, "after docker compose: {}", texts[2]);
    assert_eq!(has(2, docs), 0, "after docker compose: {}", texts[2]);
    assert_eq!(has(3, docs), 1, "after the docs write: {}", texts[3]);
    assert!(
        has(3, header) > has(2, header),
        "the CRITICAL learning was not given before the Write: {}",
        texts[3]
    );
}

/// A person's learning is stored as written, but one that says what a learning in use already
/// says, in other words by the model, is named so the person can keep one; a different
/// learning sharing most words is not.
#[test]
fn a_learning_a_person_adds_twice_in_other_words_is_named() {
    let mut p = TestProject::new();
    p.use_model();
    p.ok(&["learnings", "add", "Run cargo nextest before every commit"]);
    let again = p.run(&[
        "learnings",
        "add",
        "Execute cargo nextest ahead of each commit",
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("Added L2"), "{}", again.stdout);
    assert!(
        again.stderr.contains(
            "note: L1 already says this (Run cargo nextest before every commit); keep one: `gza learnings archive L2` (or L1)"
        ),
        "{}",
        again.stderr
    );
    let other = p.run(&["learnings", "add", "Run cargo clippy before every commit"]);
    assert!(other.stderr.is_empty(), "{}", other.stderr);
}

/// A learning that has decayed out of use (an agent's, not re-confirmed for a year) is given
/// by no hook, as it is left out of a task's prompt: the same session's prompt hook gave it
/// while it was fresh.
#[test]
fn a_decayed_learning_reaches_no_session() {
    let Some(claude) = claude_bin() else { return };
    let mut p = hooked_project();
    p.use_model();
    let lesson = "Run sqlx prepare after editing any query in the orders module";
    p.ok(&["learnings", "add", lesson]);
    let confirmed = |at: String| {
        p.db()
            .execute(
                "UPDATE learnings SET origin = 'agent', confirmed_at = ?1 WHERE text = ?2",
                [at, lesson.to_string()],
            )
            .unwrap();
        // In team mode the hooks read a snapshot a command refreshes (a change made in SQL
        // reaches them through the next command; decay itself needs none: the snapshot holds
        // when each learning decays).
        p.ok(&["learnings", "show"]);
    };
    let prompt = "Edit the orders query to add a status filter";
    let first_request = || {
        let server =
            FakeAnthropic::start_with_default(vec![Reply::text("Noted.")], Reply::text("Done."))
                .without_side_messages();
        run_claude(&p, &claude, &server, prompt);
        conversation(&server).remove(0)
    };
    confirmed(chrono::Utc::now().to_rfc3339());
    let fresh = first_request();
    assert!(fresh.contains(lesson), "{fresh}");
    confirmed("2025-06-01T00:00:00Z".into());
    let stale = first_request();
    assert!(stale.contains(prompt) && !stale.contains(lesson), "{stale}");
}

/// The words around injected learnings ask the agent to follow them (they are the project's
/// conventions) unless the task says otherwise; they never call them "not instructions". The
/// fence stays: a learning cannot close it.
#[test]
fn injected_learnings_are_framed_as_conventions_to_follow_in_prompts_and_sessions() {
    let framing = "Follow them unless your task or the person you work for says otherwise.";
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho done\n", "");
    p.ok(&["learnings", "add", "Keep handlers thin"]);
    p.add(&["--type", "explore", "look around"]);
    p.ok(&["work"]);
    let sent = p.ok(&["show", "1", "--prompt"]);
    assert!(sent.contains(framing), "{sent}");
    assert!(!sent.to_lowercase().contains("not instructions"), "{sent}");
    assert!(sent.contains("<learnings>\n"), "{sent}");
    assert!(
        sent.contains("- Keep handlers thin\n</learnings>"),
        "{sent}"
    );

    let Some(claude) = claude_bin() else { return };
    let p = hooked_project();
    p.ok(&[
        "learnings",
        "add",
        "--priority",
        "CRITICAL",
        "Never push directly to main; open a pull request",
    ]);
    let server = FakeAnthropic::start_with_default(vec![Reply::text("Ok.")], Reply::text("Done."))
        .without_side_messages();
    run_claude(&p, &claude, &server, "Push my branch");
    let first = &conversation(&server)[0];
    assert!(first.contains(framing), "{first}");
    assert!(
        !first.to_lowercase().contains("not instructions"),
        "{first}"
    );
    assert!(first.contains("<gza-learnings>"), "{first}");
}

/// Six learnings of a project, as a person adds them at the start.
const SIX: [&str; 6] = [
    "Run cargo sqlx prepare after changing any SQL query",
    "New tables and columns need a migration in server/migrations",
    "Database queries live in server/src/db, one module per table",
    "Background jobs go through the jobs table, never spawned threads",
    "Stripe webhooks must verify the signature before parsing the body",
    "Playwright end-to-end tests need the dev server on port 5173",
];

/// A small store is not cut by the floor chosen for stores of a hundred and more: the right
/// learning, first at 0.43, was dropped under the absolute 0.56 with six learnings. The floor now follows the store's size; unrelated text still gets
/// nothing.
#[test]
fn a_small_store_keeps_the_right_answer_and_still_gives_nothing_for_unrelated_text() {
    let mut p = TestProject::new();
    p.use_model();
    for text in SIX {
        p.ok(&["learnings", "add", text]);
    }
    // L1 scores 0.43 and leads the next by 0.10: neither over 0.56 nor a clear winner.
    let query = "The orders query changed; regenerate what CI needs for the database layer";
    assert_eq!(search(&p, query), vec!["L1"]);
    for unrelated in [
        "Write the release announcement for the company blog",
        "Plan the team offsite agenda",
        "Translate the marketing landing page copy into French",
    ] {
        assert_eq!(search(&p, unrelated), Vec::<String>::new(), "{unrelated}");
    }
}

/// Two learnings that say one thing do not take two of the three places: the second is left
/// out and the next different learning takes its place.
#[test]
fn search_and_task_selection_do_not_spend_two_places_on_one_idea() {
    let mut p = TestProject::new();
    p.use_model();
    p.command_agent(
        "cat > /dev/null\necho done\n",
        "learnings:\n  inject: relevant\n",
    );
    for text in [
        "Run cargo nextest before every commit",
        "Run cargo nextest before each commit",
        "Run cargo clippy with -D warnings before pushing",
    ] {
        p.ok(&["learnings", "add", text]);
    }
    for text in SIX {
        p.ok(&["learnings", "add", text]);
    }
    let hits = p.json(&[
        "learnings",
        "search",
        "--json",
        "-k",
        "3",
        "run cargo nextest and clippy before committing",
    ]);
    let found = ids(&hits);
    assert!(
        found.contains(&"L1".to_string()) != found.contains(&"L2".to_string()),
        "one of the two near-duplicates, not both: {hits:#}"
    );
    assert!(found.contains(&"L3".to_string()), "{hits:#}");

    p.add(&[
        "--type",
        "explore",
        "run cargo nextest and clippy before committing",
    ]);
    p.ok(&["work"]);
    let sent = p.ok(&["show", "1", "--prompt"]);
    assert_eq!(
        sent.matches("Run cargo nextest before e").count(),
        1,
        "{sent}"
    );
}

/// Near-duplicates taught by two tasks are merged when the model is installed: the second
/// re-confirms the first instead of being listed beside it.
#[test]
fn near_duplicates_taught_by_two_tasks_are_merged_with_the_model() {
    let mut p = TestProject::new();
    p.use_model();
    p.command_agent(
        "cat > /dev/null\necho \"Done $GZA_TASK_ID.\"\neval \"lesson=\\$LEARN_$GZA_TASK_ID\"\nprintf '\\n## Learnings\\n- %s\\n' \"$lesson\"\n",
        "learnings:\n  extraction_provider: none\n  regenerate_every: 100\n",
    );
    p.set_env("LEARN_1", "Run cargo nextest before every commit");
    p.set_env("LEARN_2", "Run cargo nextest before each commit");
    p.set_env("LEARN_3", "Frontend strings live in locales/en.json");
    p.set_env("LEARN_4", "Run cargo nextest before each commit, always");
    for i in 1..=2 {
        p.add(&["--type", "explore", &format!("task {i}")]);
    }
    p.ok(&["work", "--all"]);
    p.ok(&["learnings", "update"]);
    // Another regeneration later, when the first learning has a stored vector or not.
    for i in 3..=4 {
        p.add(&["--type", "explore", &format!("task {i}")]);
    }
    p.ok(&["work", "--all"]);
    p.ok(&["learnings", "update"]);
    let shown = p.json(&["learnings", "show", "--all", "--json"]);
    let texts: Vec<&str> = shown
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        vec![
            "Run cargo nextest before every commit",
            "Frontend strings live in locales/en.json"
        ],
        "{shown:#}"
    );
    let file = std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap();
    assert_eq!(file.matches("cargo nextest").count(), 1, "{file}");
}

/// Learnings that name different files or identifiers are different learnings, however alike
/// the model finds the rest (0.96 for "… users.graphql" and "… orders.graphql"): both are kept,
/// where before the second was merged into the first and lost.
#[test]
fn learnings_naming_different_files_are_not_merged() {
    let mut p = TestProject::new();
    p.use_model();
    p.command_agent(
        "cat > /dev/null\necho \"Done $GZA_TASK_ID.\"\neval \"lesson=\\$LEARN_$GZA_TASK_ID\"\nprintf '\\n## Learnings\\n- %s\\n' \"$lesson\"\n",
        "learnings:\n  extraction_provider: none\n  regenerate_every: 100\n",
    );
    let taught = [
        "Regenerate the GraphQL types after editing users.graphql",
        "Regenerate the GraphQL types after editing orders.graphql",
        "Register every new widget1 in the widget registry",
        "Register every new widget2 in the widget registry",
    ];
    for (i, lesson) in taught.iter().enumerate() {
        p.set_env(&format!("LEARN_{}", i + 1), lesson);
        p.add(&["--type", "explore", &format!("task {}", i + 1)]);
    }
    p.ok(&["work", "--all"]);
    p.ok(&["learnings", "update"]);
    let shown = p.json(&["learnings", "show", "--all", "--json"]);
    let mut texts: Vec<&str> = shown
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    texts.sort();
    let mut expected = taught.to_vec();
    expected.sort();
    assert_eq!(texts, expected, "{shown:#}");
}

/// Learnings a person added, or an agent listed, carry no "applies when" hints, and the hints
/// are what find a learning for a task that never uses its words. `learnings edit --when`
/// (which did not exist) gives an existing learning hints, which are embedded with it at once,
/// each as a sentence of its own (the old vector, made without them, is dropped; a file glob is
/// left to the words), and ranked by, held to a floor 0.10 higher; `--no-when` takes
/// them away again.
#[test]
fn hints_given_to_an_existing_learning_find_it_for_a_task_in_other_words() {
    let mut p = TestProject::new();
    p.use_model();
    for text in [
        "After changing a Django model run `python manage.py makemigrations`; CI fails on missing migrations",
        "SMS goes through `notifications.sms.send_sms()`, which honours the customer's opt-out flag",
        "Dispatchers see the board at `/dispatch/`; it refreshes over a websocket every 10 seconds",
        "Run `pytest -n auto --reuse-db` for the backend tests",
        "Invoice PDFs render with WeasyPrint in the `pdf` queue",
        "Docs are MkDocs in `docs/`; architecture changes need an ADR",
    ] {
        p.ok(&["learnings", "add", text]);
    }
    let task = "Add a field to the customer model for their preferred contact method";
    let meaning = |p: &TestProject| -> f64 {
        let all = p.json(&["learnings", "search", "--json", "--raw", "-k", "10", task]);
        all.as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == "L1")
            .and_then(|h| h["semantic"].as_f64())
            .expect("L1 ranked with a meaning score")
    };
    assert!(!search(&p, task).contains(&"L1".to_string()));
    let before = meaning(&p);
    p.ok(&[
        "learnings",
        "edit",
        "L1",
        "--when",
        "adding a field or column to a model",
        "--when",
        "renaming or removing a field",
        "--when",
        "db/migrations/*.py",
    ]);
    let shown = p.ok(&["learnings", "show", "L1"]);
    assert!(
        shown.contains(
            "adding a field or column to a model; renaming or removing a field; db/migrations/*.py"
        ),
        "{shown}"
    );
    assert_eq!(search(&p, task).first().map(String::as_str), Some("L1"));
    let explained = p.ok(&["learnings", "search", "--explain", task]);
    assert!(explained.contains("hints −0.10"), "{explained}");
    assert!(
        meaning(&p) > before + 0.1,
        "the learning was embedded again with its hints"
    );
    p.ok(&["learnings", "edit", "L1", "--no-when"]);
    assert!(!p.ok(&["learnings", "show", "L1"]).contains("Applies when"));
    assert!(!search(&p, task).contains(&"L1".to_string()));
    assert!((meaning(&p) - before).abs() < 0.01);
}

/// A hint that names the task finds its learning: embedded as one passage with the text, the
/// hint's few words were averaged into the text's and the learning stayed under the cut (0.36
/// against a floor of 0.40 in a store of six); as a sentence of its own it is found, while an
/// unrelated chore still gets nothing.
#[test]
fn a_hint_that_names_the_task_finds_its_learning_and_chores_still_get_nothing() {
    let mut p = TestProject::new();
    p.use_model();
    p.ok(&[
        "learnings",
        "add",
        "--when",
        "adding a field or column to a model",
        "--when",
        "renaming or removing a field",
        "After changing a Django model run `python manage.py makemigrations`; CI fails on missing migrations",
    ]);
    for text in [
        "SMS goes through `notifications.sms.send_sms()`, which honours the customer's opt-out flag",
        "Dispatchers see the board at `/dispatch/`; it refreshes over a websocket every 10 seconds",
        "Run `pytest -n auto --reuse-db` for the backend tests",
        "Invoice PDFs render with WeasyPrint in the `pdf` queue",
        "Docs are MkDocs in `docs/`; architecture changes need an ADR",
    ] {
        p.ok(&["learnings", "add", text]);
    }
    assert_eq!(
        search(
            &p,
            "Add a field to the customer model for their preferred contact method"
        ),
        vec!["L1"]
    );
    for chore in [
        "Bump the copyright year in the LICENSE file",
        "Fix the typo 'recieve' in a docstring",
    ] {
        assert_eq!(search(&p, chore), Vec::<String>::new(), "{chore}");
    }
}

/// Two learnings saying the same in other words (0.95 by their texts), one with "applies when"
/// hints (0.73 by the stored vectors, which blend them in): a search that ranks both above the
/// cut gives one of them among its best three.
#[test]
fn near_duplicates_take_one_slot_in_a_search_even_when_one_has_hints() {
    let mut p = TestProject::new();
    p.use_model();
    p.ok(&["learnings", "add", "Run cargo nextest before every commit"]);
    p.ok(&[
        "learnings",
        "add",
        "--when",
        "committing changes to the Rust crates",
        "--when",
        "finishing a feature branch before review",
        "Execute cargo nextest ahead of each commit",
    ]);
    p.ok(&["learnings", "add", "Run cargo clippy before every commit"]);
    p.ok(&[
        "learnings",
        "add",
        "Restart the dev server after editing vite.config.ts",
    ]);
    let hits = p.json(&[
        "learnings",
        "search",
        "--json",
        "-k",
        "3",
        "before committing changes to the Rust crates run cargo nextest",
    ]);
    let ids: Vec<&str> = hits
        .as_array()
        .unwrap_or_else(|| panic!("{hits}"))
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&"L4"), "{hits}");
    let twins = ids.iter().filter(|id| ["L1", "L2"].contains(id)).count();
    assert_eq!(twins, 1, "one of the two near-duplicates: {hits}");
}

/// A task prompt longer than the part of it that is embedded (its first 96 tokens): a ticket
/// whose template boilerplate comes first and whose problem comes last. Only its start was
/// read by meaning, so the learning its problem calls for was never found; read by its
/// sentences too, it is (and the unrelated ones stay out).
#[test]
fn a_long_prompts_problem_after_its_boilerplate_finds_its_learning() {
    let mut p = TestProject::new();
    p.use_model();
    for text in [
        "The invoice PDF renderer crashes with newer system fonts: pin the fonts package version in the Dockerfile",
        "Run cargo sqlx prepare after changing any SQL query so the offline cache stays current",
        "Weekly summary emails are scheduled in the customer's time zone, not UTC",
        "Use the feature flag service for anything customer-visible; never hard-code rollouts",
        "Newsletter copy lives in the marketing repo, not here",
        "Settings page forms use the shared FormField component with zod schemas",
    ] {
        p.ok(&["learnings", "add", text]);
    }
    let prompt = "Ticket opened from the support portal. Please read the contribution guide before \
        picking this up. Reviewers expect small pull requests, a linked ticket, a short \
        description of the change and screenshots for anything visible. Keep commits focused and \
        rebase on the main branch before asking for review. If you are unsure about scope, ask in \
        the team channel first. Remember that Friday afternoons are reserved for demos, so plan \
        your review requests accordingly. The on-call rotation is posted in the wiki. Thanks for \
        helping keep the queue short!\n\
        Problem: the nightly export job crashed with a segfault inside the PDF renderer right \
        after the font package was upgraded on the build image.";
    assert_eq!(search(&p, prompt), ["L1"]);
}
