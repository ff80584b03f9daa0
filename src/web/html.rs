//! The HTML of the pages, charts drawn as SVG here on the server. Every text that a user or a
//! worker wrote (variable names, run names, worker names and notes, paths) goes through [`esc`].

use std::fmt::Write as _;

use super::model::{
    self, LossPoint, MatchSummary, RunDetail, RunSummary, Series, TrackPoint, VarView,
};
use crate::report::progress::format_duration;

/// Text made safe for HTML element content and double-quoted attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}\
table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:8px}\
.cell{border:1px solid #ddd;padding:4px}.cell h4{margin:0;font-size:12px;overflow-wrap:anywhere}\
.cell p{margin:0;font-size:11px;color:#555}svg{width:100%;height:auto;display:block}\
textarea{width:100%;font:12px monospace}.chart{max-width:700px}\
polyline{fill:none;vector-effect:non-scaling-stroke}\
.theta{stroke:#1f5fbf;stroke-width:1.5}.move{stroke:currentColor;stroke-width:1.5}.key span{margin-right:12px;white-space:nowrap}.start{stroke:#999;stroke-dasharray:4 3}\
.bound{stroke:#c33;stroke-dasharray:2 2}.band{fill:#1f5fbf22;stroke:none}\
.train{stroke:#1f5fbf;stroke-width:1.5}.validation{stroke:#d60;stroke-width:1.5}.band-defaults{fill:#dd660022;stroke:none}\
.rate{stroke:#383;stroke-width:1.5}.grid{stroke:#000;stroke-opacity:.08}\
.box{position:relative;margin:0 0 34px 58px}.tick{position:absolute;font-size:11px;color:#555;white-space:nowrap}\
.ty{right:100%;padding-right:4px;transform:translateY(-50%)}.tx{top:100%;padding-top:2px;transform:translateX(-50%)}\
.axis{position:absolute;font-size:11px;color:#333}.ay{left:-58px;top:-16px}.ax{right:0;top:100%;padding-top:16px}\
.cell .box{margin:0 0 28px 44px}.cell .ay{display:none}.admin{border:1px solid #c33;padding:6px;margin:8px 0}";

/// The script that keeps a page live: every 2 s it asks for the page's part again, sending the
/// version it shows; the server answers 204 when nothing changed. It holds one timer and the
/// version string, whatever the page is left open for.
const LIVE: &str = "(function(){var m=document.getElementById('live');var busy=false;\
function sel(){var t=m.querySelectorAll('textarea');for(var i=0;i<t.length;i++){t[i].onfocus=function(){this.select();};}}\
sel();setInterval(function(){if(busy)return;busy=true;var v=m.firstElementChild?m.firstElementChild.getAttribute('data-version'):'';\
var s=m.getAttribute('data-src');\
fetch(s+(s.indexOf('?')<0?'?':'&')+'v='+encodeURIComponent(v),{cache:'no-store'}).then(function(r){\
if(r.status===200){return r.text().then(function(t){m.innerHTML=t;sel();});}}).catch(function(){})\
.then(function(){busy=false;});},2000);})();";

/// A whole page around its live part.
pub fn page(title: &str, src: &str, live: &str, extra: &str, nonce: &str) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <meta name=\"viewport\" content=\"width=device-width\"><style>{STYLE}</style></head><body>\
         <p><a href=\"/\">runs</a></p><div id=\"live\" data-src=\"{}\">{live}</div>{extra}\
         <script nonce=\"{nonce}\">{LIVE}</script></body></html>",
        esc(title),
        esc(src)
    )
}

fn num(x: f64) -> String {
    crate::report::status::significant(x, 5)
}

fn opt_duration(s: Option<f64>) -> String {
    s.map(format_duration).unwrap_or_else(|| "-".into())
}

fn rate(s: &RunSummary) -> String {
    match s.rate {
        Some(r) => format!("{r:.2} {}", esc(&s.rate_unit)),
        None => "-".into(),
    }
}

fn progress(s: &RunSummary) -> String {
    let pct = if s.total > 0 {
        100.0 * s.applied as f64 / s.total as f64
    } else {
        0.0
    };
    format!("{}/{} ({pct:.1}%)", s.applied, s.total)
}

fn last_activity(seconds: Option<f64>) -> String {
    seconds
        .map(|t| format!("{} ago", format_duration(t)))
        .unwrap_or_else(|| "-".into())
}

fn priority(s: &RunSummary) -> String {
    s.priority
        .map(|p| p.to_string())
        .unwrap_or_else(|| "-".into())
}

/// The runs list (the live part of `/`), and the matches under it.
pub fn runs_list(
    runs: &[RunSummary],
    matches: &[MatchSummary],
    version: &str,
    source: &str,
) -> String {
    let mut out = format!(
        "<div data-version=\"{version}\"><h1>spsa runs</h1><p>{}</p>\
         <table id=\"runs\"><tr><th>run</th><th>objective</th><th>state</th><th>progress</th>\
         <th>rate</th><th>time left</th><th>faults</th><th>last activity</th><th>priority</th></tr>",
        esc(source)
    );
    for s in runs {
        let _ = write!(
            out,
            "<tr data-run=\"{id}\"><td><a href=\"/runs/{id}\">{name}</a></td><td>{obj}</td>\
             <td class=\"state\">{state}</td><td class=\"n progress\">{prog}</td><td class=\"n\">{rate}</td>\
             <td class=\"n\">{left}</td><td class=\"n\">{faults}</td><td class=\"n\">{last}</td><td class=\"n\">{prio}</td></tr>",
            id = esc(&s.id),
            name = esc(&s.name),
            obj = esc(&s.objective),
            state = esc(&s.state),
            prog = progress(s),
            rate = rate(s),
            left = opt_duration(s.seconds_left),
            faults = s.faults,
            last = last_activity(s.last_activity_seconds),
            prio = priority(s),
        );
    }
    if runs.is_empty() {
        out.push_str("<tr><td colspan=\"9\">no runs</td></tr>");
    }
    out.push_str("</table>");
    if !matches.is_empty() {
        matches_table(&mut out, matches);
    }
    out.push_str("</div>");
    out
}

/// The matches: engines (A first), limits, state or SPRT verdict, pairs, counts, Elo, the LLR
/// within its bounds, pairs per second and when the record last changed.
fn matches_table(out: &mut String, matches: &[MatchSummary]) {
    out.push_str(
        "<h2>Matches</h2><table id=\"matches\"><tr><th>match</th><th>engines (A vs B)</th><th>limits</th>\
         <th>state</th><th>pairs</th><th>W/D/L (A)</th><th>pentanomial 0/½/1/1½/2</th><th>Elo [95%]</th>\
         <th>SPRT</th><th>pairs/s</th><th>last activity</th></tr>",
    );
    for m in matches {
        let r = &m.record;
        let side = |i: usize| {
            if r.options[i] == "defaults" {
                esc(&r.engines[i])
            } else {
                format!("{} ({})", esc(&r.engines[i]), esc(&r.options[i]))
            }
        };
        let sprt = r.sprt.as_ref().map_or_else(
            || "-".into(),
            |s| format!("{}: {}", esc(&s.bounds_text()), esc(&s.text())),
        );
        let p = r.pentanomial;
        let _ = write!(
            out,
            "<tr data-match=\"{id}\"><td>{name}</td><td class=\"engines\">{a} vs {b}</td><td>{limits}</td>\
             <td class=\"state\">{state}</td><td class=\"n pairs\">{played}/{planned}</td>\
             <td class=\"n\">+{w} ={d} −{l}</td><td class=\"n\">{} {} {} {} {}</td><td class=\"n elo\">{elo}</td>\
             <td class=\"sprt\">{sprt}</td><td class=\"n\">{rate}</td><td class=\"n\">{last}</td></tr>",
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            id = esc(&m.id),
            name = esc(&m.name),
            a = side(0),
            b = side(1),
            limits = esc(&r.limits),
            state = esc(&m.state),
            played = r.pairs_played,
            planned = r.pairs_planned,
            w = r.wins,
            d = r.draws,
            l = r.losses,
            elo = esc(&m.elo_text),
            rate = m
                .pairs_per_second
                .map_or_else(|| "-".into(), |x| format!("{x:.2}")),
            last = last_activity(m.last_activity_seconds),
        );
    }
    out.push_str("</table>");
}

/// Scale data to the chart's box (0..W × 0..H, y up).
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

const W: f64 = 1000.0;
const H: f64 = 400.0;

impl Frame {
    fn new(xs: impl Iterator<Item = f64>, ys: impl Iterator<Item = f64>) -> Frame {
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for x in xs {
            x0 = x0.min(x);
            x1 = x1.max(x);
        }
        for y in ys.filter(|y| y.is_finite()) {
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            (x0, x1) = (0.0, 1.0);
        }
        if y0 > y1 {
            (y0, y1) = (0.0, 1.0);
        }
        if x1 - x0 <= 0.0 {
            x1 = x0 + 1.0;
        }
        let pad = ((y1 - y0) * 0.05).max(1e-9 * y0.abs().max(1.0));
        Frame {
            x0,
            x1,
            y0: y0 - pad,
            y1: y1 + pad,
        }
    }

    fn x(&self, x: f64) -> i64 {
        ((x - self.x0) / (self.x1 - self.x0) * W).round() as i64
    }

    fn y(&self, y: f64) -> i64 {
        (H - (y - self.y0) / (self.y1 - self.y0) * H).round() as i64
    }

    fn within(&self, y: f64) -> bool {
        y >= self.y0 && y <= self.y1
    }
}

fn polyline(out: &mut String, class: &str, points: impl Iterator<Item = (i64, i64)>) {
    let _ = write!(out, "<polyline class=\"{class}\" points=\"");
    let mut first = true;
    for (x, y) in points {
        if !first {
            out.push(' ');
        }
        first = false;
        let _ = write!(out, "{x},{y}");
    }
    out.push_str("\"/>");
}

/// Round tick values within [lo, hi]: multiples of 1, 2 or 5 × 10^k, about `n` of them.
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return Vec::new();
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick's label: as many decimals as its step needs.
fn tick_text(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let v = if v.abs() < step * 1e-6 { 0.0 } else { v };
    format!("{v:.decimals$}")
}

/// Open a chart's box: its SVG and its tick labels go inside, [`close_box`] closes it.
fn open_box(out: &mut String) {
    out.push_str("<div class=\"box\">");
}

/// Close a chart's box with its axes: tick labels along y (left) and x (below) at round values,
/// a faint grid line at each y tick already drawn by [`grid`], and each axis's name and unit.
fn close_box(
    out: &mut String,
    f: &Frame,
    n: usize,
    x: &dyn Fn(f64) -> String,
    x_axis: &str,
    y_axis: &str,
) {
    let ys = ticks(f.y0, f.y1, n);
    let ystep = if ys.len() >= 2 { ys[1] - ys[0] } else { 1.0 };
    for &v in &ys {
        let top = (f.y1 - v) / (f.y1 - f.y0) * 100.0;
        let _ = write!(
            out,
            "<span class=\"tick ty\" style=\"top:{top:.2}%\">{}</span>",
            tick_text(v, ystep)
        );
    }
    for v in ticks(f.x0, f.x1, n) {
        let left = (v - f.x0) / (f.x1 - f.x0) * 100.0;
        let _ = write!(
            out,
            "<span class=\"tick tx\" style=\"left:{left:.2}%\">{}</span>",
            esc(&x(v))
        );
    }
    let _ = write!(
        out,
        "<span class=\"axis ay\">{}</span><span class=\"axis ax\">{}</span></div>",
        esc(y_axis),
        esc(x_axis)
    );
}

/// Faint horizontal lines at the y ticks of [`close_box`].
fn grid(out: &mut String, f: &Frame, n: usize) {
    for v in ticks(f.y0, f.y1, n) {
        hline(out, "grid", f.y(v));
    }
}

/// An iteration as a tick label.
fn iteration_tick(v: f64) -> String {
    format!("{v:.0}")
}

fn hline(out: &mut String, class: &str, y: i64) {
    let _ = write!(
        out,
        "<line class=\"{class}\" x1=\"0\" x2=\"{W}\" y1=\"{y}\" y2=\"{y}\" vector-effect=\"non-scaling-stroke\"/>"
    );
}

/// One variable's small chart: θ over iterations, its start (dashed), its bounds (red, when in
/// view) and the c_k band around θ.
fn var_chart(out: &mut String, series: &Series, i: usize, v: &VarView) {
    let xs = || series.iterations.iter().map(|&k| k as f64);
    let values = &series.values[i];
    let band = &series.band[i];
    let band_y = series
        .band_points
        .iter()
        .zip(band)
        .flat_map(|(&p, &c)| [values[p] - c, values[p] + c]);
    let f = Frame::new(xs(), values.iter().copied().chain(band_y).chain([v.start]));
    open_box(out);
    let _ = write!(
        out,
        "<svg viewBox=\"0 0 {W} {H}\" preserveAspectRatio=\"none\" class=\"var-chart\" data-var=\"{}\">",
        i
    );
    grid(out, &f, 3);
    if !series.band_points.is_empty() {
        out.push_str("<polygon class=\"band\" points=\"");
        let upper = series.band_points.iter().zip(band);
        for (&p, &c) in upper {
            let _ = write!(
                out,
                "{},{} ",
                f.x(series.iterations[p] as f64),
                f.y(values[p] + c)
            );
        }
        for (&p, &c) in series.band_points.iter().zip(band).rev() {
            let _ = write!(
                out,
                "{},{} ",
                f.x(series.iterations[p] as f64),
                f.y(values[p] - c)
            );
        }
        out.push_str("\"/>");
    }
    hline(out, "start", f.y(v.start));
    for b in [v.min, v.max] {
        if f.within(b) {
            hline(out, "bound", f.y(b));
        }
    }
    polyline(
        out,
        "theta",
        series
            .iterations
            .iter()
            .zip(values)
            .map(|(&k, &y)| (f.x(k as f64), f.y(y))),
    );
    out.push_str("</svg>");
    close_box(out, &f, 3, &iteration_tick, "iteration", "value");
}

/// Every variable's move from its start in units of its c_end, on one chart: variables of
/// different scales compare, and c_end does not shrink as the run goes on.
fn moves_chart(out: &mut String, series: &Series, vars: &[VarView]) {
    let moved = |i: usize, v: &VarView| {
        let (start, c_end) = (v.start, v.c_end);
        series.values[i].iter().map(move |&x| (x - start) / c_end)
    };
    let f = Frame::new(
        series.iterations.iter().map(|&k| k as f64),
        vars.iter()
            .enumerate()
            .flat_map(|(i, v)| moved(i, v))
            .chain([0.0]),
    );
    let _ = write!(
        out,
        "<h2>Moves in units of c_end</h2><p>(θ − start)/c_end of every variable, one colour each (hover a line for its name); dashed grey 0</p>\
         <div class=\"chart\"><div class=\"box\"><svg viewBox=\"0 0 {W} {H}\" preserveAspectRatio=\"none\" id=\"moves-chart\">"
    );
    grid(out, &f, 5);
    hline(out, "start", f.y(0.0));
    for (i, v) in vars.iter().enumerate() {
        let points: Vec<(i64, i64)> = series
            .iterations
            .iter()
            .zip(moved(i, v))
            .map(|(&k, y)| (f.x(k as f64), f.y(y)))
            .collect();
        let _ = write!(
            out,
            "<g data-var=\"{i}\" style=\"color:{}\"><title>{}</title>",
            line_colour(i),
            esc(&v.name)
        );
        polyline(out, "move", points.into_iter());
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    close_box(
        out,
        &f,
        5,
        &iteration_tick,
        "iteration",
        "(θ − start)/c_end",
    );
    out.push_str("<p class=\"key\">");
    for (i, v) in vars.iter().enumerate() {
        let _ = write!(
            out,
            "<span style=\"color:{}\">━ {}</span> ",
            line_colour(i),
            esc(&v.name)
        );
    }
    out.push_str("</p></div>");
}

/// The colour of variable `i`'s line where several share a chart (ten, then again).
fn line_colour(i: usize) -> &'static str {
    const COLOURS: [&str; 10] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    COLOURS[i % COLOURS.len()]
}

fn axis_note(out: &mut String, lo: f64, hi: f64, x0: u64, x1: u64) {
    let _ = write!(
        out,
        "<p>y {} … {}, iterations {x0} … {x1}</p>",
        num(lo),
        num(hi)
    );
}

/// The learning curve: training and validation loss.
fn loss_chart(out: &mut String, loss: &[LossPoint]) {
    let f = Frame::new(
        loss.iter().map(|p| p.iteration as f64),
        loss.iter().flat_map(|p| [p.train, p.validation]).flatten(),
    );
    let _ = write!(
        out,
        "<div class=\"chart\"><div class=\"box\"><svg viewBox=\"0 0 {W} {H}\" preserveAspectRatio=\"none\" id=\"loss-chart\">"
    );
    grid(out, &f, 5);
    for (class, pick) in [
        (
            "train",
            (|p: &LossPoint| p.train) as fn(&LossPoint) -> Option<f64>,
        ),
        ("validation", |p: &LossPoint| p.validation),
    ] {
        polyline(
            out,
            class,
            loss.iter()
                .filter_map(|p| pick(p).map(|y| (f.x(p.iteration as f64), f.y(y)))),
        );
    }
    out.push_str("</svg>");
    close_box(out, &f, 5, &iteration_tick, "iteration", "loss");
    axis_note(
        out,
        f.y0,
        f.y1,
        loss.first().map_or(0, |p| p.iteration),
        loss.last().map_or(0, |p| p.iteration),
    );
    out.push_str("<p>blue: training loss, orange: validation loss</p></div>");
}

/// The live Elo curve, drawn by the same chart code as `spsa report --plot`
/// ([`crate::report::elo_curve::svg`]): axes with ticks and units, each point with its 95% bar,
/// the gain so far as it stood at each point with its 95% band, and a legend; then the gain so
/// far and the latest point per opponent in words.
fn elo_chart(out: &mut String, track: &[TrackPoint], gained: &[model::GainView]) {
    let points: Vec<crate::spsa::track::Point> = track.iter().map(TrackPoint::point).collect();
    out.push_str("<div class=\"chart\" id=\"elo-chart\">");
    match crate::report::elo_curve::svg(&points, (760, 400)) {
        Ok(svg) => out.push_str(&svg),
        Err(e) => {
            let _ = write!(
                out,
                "<p>the chart could not be drawn: {}</p>",
                esc(&e.to_string())
            );
        }
    }
    out.push_str("</div>");
    for g in gained {
        let _ = write!(
            out,
            "<p class=\"gained\" id=\"gained-{}\">against {}: {}</p>",
            esc(&g.against),
            esc(&g.against),
            esc(&g.text)
        );
    }
    let last = |against: &str| {
        track.iter().rev().find(|p| p.against == against).map(|p| {
            let band = match (p.low, p.high) {
                (Some(l), Some(h)) => format!(
                    " [{}, {}]",
                    crate::stats::format_elo(l),
                    crate::stats::format_elo(h)
                ),
                _ => String::new(),
            };
            format!(
                "against {against} at iteration {}: {}{band} ({} pairs)",
                p.iteration,
                crate::stats::format_elo(p.elo),
                p.pairs
            )
        })
    };
    let lines: Vec<String> = ["start", "defaults"].into_iter().filter_map(last).collect();
    let _ = write!(out, "<p>latest {}</p>", esc(&lines.join("; ")));
}

/// Games (or evaluations) per second over time.
fn rate_chart(out: &mut String, history: &[(f64, f64)], unit: &str) {
    let f = Frame::new(
        history.iter().map(|p| p.0),
        history.iter().map(|p| p.1).chain([0.0]),
    );
    let _ = write!(
        out,
        "<div class=\"chart\"><div class=\"box\"><svg viewBox=\"0 0 {W} {H}\" preserveAspectRatio=\"none\" id=\"rate-chart\">"
    );
    grid(out, &f, 4);
    polyline(out, "rate", history.iter().map(|p| (f.x(p.0), f.y(p.1))));
    out.push_str("</svg>");
    // Time runs to the right: each tick says how long before the last sample it was.
    let end = f.x1;
    let ago = move |t: f64| {
        let s = end - t;
        if s < 0.5 {
            "now".to_string()
        } else {
            format!("−{}", format_duration(s))
        }
    };
    close_box(out, &f, 4, &ago, "time", unit);
    let span = history.last().map_or(0.0, |l| l.0) - history.first().map_or(0.0, |p| p.0);
    let _ = write!(
        out,
        "<p>{} … {} {}, over the last {}</p></div>",
        num(f.y0.max(0.0)),
        num(f.y1),
        esc(unit),
        format_duration(span)
    );
}

/// The run page's live part.
pub fn run_page(d: &RunDetail, version: &str) -> String {
    let s = &d.summary;
    let mut out = String::with_capacity(64 * 1024 + d.vars.len() * 6 * 1024);
    let _ = write!(
        out,
        "<div data-version=\"{version}\"><h1>{name}</h1><p>{source}</p>\
         <table id=\"summary\"><tr><th>objective</th><td>{obj}</td><th>state</th><td id=\"state\">{state}</td></tr>\
         <tr><th>progress</th><td id=\"progress\">{prog}</td><th>rate</th><td>{rate}</td></tr>\
         <tr><th>time left</th><td>{left}</td><th>faults</th><td id=\"faults\">{faults}</td></tr>\
         <tr><th>last activity</th><td>{last}</td><th>priority</th><td id=\"priority\">{prio}</td></tr>\
         <tr><th></th><td></td><th>throughput</th><td id=\"throughput\">{share}</td></tr></table>",
        name = esc(&s.name),
        source = esc(&d.source),
        obj = esc(&s.objective),
        state = esc(&s.state),
        prog = progress(s),
        rate = rate(s),
        left = opt_duration(s.seconds_left),
        faults = s.faults,
        last = last_activity(s.last_activity_seconds),
        prio = priority(s),
        share = s
            .throughput
            .map(|p| p.to_string())
            .unwrap_or_else(|| "-".into()),
    );
    // Current values.
    out.push_str("<h2>Values</h2>");
    var_search(&mut out, d);
    out.push_str("<table id=\"values\"><tr><th>variable</th><th>current</th><th>engine</th><th>start</th><th>min</th><th>max</th><th>c_k</th><th>c_end</th><th>moved/c_end</th></tr>");
    for (i, v) in d.vars.iter().enumerate() {
        let _ = write!(
            out,
            "<tr data-var=\"{i}\"><td class=\"name\">{}</td><td class=\"n current\">{}</td><td class=\"n engine\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n moved\">{:+.2}</td></tr>",
            esc(&v.name),
            num(v.current),
            esc(&v.engine_value),
            num(v.start),
            num(v.min),
            num(v.max),
            num(v.c_k),
            num(v.c_end),
            v.drift_c_end
        );
    }
    out.push_str("</table>");
    // Trajectories, one small chart per variable.
    let rows = d.series.rows;
    let shown = d.series.iterations.len();
    let _ = write!(
        out,
        "<h2>θ over iterations</h2><p id=\"points-note\">{rows} rows{}; blue θ, shaded θ ± c_k, dashed grey the start, red dashed a bound (when in view)</p><div class=\"grid\">",
        if let Some(when) = &d.series.pruned {
            format!(
                "; their records were pruned on {} (spsa prune): no history is left to draw, the current values below are the final θ",
                esc(when)
            )
        } else if shown < rows as usize {
            format!(
                ", drawn with {shown} evenly spread (at most {})",
                model::MAX_POINTS
            )
        } else {
            String::new()
        }
    );
    if !d.series.values.is_empty() {
        for (i, v) in d.vars.iter().enumerate() {
            let _ = write!(out, "<div class=\"cell\"><h4>{}</h4>", esc(&v.name));
            var_chart(&mut out, &d.series, i, v);
            let vals = &d.series.values[i];
            let lo = vals.iter().copied().fold(f64::MAX, f64::min);
            let hi = vals.iter().copied().fold(f64::MIN, f64::max);
            let _ = write!(
                out,
                "<p>θ {} … {}, bounds [{}, {}]</p></div>",
                num(lo),
                num(hi),
                num(v.min),
                num(v.max)
            );
        }
    }
    out.push_str("</div>");
    if !d.series.values.is_empty() {
        moves_chart(&mut out, &d.series, &d.vars);
    }
    if !d.track.is_empty() {
        out.push_str("<h2>Elo on held-out openings</h2>");
        elo_chart(&mut out, &d.track, &d.gained);
    }
    // Objective.
    if !d.loss.is_empty() {
        out.push_str("<h2>Loss</h2>");
        loss_chart(&mut out, &d.loss);
    } else {
        let [w, dr, l] = d.wdl;
        let elo = model::elo(d.wdl)
            .map(crate::stats::format_elo)
            .unwrap_or_else(|| "-".into());
        let p = d.pentanomial;
        let _ = write!(
            out,
            "<h2>Games</h2><p>θ+ against θ−: +{w} ={dr} −{l}, Elo {elo} (how far apart the perturbed pair plays, not the gain)</p>\
             <table id=\"pentanomial\"><tr><th>pair points</th><th>0</th><th>½</th><th>1</th><th>1½</th><th>2</th></tr>\
             <tr><td>pairs</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr></table>",
            p[0], p[1], p[2], p[3], p[4]
        );
    }
    out.push_str("<h2>Rate</h2>");
    if d.rate_history.len() >= 2 {
        rate_chart(&mut out, &d.rate_history, &s.rate_unit);
    } else if matches!(s.state.as_str(), "finished" | "stopped" | "paused") {
        // Nothing plays, so nothing is sampled: say so rather than promise samples to come.
        let _ = write!(
            out,
            "<p id=\"rate-none\">the run is {}: no games are being played, so there is no rate to sample</p>",
            esc(&s.state)
        );
    } else {
        out.push_str("<p>not enough samples yet</p>");
    }
    if !d.workers.is_empty() || s.id.starts_with("db-") {
        out.push_str("<h2>Workers</h2>");
        if let Some(nps) = d.reference_nps {
            let _ = write!(
                out,
                "<p id=\"clock-note\">Each worker's clock is scaled by the run's reference speed, {} nodes/s, over its engine's speed on that machine (within ×0.25 to ×4); each game's PGN states it (TimeControlScale).</p>",
                nps.round()
            );
        }
        out.push_str("<table id=\"workers\"><tr><th>worker</th><th>results</th><th>faults</th><th>last report</th><th>last seen</th><th>clock</th><th>note</th></tr>");
        for w in &d.workers {
            let clock = match (w.clock_scale, w.nps) {
                (Some(scale), Some(nps)) => crate::db::status::clock_text(scale, nps),
                _ => "-".into(),
            };
            let _ = write!(
                out,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{} ago</td><td class=\"n\">{}</td><td class=\"n\">{clock}</td><td>{}</td></tr>",
                esc(&w.name),
                w.results,
                w.faults,
                format_duration(w.last_report_seconds),
                w.last_seen_seconds
                    .map(|t| format!("{} ago", format_duration(t)))
                    .unwrap_or_else(|| "-".into()),
                esc(&w.note)
            );
        }
        out.push_str("</table>");
    }
    if !d.engines.is_empty() {
        out.push_str("<h2>Engines</h2><p>What each worker checked before playing: the engine it runs (fetched from the run, or its own build), the search signature it measured, and why it refused the run.</p>");
        out.push_str("<table id=\"engines\"><tr><th>worker</th><th>side</th><th>engine</th><th>signature</th><th>verdict</th></tr>");
        for e in &d.engines {
            let source = if e.own_build { "own build" } else { "fetched" };
            let verdict = match &e.refused {
                None => "plays".to_string(),
                Some(why) => format!("refused: {why}"),
            };
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{source} {}</td><td>{}</td><td style=\"white-space:pre-wrap\">{}</td></tr>",
                esc(&e.worker),
                esc(&e.side),
                esc(crate::db::engines::short(&e.sha256)),
                esc(&e.signature),
                esc(&verdict)
            );
        }
        out.push_str("</table>");
    }
    if d.uci.is_empty() && d.var_page.total > d.vars.len() {
        let _ = write!(
            out,
            "<h2>Current values</h2><p id=\"values-all\">{} variables: `spsa report LOG --format uci` (or csv, openbench, …) gives every value.</p></div>",
            d.var_page.total
        );
        return out;
    }
    let _ = write!(
        out,
        "<h2>Current values</h2><p>For the engine (UCI):</p><textarea id=\"uci\" readonly rows=\"{}\">{}</textarea>\
         <p>As a variables file:</p><textarea id=\"csv\" readonly rows=\"{}\">{}</textarea></div>",
        d.vars.len().clamp(2, 12),
        esc(&d.uci),
        d.vars.len().clamp(2, 12) + 2,
        esc(&d.csv)
    );
    out
}

/// A run with many variables: the search box, which of them the page shows, and the pages.
fn var_search(out: &mut String, d: &RunDetail) {
    let p = &d.var_page;
    if p.total <= model::PAGE_VARS && p.query.is_empty() {
        return;
    }
    let first = p.page * model::PAGE_VARS;
    let which = if p.query.is_empty() {
        "the most moved in units of c_end first".to_string()
    } else {
        format!("{} match “{}”, most moved first", p.matched, esc(&p.query))
    };
    let _ = write!(
        out,
        "<form id=\"var-search\" method=\"get\"><input type=\"search\" name=\"q\" value=\"{}\" placeholder=\"search {} variables\"> <button>search</button></form>\
         <p id=\"var-note\">variables {}–{} of {} shown ({which}); their charts below</p><p>",
        esc(&p.query),
        p.total,
        (first + 1).min(p.matched),
        first + d.vars.len(),
        p.matched,
    );
    let link = |page: usize| {
        let query = model::VarQuery {
            q: Some(p.query.clone()),
            page: Some(page),
        }
        .query_string();
        if query.is_empty() {
            "?".to_string()
        } else {
            query
        }
    };
    if p.page > 0 {
        let _ = write!(
            out,
            "<a id=\"var-prev\" href=\"{}\">previous {}</a> ",
            esc(&link(p.page - 1)),
            model::PAGE_VARS
        );
    }
    if p.page + 1 < p.pages {
        let _ = write!(
            out,
            "<a id=\"var-next\" href=\"{}\">next {}</a>",
            esc(&link(p.page + 1)),
            model::PAGE_VARS
        );
    }
    out.push_str("</p>");
}

/// The admin buttons of a shared run (only when serve was given a token file).
pub fn admin_panel(id: &str) -> String {
    let id = esc(id);
    format!(
        "<form class=\"admin\" method=\"post\" action=\"/runs/{id}/admin\"><b>admin</b> \
         token <input type=\"password\" name=\"token\" autocomplete=\"off\"> \
         <button name=\"action\" value=\"pause\">pause</button> \
         <button name=\"action\" value=\"resume\">resume</button> \
         <button name=\"action\" value=\"stop\">stop</button> \
         priority <input type=\"number\" name=\"priority\" value=\"0\" style=\"width:5em\"> \
         <button name=\"action\" value=\"priority\">set priority</button> \
         throughput <input type=\"number\" name=\"throughput\" value=\"100\" min=\"0\" max=\"1000\" step=\"any\" style=\"width:6em\"> \
         <button name=\"action\" value=\"throughput\">set throughput</button></form>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(rows: usize) -> RunDetail {
        let name = "<script>alert(1)</script>".to_string();
        let iterations: Vec<u64> = (1..=rows as u64).collect();
        RunDetail {
            summary: RunSummary {
                id: "local-1".into(),
                name: "<b>run</b>".into(),
                objective: "games".into(),
                state: "running".into(),
                applied: rows as u64,
                total: 100,
                rate: None,
                rate_unit: "games/s".into(),
                seconds_left: None,
                faults: 0,
                last_activity_seconds: Some(1.0),
                priority: None,
                throughput: None,
            },
            source: "logs/<x>.log".into(),
            vars: vec![VarView {
                name: name.clone(),
                start: 1.0,
                min: 0.0,
                max: 10.0,
                c_k: 0.5,
                c_end: 0.25,
                current: 2.0,
                drift_c_end: 4.0,
                engine_value: "2".into(),
            }],
            series: Series {
                rows: rows as u64,
                values: vec![iterations.iter().map(|&k| k as f64 * 0.1).collect()],
                band_points: vec![0, rows - 1],
                band: vec![vec![0.5, 0.4]],
                iterations,
                pruned: None,
            },
            loss: Vec::new(),
            track: Vec::new(),
            gained: Vec::new(),
            pentanomial: [1, 2, 3, 2, 1],
            wdl: [4, 10, 4],
            rate_history: vec![(0.0, 1.0), (60.0, 2.0)],
            workers: Vec::new(),
            reference_nps: None,
            engines: Vec::new(),
            uci: format!("setoption name {name} value 2\n"),
            csv: format!("{name},2,0,10,1,0.002,0\n"),
            var_page: Default::default(),
        }
    }

    /// A run of many variables: the page shows a search box and the 40 that moved most, with
    /// their charts, and pages through the rest; a search keeps those whose name has it.
    #[test]
    fn a_run_of_many_variables_shows_the_most_moved_a_search_box_and_pages() {
        let mut d = detail(5);
        let one = d.vars[0].clone();
        let n = 1000;
        d.vars = (0..n)
            .map(|i| model::VarView {
                name: format!("w{i}"),
                drift_c_end: if i == 777 { -9.0 } else { i as f64 / 1000.0 },
                ..one.clone()
            })
            .collect();
        d.series.values = (0..n)
            .map(|i| vec![i as f64; d.series.iterations.len()])
            .collect();
        d.series.band = (0..n)
            .map(|_| vec![1.0; d.series.band_points.len()])
            .collect();
        let mut all = d.clone();
        model::focus(&mut all, &model::VarQuery::default());
        assert_eq!(all.vars.len(), model::PAGE_VARS);
        assert_eq!(all.vars[0].name, "w777", "the most moved first");
        assert_eq!(all.vars[1].name, "w999");
        assert_eq!(all.series.values.len(), model::PAGE_VARS);
        assert_eq!(all.series.values[0][0], 777.0, "its own trajectory");
        assert!(all.uci.is_empty());
        let page = run_page(&all, "v");
        assert!(page.contains("id=\"var-search\"") && page.contains("search 1000 variables"));
        assert!(page.contains("variables 1–40 of 1000 shown"), "{page}");
        assert!(page.contains("href=\"?page=1\"") && !page.contains("var-prev"));
        assert_eq!(
            page.matches("<div class=\"cell\">").count(),
            model::PAGE_VARS
        );
        assert!(page.contains("id=\"values-all\""));

        let mut found = d.clone();
        let q = model::VarQuery {
            q: Some("W77".into()),
            page: Some(5),
        };
        model::focus(&mut found, &q);
        let names: Vec<&str> = found.vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(found.var_page.matched, 11);
        assert_eq!(found.var_page.page, 0, "a page past the last is the last");
        assert_eq!(names[..3], ["w777", "w779", "w778"]);
        let page = run_page(&found, "v");
        assert!(page.contains("11 match “W77”"), "{page}");
        assert_eq!(q.query_string(), "?q=W77&page=5");
    }

    #[test]
    fn a_run_page_escapes_names_and_draws_a_point_per_row() {
        let d = detail(25);
        let live = run_page(&d, &d.version());
        let html = page(
            &d.summary.name,
            "/fragment/runs/local-1",
            &live,
            "",
            "n0nce",
        );
        // Only the page's own script; the names show as text.
        assert_eq!(html.matches("<script").count(), 1, "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains("<b>run</b>") && !html.contains("<x>"));
        let points = live
            .split("<polyline class=\"theta\" points=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap();
        assert_eq!(points.split(' ').count(), 25);
        assert!(
            live.contains("25 rows;"),
            "no downsample note under the limit"
        );
    }

    /// The points of the first polyline of `class` in `chart`.
    fn polyline_points(chart: &str, class: &str) -> Vec<(i64, i64)> {
        chart
            .split(&format!("<polyline class=\"{class}\" points=\""))
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .split(' ')
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn the_elo_chart_has_axes_the_points_and_the_gain_so_far() {
        let mut d = detail(25);
        let no_curve = run_page(&d, &d.version());
        assert!(!no_curve.contains("elo-chart"));
        // Points every 10 iterations, 32 pairs each, θ scoring a little better each time.
        let point = |k: u64, against: &str, pentanomial: [u64; 5]| {
            model::TrackPoint::of(&crate::spsa::track::Point::measured(
                k,
                10 * k,
                crate::spsa::track::Against::parse(against).unwrap(),
                Vec::new(),
                pentanomial,
            ))
        };
        let points: Vec<crate::spsa::track::Point> = (1..=12u64)
            .flat_map(|k| {
                let up = k.min(8);
                [
                    point(k, "start", [4, 6, 12 - up, 6, 4 + up]).point(),
                    point(k, "defaults", [4, 8, 8, 8, 4]).point(),
                ]
            })
            .collect();
        d.track = points.iter().map(TrackPoint::of).collect();
        d.gained = model::GainView::of(&points);
        let version = d.version();
        let live = run_page(&d, &version);
        let chart = live
            .split("id=\"elo-chart\">")
            .nth(1)
            .and_then(|rest| rest.split("</svg>").next())
            .unwrap();
        // Axes with their units and tick labels, and a legend that names the gain.
        assert!(
            chart.contains("iteration") && chart.contains("Elo against the opponent"),
            "{chart}"
        );
        assert!(
            chart.contains("\n120\n") && chart.contains("\n+100\n"),
            "tick labels: {chart}"
        );
        assert!(chart.contains("against start: gained so far"), "{chart}");
        assert!(chart.contains("<polygon"), "the gain's band");
        // The gain so far in words, per opponent.
        assert_eq!(d.gained.len(), 2);
        assert!(
            live.contains("<p class=\"gained\" id=\"gained-start\">against start: gained +"),
            "{live}"
        );
        assert!(
            live.contains("(pooled 7 points, iterations 60-120)"),
            "{live}"
        );
        assert!(
            live.contains("latest against start at iteration 120: +"),
            "{live}"
        );
        assert_ne!(
            version,
            detail(25).version(),
            "a new point changes the page"
        );
        let json = serde_json::to_string(&d).unwrap();
        assert!(
            json.contains(
                "\"track\":[{\"iteration\":10,\"against\":\"start\",\"pairs\":32,\"elo\":"
            ),
            "{json}"
        );
        assert!(
            json.contains("\"gained\":[{\"against\":\"start\",\"elo\":"),
            "{json}"
        );
    }

    /// Issue 46: a finished run's Rate panel said "not enough samples yet".
    #[test]
    fn a_finished_run_says_why_it_has_no_rate() {
        let mut d = detail(25);
        d.rate_history.clear();
        let running = run_page(&d, &d.version());
        assert!(running.contains("not enough samples yet"));
        d.summary.state = "finished".into();
        let done = run_page(&d, &d.version());
        assert!(!done.contains("not enough samples yet"), "{done}");
        assert!(done.contains("the run is finished: no games are being played"));
    }

    #[test]
    fn the_moves_chart_draws_each_variable_in_units_of_its_c_end() {
        let d = detail(25);
        let live = run_page(&d, &d.version());
        // The values table: c_end and the move in its units.
        assert!(
            live.contains("<th>c_end</th><th>moved/c_end</th>"),
            "{live}"
        );
        assert!(live.contains("<td class=\"n moved\">+4.00</td>"), "{live}");
        let chart = live
            .split("id=\"moves-chart\">")
            .nth(1)
            .and_then(|rest| rest.split("</svg>").next())
            .unwrap();
        assert!(
            chart.contains("<title>&lt;script&gt;"),
            "names escaped: {chart}"
        );
        let points = polyline_points(chart, "move");
        assert_eq!(points.len(), 25);
        // θ rises from 0.1 to 2.5 past its start 1: (θ − 1)/0.25 runs from −3.6 to +6, so the
        // line climbs (SVG's y grows downwards) and crosses the dashed zero line.
        assert!(points.windows(2).all(|w| w[1].1 <= w[0].1), "{points:?}");
        let zero: i64 = chart
            .split("class=\"start\" x1=\"0\" x2=\"1000\" y1=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            points[0].1 > zero && points[24].1 < zero,
            "{points:?} vs {zero}"
        );
    }

    #[test]
    fn a_pruned_run_says_why_it_has_no_history() {
        let mut d = detail(1);
        d.summary.applied = 400;
        d.series = Series {
            rows: 400,
            values: vec![Vec::new()],
            band: vec![Vec::new()],
            pruned: Some("2026-01-02 03:04 UTC".into()),
            ..Series::default()
        };
        let page = run_page(&d, "v");
        assert!(
            page.contains("400 rows; their records were pruned on 2026-01-02 03:04 UTC"),
            "{page}"
        );
        assert!(!page.contains("drawn with 0"), "{page}");
    }

    #[test]
    fn a_clock_run_shows_each_workers_scale() {
        let mut d = detail(3);
        d.summary.id = "db-1".into();
        d.reference_nps = Some(200_000.0);
        d.workers = vec![model::WorkerView {
            name: "w/slow".into(),
            results: 3,
            faults: 0,
            last_report_seconds: 1.0,
            last_seen_seconds: Some(1.0),
            note: String::new(),
            nps: Some(100_000.0),
            clock_scale: Some(2.0),
        }];
        let page = run_page(&d, "v");
        assert!(page.contains("reference speed, 200000 nodes/s"), "{page}");
        assert!(
            page.contains("<td class=\"n\">×2.00 (100000 nodes/s)</td>"),
            "{page}"
        );
    }

    #[test]
    fn a_match_row_escapes_its_engines_and_shows_the_sprt() {
        use crate::matchrun::record::MatchRecord;
        let sprt = crate::stats::sprt::Sprt::parse("0,5").unwrap();
        let mut r = MatchRecord::start(
            "spsa match",
            ["<script>alert(1)</script>".into(), "B&B".into()],
            ["defaults".into(), "<i>x</i>=1".into()],
            "depth=1".into(),
            String::new(),
            100,
            Some(&sprt),
        );
        (r.pairs_played, r.wins, r.draws, r.losses) = (3, 2, 3, 1);
        r.pentanomial = [0, 1, 1, 1, 0];
        let m = MatchSummary::of("match-1".into(), "m/<x>.json".into(), r);
        let runs: Vec<RunSummary> = Vec::new();
        let list = runs_list(&runs, &[m], "v", "1 match(es)");
        assert!(!list.contains("<script>") && !list.contains("<i>") && !list.contains("<x>"));
        assert!(
            list.contains(
                "&lt;script&gt;alert(1)&lt;/script&gt; vs B&amp;B (&lt;i&gt;x&lt;/i&gt;=1)"
            ),
            "{list}"
        );
        assert!(list.contains("<td class=\"n pairs\">3/100</td>"), "{list}");
        assert!(
            list.contains("<td class=\"sprt\">nElo [0, 5]: LLR 0.00 [-2.94, 2.94]</td>"),
            "{list}"
        );
        assert!(list.contains("<td class=\"state\">running</td>"), "{list}");
    }

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<script>alert(\"1\")</script> & 'x'"),
            "&lt;script&gt;alert(&quot;1&quot;)&lt;/script&gt; &amp; &#39;x&#39;"
        );
    }
}
