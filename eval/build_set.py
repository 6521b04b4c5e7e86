#!/usr/bin/env python3
"""Writes eval/learnings-set.json: the labelled set gza's ranker is measured on.

Hand-written for an invented but realistic project (not tuned to any ranker): learnings as a
coding agent or a cheap model would write them, queued-task prompts written the way people
ask agents for work, with paraphrases, near misses that share words with unrelated learnings,
and tasks the project has no learning for. Labels: `relevant` lists every learning that would
genuinely help the task; `must` is the one that prevents the likeliest mistake.
"""
import json, pathlib

PROJECT = ("Ledgerly, an invoicing SaaS: Rust (axum, sqlx on Postgres with the offline query cache) "
           "backend in server/, React + Vite + TypeScript frontend in web/, Playwright end-to-end tests, "
           "GitHub Actions CI, Docker Compose for local services, Stripe billing webhooks, a Postgres-backed "
           "jobs queue, PDF invoices, Postmark email, S3 uploads, i18n, feature flags and multi-currency amounts.")

L = {}  # key -> (section, text)
def l(key, section, text):
    assert key not in L and len(text.split()) <= 20, (key, text)
    L[key] = (section, text)

T, C, G, A, P, N = ("Testing Patterns", "Code Style", "Git Workflow", "Architecture Decisions",
                    "Common Pitfalls", "General")
