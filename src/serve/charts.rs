//! Bar charts as SVG, drawn on the server with maud like every other element (so every label is
//! escaped and no chart library or script is needed).

use maud::{Markup, html};

/// One series: its name, its CSS class (its colour), a value per label.
pub struct Series<'a> {
    pub name: &'a str,
    pub class: &'a str,
    pub values: Vec<f64>,
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 180.0;
const LEFT: f64 = 48.0;
const BOTTOM: f64 = 22.0;
const TOP: f64 = 8.0;

/// Bars per label, stacked or side by side; `format` writes a value for the axis and tooltips.
pub fn bars(
    title: &str,
    labels: &[String],
    series: &[Series],
    stacked: bool,
    format: fn(f64) -> String,
) -> Markup {
    let n = labels.len().max(1) as f64;
    let totals: Vec<f64> = (0..labels.len())
        .map(|i| {
            let at = series
                .iter()
                .map(|s| s.values.get(i).copied().unwrap_or(0.0));
            if stacked {
                at.sum()
            } else {
                at.fold(0.0, f64::max)
            }
        })
        .collect();
    let max = totals.iter().copied().fold(0.0, f64::max);
    let scale = if max > 0.0 {
        (HEIGHT - TOP - BOTTOM) / max
    } else {
        0.0
    };
    let slot = (WIDTH - LEFT) / n;
    let groups = if stacked {
        1.0
    } else {
        series.len().max(1) as f64
    };
    let bar = (slot * 0.8 / groups).max(1.0);
    let base = HEIGHT - BOTTOM;
    // Every label when there are few; else about eight, evenly.
    let every = labels.len().div_ceil(8).max(1);
    let mut rects = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        let mut y = base;
        for (k, s) in series.iter().enumerate() {
            let v = s.values.get(i).copied().unwrap_or(0.0);
            if v <= 0.0 {
                continue;
            }
            let h = v * scale;
            let x = if stacked {
                LEFT + slot * i as f64 + slot * 0.1
            } else {
                LEFT + slot * i as f64 + slot * 0.1 + bar * k as f64
            };
            let top = if stacked { y - h } else { base - h };
            if stacked {
                y -= h;
            }
            rects.push((
                x,
                top,
                h,
                s.class,
                format!("{label}: {} {}", format(v), s.name),
            ));
        }
    }
    html! {
        figure.chart {
            figcaption { (title) }
            svg viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label=(title) {
                line.axis x1=(LEFT) y1=(base) x2=(WIDTH) y2=(base) {}
                text.tick x=(LEFT - 4.0) y=(TOP + 10.0) text-anchor="end" { (format(max)) }
                text.tick x=(LEFT - 4.0) y=(base) text-anchor="end" { "0" }
                @for (x, y, h, class, tip) in &rects {
                    rect class=(class) x=(format!("{x:.1}")) y=(format!("{y:.1}")) width=(format!("{bar:.1}")) height=(format!("{h:.1}")) {
                        title { (tip) }
                    }
                }
                @for (i, label) in labels.iter().enumerate() {
                    @if i % every == 0 {
                        text.tick x=(format!("{:.1}", LEFT + slot * i as f64 + slot / 2.0)) y=(HEIGHT - 6.0) text-anchor="middle" { (label) }
                    }
                }
            }
            @if series.len() > 1 {
                ul.legend {
                    @for s in series { li { span class=(format!("swatch {}", s.class)) {} (s.name) } }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_empty_data_draws_no_bar() {
        let svg = bars(
            "t",
            &["<script>".into()],
            &[Series {
                name: "n",
                class: "c",
                values: vec![0.0],
            }],
            true,
            |v| format!("{v}"),
        )
        .into_string();
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        assert!(!svg.contains("<rect"), "{svg}");
    }
}
