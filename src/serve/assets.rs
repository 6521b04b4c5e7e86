//! The dashboard's only files, embedded in the binary: one stylesheet and one small script (live
//! updates over Server-Sent Events, and the confirmations). No build step, nothing fetched.

use axum::http::header;
use axum::response::IntoResponse;

const CSS: &str = include_str!("assets/app.css");
const JS: &str = include_str!("assets/app.js");

pub async fn css() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        CSS,
    )
}

pub async fn js() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        JS,
    )
}