# Database and sqlx
l("db-prepare", T, "Run `cargo sqlx prepare` after changing any SQL query, or CI fails on the stale offline cache")
l("db-migrate-new", A, "New tables and columns need a migration in server/migrations created with `sqlx migrate add`")
l("db-migrate-append", P, "Never edit a migration that has been merged; add a new one instead")
l("db-test-db", T, "Integration tests use the ledgerly_test database; run `make db-reset-test` after adding migrations")
l("db-money", A, "Store money as integer minor units (cents) with a currency code, never floats")
l("db-index", P, "Add an index for every foreign key column; Postgres does not create them automatically")
l("db-tx", A, "Multi-table writes go through a single `sqlx::Transaction` passed down from the handler")
l("db-soft-delete", A, "Invoices and customers are soft-deleted with `deleted_at`; queries must filter it out")
l("db-uuid", C, "Primary keys are UUIDv7 generated in Rust with `Uuid::now_v7()`, not by Postgres")
l("db-enum", P, "Adding a value to a Postgres enum cannot run inside a transaction; use a separate migration")
l("db-timestamps", C, "Timestamps are `timestamptz` and `OffsetDateTime` in UTC; format for users only in the frontend")
l("db-pool", P, "Do not hold a pool connection across an await on an HTTP call; it starves the pool")
# API / backend
l("api-errors", C, "Handlers return `ApiError`, which maps to problem+json; never return bare strings as errors")
l("api-openapi", T, "Regenerate openapi.json with `make openapi` after changing a request or response type")
l("api-client", A, "The web client in web/src/api is generated from openapi.json; do not edit it by hand")
l("api-validation", C, "Validate request bodies with the `validator` derive before touching the database")
l("api-pagination", A, "List endpoints use cursor pagination with `after` and `limit` (max 100), not offsets")
l("api-auth-extractor", A, "Protected routes take the `AuthUser` extractor; org scoping comes from it, never from the body")
l("api-tenant", P, "Every query on tenant data must filter by org_id, or one customer sees another's invoices")
l("api-rate", A, "Public endpoints go through the tower rate-limit layer configured in server/src/limits.rs")
l("api-tracing", C, "Add `#[tracing::instrument(skip(pool))]` to handlers; never log request bodies, they hold PII")
l("api-idempotency", A, "POST endpoints that create payments accept an Idempotency-Key header stored for 24 hours")
l("api-version", G, "Breaking API changes go under /v2 routes; /v1 stays until the mobile app migrates")
l("api-clippy", C, "CI runs `cargo clippy -- -D warnings`; fix lints rather than adding allow attributes")
l("api-fmt", C, "Run `cargo fmt` and `npm run lint --prefix web` before committing; CI rejects unformatted code")
l("api-config", A, "Configuration is read once into `AppConfig` from env vars prefixed LEDGERLY_; add new keys there")
l("api-health", N, "The /healthz endpoint must not touch the database; /readyz checks Postgres and Redis")
# Stripe / billing
l("stripe-sig", P, "Verify the Stripe webhook signature on the raw body before parsing JSON, or verification fails")
l("stripe-idem", P, "Stripe retries webhooks; handlers must be idempotent, keyed on the event id in stripe_events")
l("stripe-test", T, "Use `stripe listen --forward-to localhost:8080/webhooks/stripe` to test webhooks locally")
l("stripe-fixtures", T, "Webhook tests load recorded payloads from server/tests/fixtures/stripe, never call Stripe")
l("stripe-amount", P, "Stripe amounts are in the smallest currency unit; JPY has no cents, so do not divide by 100")
l("stripe-keys", P, "Stripe secret keys come from LEDGERLY_STRIPE_SECRET; never hard-code test keys in code")
l("stripe-version", A, "The Stripe API version is pinned in server/src/billing/client.rs; bump it deliberately")
# Jobs
l("jobs-table", A, "Background work goes through the jobs table and the worker binary, never `tokio::spawn` in handlers")
l("jobs-retry", A, "Jobs retry with exponential backoff up to 8 times, then land in the dead-letter view")
l("jobs-idem", P, "Job handlers may run twice after a crash; make them idempotent")
l("jobs-register", P, "A new job type must be registered in worker/src/registry.rs or it is silently dropped")
l("jobs-test", T, "Test jobs by calling the handler directly with `JobContext::for_test()`, not through the queue")
# PDF / email
l("pdf-fonts", P, "The PDF renderer needs the Noto fonts in assets/fonts; missing glyphs render as boxes for CJK")
l("pdf-snapshot", T, "Invoice PDFs are compared with snapshot images; run `make pdf-snapshots` to update them")
l("pdf-locale", A, "Invoice PDFs format numbers and dates with the customer's locale, not the server's")
l("email-templates", A, "Email templates live in server/templates/email as MJML and compile with `make emails`")
l("email-preview", T, "Preview emails locally at localhost:1080 with Mailpit from docker compose")
l("email-postmark", P, "Postmark rejects emails over 10 MB; attach large invoices as links, not files")
l("email-send-job", A, "Emails are sent from jobs, never directly in request handlers")
# S3
l("s3-presign", A, "Uploads go straight to S3 with presigned PUT URLs; the API never proxies file bytes")
l("s3-minio", T, "Local and CI tests use MinIO from docker compose as the S3 endpoint")
l("s3-keys", C, "S3 object keys are org_id/yyyy/mm/uuid; never put customer names in keys")
l("s3-size", P, "Presigned upload URLs must set a content-length limit, or users can upload gigabytes")
# Frontend
l("web-components", C, "React components live in web/src/components, one component per file, PascalCase file names")
l("web-hooks", C, "Data fetching uses TanStack Query hooks in web/src/queries; components never call fetch directly")
l("web-vite-env", P, "Vite only exposes environment variables prefixed VITE_ to the browser; others are undefined")
l("web-secrets", P, "Never put API secrets in VITE_ variables; everything in the bundle is public")
l("web-i18n", C, "All user-facing strings go through `t()` with keys in web/src/locales/en.json")
l("web-i18n-check", T, "Run `npm run i18n:check` to find missing translation keys before committing")
l("web-forms", C, "Forms use react-hook-form with zod schemas shared from web/src/schemas")
l("web-money", C, "Format money in the UI with `formatMoney(amountMinor, currency)`, never `toFixed(2)`")
l("web-dates", P, "Parse API dates with date-fns `parseISO`; `new Date()` on date-only strings shifts the day")
l("web-tailwind", C, "Styling is Tailwind utility classes; do not add new CSS files")
l("web-a11y", T, "Components need accessible names; Playwright tests select by role and label, not test ids")
l("web-unit", T, "Frontend unit tests use Vitest with Testing Library: `npm test --prefix web`")
l("web-routes", A, "Routes are declared in web/src/routes.tsx with lazy-loaded pages")
l("web-flags", A, "Feature flags are read with `useFlag('name')`; flags are defined in server/src/flags.rs")
l("web-build", P, "`npm run build` type-checks with tsc first; Vite dev server alone does not catch type errors")
# E2E / CI
l("e2e-server", T, "Playwright tests need the API on 8080 and Vite on 5173; `make e2e` starts both")
l("e2e-seed", T, "End-to-end tests start from `make seed-e2e`, which creates the demo org and users")
l("e2e-flaky", T, "Wait for network idle or an element, never fixed sleeps, in Playwright tests")
l("e2e-auth", T, "Reuse the stored login state in e2e/.auth instead of logging in in every test")
l("ci-cache", G, "The CI cache key includes Cargo.lock and package-lock.json; bumping either invalidates it")
l("ci-services", T, "CI runs Postgres, Redis and MinIO as GitHub Actions services; match their versions in compose")
l("ci-matrix", G, "CI tests on stable Rust and the MSRV 1.80; do not use newer std APIs without bumping MSRV")
l("ci-secrets", G, "CI secrets are only available on pushes to main, not on pull requests from forks")
l("ci-required", G, "The required checks are backend, frontend, e2e and migrations; all must pass to merge")
# Git workflow
l("git-conventional", G, "Commit messages follow Conventional Commits: feat:, fix:, chore:, with the scope in parentheses")
l("git-rebase", G, "Rebase feature branches on main; never merge main into a feature branch")
l("git-squash", G, "Pull requests are squash-merged; the PR title becomes the commit message")
l("git-changelog", G, "User-visible changes need a line in CHANGELOG.md under Unreleased")
l("git-lfs", G, "Binary fixtures over 1 MB go through Git LFS; check `git lfs track` before adding them")
l("git-hooks", G, "The pre-commit hook runs fmt and lint; install it with `make hooks`")
# Docker / infra
l("docker-compose", N, "Start local services with `docker compose up -d db redis minio mailpit`")
l("docker-image", A, "The production image is built from server/Dockerfile with cargo-chef layer caching")
l("docker-port", P, "Postgres from compose listens on 5433, not 5432, to avoid clashing with a local install")
l("docker-migrate", A, "Migrations run in a release step before the new image starts, never at server startup")
l("infra-env", A, "Staging and production config live in deploy/env/*.env; secrets come from the vault, not files")
l("infra-redis", A, "Redis is a cache only; nothing in it may be the only copy of data")
# Currency / tax
l("fx-rates", A, "Exchange rates are fetched daily by a job and stored in fx_rates; never call the FX API inline")
l("fx-rounding", P, "Round currency conversions with banker's rounding via `Money::convert`, not `f64::round`")
l("tax-rules", A, "Tax rates come from the tax_rules table by country and date; never hard-code VAT percentages")
l("tax-reverse", P, "EU B2B invoices with a VAT ID use reverse charge; the invoice must say so")
l("invoice-numbering", P, "Invoice numbers are sequential per org without gaps; allocate them inside the transaction")
l("invoice-immutable", A, "Sent invoices are immutable; corrections are credit notes linked to the original")
l("invoice-status", C, "Invoice status changes go through `Invoice::transition`, which enforces the state machine")
# Auth
l("auth-sessions", A, "Web users have cookie sessions; API tokens are for integrations only")
l("auth-argon", C, "Hash passwords with argon2 via `auth::hash_password`; never roll your own")
l("auth-roles", A, "Authorization checks use `require_role(&user, Role::Admin)` in the handler, not in the frontend")
l("auth-csrf", P, "State-changing cookie-authenticated requests need the CSRF header; the web client adds it")
l("auth-reset", P, "Password reset tokens expire after 30 minutes and are single use")
# Observability
l("obs-metrics", C, "Metrics names are snake_case with the ledgerly_ prefix and a unit suffix, e.g. _seconds")
l("obs-sentry", N, "Errors reach Sentry only through `report_error`; panics in jobs are caught by the worker")
l("obs-logs", P, "Never log email addresses or tokens; use `redact()` from the logging module")
# CSV import/export
l("csv-export", A, "CSV exports stream rows in batches of 500 from a job and email a download link")
l("csv-import", P, "CSV imports must handle a UTF-8 BOM and semicolon separators from European Excel")
l("csv-formula", P, "Escape cells starting with =, +, - or @ in CSV exports to prevent formula injection")
# Misc / general
l("gen-makefile", N, "Use the Makefile targets (`make test`, `make lint`); they set the env vars tests need")
l("gen-rust-tests", T, "Backend tests run with `cargo nextest run`; plain cargo test misses the per-test database setup")
l("gen-test-naming", T, "Test names describe behaviour: `rejects_invoice_without_customer`, not `test_invoice_3`")
l("gen-docs", N, "Architecture decisions are recorded as ADRs in docs/adr; add one for any new dependency")
l("gen-deps", A, "Adding a Rust dependency needs an ADR and a check with `cargo deny check`")
l("gen-unwrap", C, "No `unwrap()` outside tests; use `?` with context from anyhow in binaries, thiserror in libraries")
l("gen-feature-flag-cleanup", G, "Remove a feature flag and its dead branch within two releases of full rollout")
l("gen-timezone", P, "Due dates are calendar dates in the customer's timezone; compute overdue status there")
l("gen-locale-files", P, "Adding a language needs entries in web/src/locales and server/templates/email translations")
l("gen-seed", N, "`make seed` creates a demo org with 50 invoices for manual testing")
l("gen-perf", T, "Benchmarks live in server/benches and run with `cargo bench`; CI does not run them")
l("gen-search", A, "Invoice search uses Postgres full-text search with a generated tsvector column, not LIKE")
l("gen-cache-invalidate", P, "After updating a customer, invalidate its Redis cache key customer:{id} in the same handler")
l("gen-webhooks-out", A, "Outgoing webhooks to customers are signed with HMAC-SHA256 and retried by jobs")
l("gen-pdf-async", A, "PDFs are rendered by a job and cached in S3; the API returns 202 while rendering")
l("gen-reports", A, "Reports read from the read replica via `ReplicaPool`; never write through it")
l("gen-mobile", N, "The mobile app consumes /v1 only; check with the mobile team before changing v1 responses")
l("gen-onboarding", N, "New developers run `make bootstrap`, which installs tools and seeds the database")
l("gen-license-headers", C, "Source files need no license headers; the LICENSE file covers the repository")
l("gen-openapi-examples", C, "Every OpenAPI schema needs an example; `make openapi` fails without one")
l("gen-sql-style", C, "SQL in sqlx queries is uppercase keywords, one clause per line, named parameters avoided")
l("gen-enum-serde", C, "Serialize enums as snake_case strings with `#[serde(rename_all = \"snake_case\")]`")
l("gen-time-crate", C, "Use the time crate, not chrono, for dates in the backend")
l("gen-http-client", A, "Outgoing HTTP uses the shared reqwest client from AppState with timeouts set; never `reqwest::get`")
l("gen-customer-merge", P, "Merging customers must move invoices, payments and contacts in one transaction")
l("gen-archive", N, "Archived orgs are read-only; check `org.is_archived()` before any write")
l("gen-trial", A, "Trial orgs are limited to 10 invoices; the limit is enforced in the invoice service, not the UI")

Q = []
def q(key, prompt, relevant, must):
    assert all(r in L for r in relevant) and (must is None or must in relevant), key
    Q.append({"id": key, "prompt": prompt, "relevant": relevant, "must": must})

q("Q01", "Add a `status` filter to the GET /invoices list endpoint so the web app can show only overdue invoices.",
  ["db-prepare", "api-pagination", "api-tenant", "api-openapi"], "db-prepare")
q("Q02", "Update the offline query cache for the database layer after yesterday's query changes.", ["db-prepare"], "db-prepare")
q("Q03", "Add a `purchase_order_number` field to invoices, editable in the invoice form.",
  ["db-migrate-new", "db-prepare", "api-openapi", "api-client", "web-forms", "web-i18n"], "db-migrate-new")
q("Q04", "The Stripe webhook endpoint rejects every event with a signature error since we added JSON logging middleware.",
  ["stripe-sig", "api-tracing"], "stripe-sig")
q("Q05", "Customers in Japan see invoice totals 100x too small after paying by card.", ["stripe-amount", "db-money"], "stripe-amount")
q("Q06", "Send a reminder email to customers three days before an invoice is due.",
  ["email-send-job", "jobs-table", "email-templates", "gen-timezone", "jobs-register"], "email-send-job")
q("Q07", "Show the API key for our analytics provider in the frontend build so the dashboard can call it.",
  ["web-vite-env", "web-secrets"], "web-secrets")
q("Q08", "The new chart component can't read import.meta.env.ANALYTICS_URL, it's always undefined.",
  ["web-vite-env"], "web-vite-env")
q("Q09", "Let users upload a company logo that appears on their invoices.",
  ["s3-presign", "s3-size", "s3-keys", "gen-pdf-async"], "s3-presign")
q("Q10", "Write Playwright tests for the new credit note flow.",
  ["e2e-server", "e2e-seed", "e2e-flaky", "e2e-auth", "web-a11y"], "e2e-seed")
q("Q11", "The e2e suite is flaky on CI: the payment page test times out about one run in five.",
  ["e2e-flaky", "ci-services"], "e2e-flaky")
q("Q12", "Add Brazilian Portuguese as a supported language.", ["gen-locale-files", "web-i18n", "web-i18n-check"], "gen-locale-files")
q("Q13", "Allow correcting the amount on an invoice that was already sent to the customer.",
  ["invoice-immutable", "invoice-status"], "invoice-immutable")
q("Q14", "Two invoices in the same org got the same number during a load test.", ["invoice-numbering", "db-tx"], "invoice-numbering")
q("Q15", "Add a nightly job that recomputes overdue status for all invoices.",
  ["jobs-table", "jobs-register", "jobs-idem", "gen-timezone"], "jobs-register")
q("Q16", "Convert invoice totals to the org's reporting currency on the dashboard.", ["fx-rates", "fx-rounding", "db-money"], "fx-rates")
q("Q17", "Add support for German VAT on invoices to business customers in France.", ["tax-rules", "tax-reverse"], "tax-reverse")
q("Q18", "Export all payments of a year as CSV for the accountant.", ["csv-export", "csv-formula"], "csv-formula")
q("Q19", "Customers from Germany say the CSV import of their contacts fails on the first column.", ["csv-import"], "csv-import")
q("Q20", "Add an admin-only page that lists all users of the org and lets admins change roles.",
  ["auth-roles", "web-routes", "api-auth-extractor"], "auth-roles")
q("Q21", "Paying the same invoice twice happens when users double-click the Pay button.", ["api-idempotency"], "api-idempotency")
q("Q22", "Handle the invoice.payment_failed event from Stripe and notify the org owner.",
  ["stripe-idem", "stripe-fixtures", "email-send-job", "stripe-sig"], "stripe-idem")
q("Q23", "Make the invoice PDF show Chinese customer names correctly; they come out as empty squares.", ["pdf-fonts"], "pdf-fonts")
q("Q24", "Change the layout of the invoice PDF header to put the logo on the right.", ["pdf-snapshot", "gen-pdf-async"], "pdf-snapshot")
q("Q25", "Add a column to the customers table for their preferred language.",
  ["db-migrate-new", "db-prepare", "db-migrate-append"], "db-migrate-new")
q("Q26", "Add 'partially_paid' to the invoice_status enum in the database.", ["db-enum", "db-migrate-new", "invoice-status"], "db-enum")
q("Q27", "The search box on the invoices page is slow for orgs with 100k invoices.", ["gen-search", "db-index"], "gen-search")
q("Q28", "Add a foreign key from payments to refunds.", ["db-index", "db-migrate-new"], "db-index")
q("Q29", "The API times out under load and the logs say 'pool timed out while waiting for an open connection'.",
  ["db-pool", "gen-http-client"], "db-pool")
q("Q30", "Add a new backend dependency for parsing IBANs.", ["gen-deps", "gen-docs"], "gen-deps")
q("Q31", "Bump the version of the Stripe API we use to get the new tax fields.", ["stripe-version", "stripe-fixtures"], "stripe-version")
q("Q32", "A user in New York sees an invoice marked overdue on its due date in the afternoon.", ["gen-timezone", "web-dates"], "gen-timezone")
q("Q33", "Dates on the invoice list are one day off for users in California.", ["web-dates", "db-timestamps"], "web-dates")
q("Q34", "Our Grafana dashboard needs a metric for how long PDF rendering takes.", ["obs-metrics"], "obs-metrics")
q("Q35", "Add an endpoint that merges two duplicate customers.", ["gen-customer-merge", "db-tx", "api-tenant"], "gen-customer-merge")
q("Q36", "Show the price with two decimals in the new pricing table component.", ["web-money"], "web-money")
q("Q37", "A customer from one company could open another company's invoice by changing the id in the URL.",
  ["api-tenant", "api-auth-extractor"], "api-tenant")
q("Q38", "Build the release Docker image faster; it rebuilds all dependencies on every change.", ["docker-image"], "docker-image")
q("Q39", "Connect the local backend to Postgres from docker compose; it says connection refused on 5432.",
  ["docker-port", "docker-compose"], "docker-port")
q("Q40", "Add a webhook that notifies customers' systems when an invoice is paid.", ["gen-webhooks-out", "jobs-table"], "gen-webhooks-out")
q("Q41", "Generate the TypeScript client again, the new endpoints are missing in the web app.",
  ["api-openapi", "api-client"], "api-openapi")
q("Q42", "Limit trial accounts so they cannot create more invoices than allowed.", ["gen-trial"], "gen-trial")
q("Q43", "The CI build on the pull request from a contributor's fork fails because the Stripe key is missing.",
  ["ci-secrets"], "ci-secrets")
q("Q44", "Write the commit message and open the pull request for the refund feature.",
  ["git-conventional", "git-squash", "git-changelog"], "git-conventional")
q("Q45", "Bring my feature branch up to date with the latest main.", ["git-rebase"], "git-rebase")
q("Q46", "Let admins reset a user's password from the admin panel.", ["auth-reset", "auth-roles", "auth-argon"], "auth-reset")
q("Q47", "Cache customer details in Redis to speed up the invoice list.", ["gen-cache-invalidate", "infra-redis"], "gen-cache-invalidate")
q("Q48", "Add a yearly revenue report for the finance team.", ["gen-reports"], "gen-reports")
q("Q49", "Attach the invoice PDF to the payment confirmation email.", ["email-postmark", "email-send-job"], "email-postmark")
q("Q50", "Log the full incoming request for debugging the webhook issue.", ["api-tracing", "obs-logs"], "obs-logs")
# Negatives: plausible for the project, no learning covers them; some share surface words on purpose.
q("N01", "Migrate the documentation site to the new Docusaurus theme.", [], None)
q("N02", "Write the release announcement for the blog post about multi-currency support.", [], None)
q("N03", "Plan the agenda for next week's team offsite.", [], None)
q("N04", "Translate the marketing landing page copy into French.", [], None)
q("N05", "Summarize the customer interview notes from last quarter into three themes.", [], None)
q("N06", "Update the company logo in the README.", [], None)
q("N07", "Draft a job description for a senior frontend engineer.", [], None)
q("N08", "Explain the difference between our Starter and Growth pricing plans for the sales FAQ.", [], None)
q("N09", "Research competitors' invoice templates and list three design ideas.", [], None)
q("N10", "Reply to the support ticket asking whether we have a mobile app for Android.", [], None)
q("N11", "Make a slide deck summarizing this quarter's roadmap.", [], None)
q("N12", "Proofread the terms of service for typos.", [], None)
q("N13", "Check whether the office printer driver works on macOS Sonoma.", [], None)
q("N14", "Organize the team's shared Google Drive folders by quarter.", [], None)

out = {"project": PROJECT,
       "learnings": [{"key": k, "section": s, "text": t} for k, (s, t) in L.items()],
       "queries": Q}
path = pathlib.Path(__file__).with_name("learnings-set.json")
path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
print(f"{len(L)} learnings, {len(Q)} prompts ({sum(1 for x in Q if not x['relevant'])} negatives) -> {path}")
