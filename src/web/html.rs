//! The HTML of the pages, from maud templates: every value put into a page is escaped by the
//! template unless it is wrapped as already-made markup, which only the charts are (SVG drawn by
//! [`crate::report::chart`], the one chart code the plots use too, whose text plotters escapes).
//! So no name a user or a worker wrote (variables, runs, workers, notes, paths) reaches a page
//! unescaped by a forgotten call.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::model::{
    self, LossPoint, MatchSummary, RunDetail, RunSummary, Series, TrackPoint, VarView,
};
use crate::report::chart::{Axis, Chart, Colour, Mark, Ticks};
use crate::report::progress::format_duration;

const STYLE: &str = ".error{color:#b00}body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}\
table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:8px}\
.cell{border:1px solid #ddd;padding:4px}.cell h4{margin:0;font-size:12px;overflow-wrap:anywhere}\
.cell p{margin:0;font-size:11px;color:#555}svg{width:100%;height:auto;display:block}\
textarea{width:100%;font:12px monospace}.chart{max-width:700px}\
.key span{margin-right:12px;white-space:nowrap}.admin{border:1px solid #c33;padding:6px;margin:8px 0}";

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

/// A whole page around its live part (`live`, and `extra` below it: markup made by this module).
pub fn page(
    title: &str,
    src: &str,
    live: &Markup,
    bar: &Markup,
    extra: Option<&Markup>,
    nonce: &str,
) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                p { a href="/" { "runs" } }
                (bar)
                div id="live" data-src=(src) { (live) }
                @if let Some(extra) = extra { (extra) }
                script nonce=(nonce) { (PreEscaped(LIVE)) }
            }
        }
    }
    .into_string()
}

/// A page's head: its title and the style.
pub(super) fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            title { (title) }
            meta name="viewport" content="width=device-width";
            style { (PreEscaped(STYLE)) }
        }
    }
}

fn num(x: f64) -> String {
    crate::report::status::significant(x, 5)
}

fn opt_duration(s: Option<f64>) -> String {
    s.map(format_duration).unwrap_or_else(|| "-".into())
}

fn rate(s: &RunSummary) -> String {
    match s.rate {
        Some(r) => format!("{r:.2} {}", s.rate_unit),
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
) -> Markup {
    html! {
        div data-version=(version) {
            h1 { "spsa runs" }
            p { (source) }
            table id="runs" {
                tr {
                    th { "run" } th { "objective" } th { "state" } th { "progress" } th { "rate" }
                    th { "time left" } th { "faults" } th { "last activity" } th { "priority" }
                }
                @for s in runs {
                    tr data-run=(s.id) {
                        td { a href={ "/runs/" (s.id) } { (s.name) } }
                        td { (s.objective) }
                        td class="state" { (s.state) }
                        td class="n progress" { (progress(s)) }
                        td class="n" { (rate(s)) }
                        td class="n" { (opt_duration(s.seconds_left)) }
                        td class="n" { (s.faults) }
                        td class="n" { (last_activity(s.last_activity_seconds)) }
                        td class="n" { (priority(s)) }
                    }
                }
                @if runs.is_empty() {
                    tr { td colspan="9" { "no runs" } }
                }
            }
            @if !matches.is_empty() { (matches_table(matches)) }
        }
    }
}

/// The matches: engines (A first), limits, state or SPRT verdict, pairs, counts, Elo, the LLR
/// within its bounds, pairs per second and when the record last changed.
fn matches_table(matches: &[MatchSummary]) -> Markup {
    let side = |m: &MatchSummary, i: usize| {
        let r = &m.record;
        if r.options[i] == "defaults" {
            r.engines[i].clone()
        } else {
            format!("{} ({})", r.engines[i], r.options[i])
        }
    };
    html! {
        h2 { "Matches" }
        table id="matches" {
            tr {
                th { "match" } th { "engines (A vs B)" } th { "limits" } th { "state" } th { "pairs" }
                th { "W/D/L (A)" } th { "pentanomial 0/½/1/1½/2" } th { "Elo [95%]" } th { "SPRT" }
                th { "pairs/s" } th { "last activity" }
            }
            @for m in matches {
                @let r = &m.record;
                @let p = r.pentanomial;
                tr data-match=(m.id) {
                    td { (m.name) }
                    td class="engines" { (side(m, 0)) " vs " (side(m, 1)) }
                    td { (r.limits) }
                    td class="state" { (m.state) }
                    td class="n pairs" { (r.pairs_played) "/" (r.pairs_planned) }
                    td class="n" { "+" (r.wins) " =" (r.draws) " −" (r.losses) }
                    td class="n penta" { (p[0]) " " (p[1]) " " (p[2]) " " (p[3]) " " (p[4]) }
                    td class="n elo" { (m.elo_text) }
                    td class="sprt" {
                        @match &r.sprt {
                            Some(s) => { (s.bounds_text()) ": " (s.text()) }
                            None => { "-" }
                        }
                    }
                    td class="n" { (m.pairs_per_second.map_or_else(|| "-".into(), |x| format!("{x:.2}"))) }
                    td class="n" { (last_activity(m.last_activity_seconds)) }
                }
            }
        }
    }
}

/// A chart drawn by the one chart code, as inline SVG; a chart that cannot be drawn says why.
fn drawn(chart: &Chart, size: (u32, u32)) -> Markup {
    match chart.svg(size) {
        Ok(svg) => PreEscaped(svg),
        Err(e) => html! { p { "the chart could not be drawn: " (e) } },
    }
}

/// The θ line's colour on a variable's chart.
const THETA: Colour = Colour(31, 95, 191, 1.0);

/// One variable's small chart: θ over iterations, its start (dashed grey), its bounds (dashed
/// red, when in view) and the c_k band around θ.
fn var_chart(series: &Series, i: usize, v: &VarView) -> Chart {
    let values = &series.values[i];
    let band = &series.band[i];
    let at = |sign: f64| -> Vec<(f64, f64)> {
        series
            .band_points
            .iter()
            .zip(band)
            .map(|(&p, &c)| (series.iterations[p] as f64, values[p] + sign * c))
            .collect()
    };
    let mut c = Chart::new(
        Axis::new("iteration", Ticks::Whole),
        Axis::new("value", Ticks::Value),
    );
    c.mark(
        Mark::Band {
            upper: at(1.0),
            lower: at(-1.0),
        },
        THETA.alpha(0.13),
    )
    .mark(
        Mark::Rule {
            y: v.start,
            in_frame: true,
        },
        Colour::GREY,
    );
    for b in [v.min, v.max] {
        c.mark(
            Mark::Rule {
                y: b,
                in_frame: false,
            },
            Colour::RED,
        );
    }
    c.mark(
        Mark::Line {
            points: series
                .iterations
                .iter()
                .zip(values)
                .map(|(&k, &y)| (k as f64, y))
                .collect(),
            width: 2,
        },
        THETA,
    );
    c
}

/// Every variable's move from its start in units of its c_end, on one chart: variables of
/// different scales compare, and c_end does not shrink as the run goes on. The names are in a
/// key below it, in each line's colour.
fn moves_chart(series: &Series, vars: &[VarView]) -> Markup {
    let mut c = Chart::new(
        Axis::new("iteration", Ticks::Whole),
        Axis::new("(θ − start)/c_end", Ticks::Value),
    );
    c.mark(
        Mark::Rule {
            y: 0.0,
            in_frame: true,
        },
        Colour::GREY,
    );
    for (i, v) in vars.iter().enumerate() {
        let points = series
            .iterations
            .iter()
            .zip(&series.values[i])
            .map(|(&k, &x)| (k as f64, (x - v.start) / v.c_end))
            .collect();
        c.mark(Mark::Line { points, width: 2 }, Colour::series(i));
    }
    html! {
        h2 { "Moves in units of c_end" }
        p { "(θ − start)/c_end of every variable, one colour each; dashed grey 0" }
        div class="chart" id="moves-chart" {
            (drawn(&c, (760, 400)))
            p class="key" {
                @for (i, v) in vars.iter().enumerate() {
                    span style={ "color:" (Colour::series(i).css()) } { "━ " (v.name) } " "
                }
            }
        }
    }
}

/// The learning curve: training and validation loss, the plot's chart.
fn loss_chart(loss: &[LossPoint]) -> Markup {
    let pick = |f: fn(&LossPoint) -> Option<f64>| -> Vec<(f64, f64)> {
        loss.iter()
            .filter_map(|p| f(p).map(|y| (p.iteration as f64, y)))
            .collect()
    };
    let last = loss.last().map_or(1, |p| p.iteration);
    let c =
        crate::report::loss_curve::chart_of(pick(|p| p.train), pick(|p| p.validation), last, "");
    html! {
        div class="chart" id="loss-chart" { (drawn(&c, (760, 400))) }
    }
}

/// The live Elo curve, drawn by the same chart code as `spsa report --plot`
/// ([`crate::report::elo_curve::chart`]): axes with ticks and units, each point with its 95% bar,
/// the gain so far as it stood at each point with its 95% band, and a legend; then the gain so
/// far and the latest point per opponent in words.
fn elo_chart(track: &[TrackPoint], gained: &[model::GainView]) -> Markup {
    let points: Vec<crate::spsa::track::Point> = track.iter().map(TrackPoint::point).collect();
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
    html! {
        div class="chart" id="elo-chart" {
            (drawn(&crate::report::elo_curve::chart(&points, ""), (760, 400)))
        }
        @for g in gained {
            p class="gained" id={ "gained-" (g.against) } { "against " (g.against) ": " (g.text) }
        }
        p { "latest " (lines.join("; ")) }
    }
}

/// Games (or evaluations) per second over time; time runs to the right, each tick says how long
/// before the last sample it was.
fn rate_chart(history: &[(f64, f64)], unit: &str) -> Markup {
    let end = history.last().map_or(0.0, |l| l.0);
    let mut c = Chart::new(
        Axis::new("time", Ticks::Ago { end }),
        Axis::new(unit, Ticks::Value),
    );
    c.mark(
        Mark::Rule {
            y: 0.0,
            in_frame: true,
        },
        Colour::GREY,
    );
    c.mark(
        Mark::Line {
            points: history.to_vec(),
            width: 2,
        },
        Colour::GREEN,
    );
    let lo = history
        .iter()
        .map(|p| p.1)
        .fold(f64::MAX, f64::min)
        .max(0.0);
    let hi = history.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let span = end - history.first().map_or(0.0, |p| p.0);
    html! {
        div class="chart" id="rate-chart" {
            (drawn(&c, (760, 300)))
            p { (num(lo)) " … " (num(hi)) " " (unit) ", over the last " (format_duration(span)) }
        }
    }
}

/// The run page's live part.
pub fn run_page(d: &RunDetail, version: &str) -> Markup {
    let s = &d.summary;
    html! {
        div data-version=(version) {
            h1 { (s.name) }
            p { (d.source) }
            table id="summary" {
                tr { th { "objective" } td { (s.objective) } th { "state" } td id="state" { (s.state) } }
                tr { th { "progress" } td id="progress" { (progress(s)) } th { "rate" } td { (rate(s)) } }
                tr { th { "time left" } td { (opt_duration(s.seconds_left)) } th { "faults" } td id="faults" { (s.faults) } }
                tr { th { "last activity" } td { (last_activity(s.last_activity_seconds)) } th { "priority" } td id="priority" { (priority(s)) } }
                tr { th {} td {} th { "throughput" } td id="throughput" { (s.throughput.map(|p| p.to_string()).unwrap_or_else(|| "-".into())) } }
            }
            h2 { "Values" }
            (var_search(d))
            table id="values" {
                tr {
                    th { "variable" } th { "current" } th { "engine" } th { "start" } th { "min" }
                    th { "max" } th { "c_k" } th { "c_end" } th { "moved/c_end" }
                }
                @for (i, v) in d.vars.iter().enumerate() {
                    tr data-var=(i) {
                        td class="name" { (v.name) }
                        td class="n current" { (num(v.current)) }
                        td class="n engine" { (v.engine_value) }
                        td class="n" { (num(v.start)) }
                        td class="n" { (num(v.min)) }
                        td class="n" { (num(v.max)) }
                        td class="n" { (num(v.c_k)) }
                        td class="n" { (num(v.c_end)) }
                        td class="n moved" { (format!("{:+.2}", v.drift_c_end)) }
                    }
                }
            }
            (theta_charts(d))
            @if !d.series.values.is_empty() { (moves_chart(&d.series, &d.vars)) }
            @if !d.track.is_empty() {
                h2 { "Elo on held-out openings" }
                (elo_chart(&d.track, &d.gained))
            }
            @if !d.verification.is_empty() { (verification(&d.verification)) }
            (objective(d))
            h2 { "Rate" }
            @if d.rate_history.len() >= 2 {
                (rate_chart(&d.rate_history, &s.rate_unit))
            } @else if matches!(s.state.as_str(), "finished" | "stopped" | "paused") {
                // Nothing plays, so nothing is sampled: say so rather than promise samples to come.
                p id="rate-none" { "the run is " (s.state) ": no games are being played, so there is no rate to sample" }
            } @else {
                p { "not enough samples yet" }
            }
            (workers(d))
            (engines(d))
            (current_values(d))
        }
    }
}

/// The `[verify]` steps recorded: each step's test, whether it passed and its verdict, then
/// the ladder's outcome (the steps not played, and why).
fn verification(steps: &[crate::tuner::verification::Step]) -> Markup {
    let of = steps.last().map_or(1, |s| s.of);
    let summary = crate::tuner::verification::summary(steps, of);
    html! {
        h2 { "Verification" }
        table id="verification" {
            tr { th { "step" } th { "test" } th { "result" } th { "verdict" } }
            @for s in steps {
                tr {
                    td class="n" { (s.step) " of " (s.of) }
                    td { (s.header.as_deref().unwrap_or("[verify]")) }
                    td class="result" {
                        (match s.passed { Some(true) => "passed", Some(false) => "failed", None => "-" })
                    }
                    td class="verdict" { (s.verdict) }
                }
            }
        }
        @for line in summary.lines().skip(steps.len()) {
            p class="verification-outcome" { (line.trim_start_matches("verification: ")) }
        }
    }
}

/// Trajectories, one small chart per variable, with a note on how many rows they draw.
fn theta_charts(d: &RunDetail) -> Markup {
    let rows = d.series.rows;
    let shown = d.series.iterations.len();
    let note = if let Some(when) = &d.series.pruned {
        format!(
            "; their records were pruned on {when} (spsa prune): no history is left to draw, the current values below are the final θ"
        )
    } else if shown < rows as usize {
        format!(
            ", read at {shown} evenly spread (at most {}) and drawn with one point per pixel column at most",
            model::MAX_POINTS
        )
    } else {
        String::new()
    };
    html! {
        h2 { "θ over iterations" }
        p id="points-note" {
            (rows) " rows" (note) "; blue θ, shaded θ ± c_k, dashed grey the start, dashed red a bound (when in view)"
        }
        div class="grid" {
            @if !d.series.values.is_empty() {
                @for (i, v) in d.vars.iter().enumerate() {
                    @let vals = &d.series.values[i];
                    div class="cell" data-var=(i) {
                        h4 { (v.name) }
                        div class="var-chart" { (drawn(&var_chart(&d.series, i, v), (320, 200))) }
                        p {
                            "θ " (num(vals.iter().copied().fold(f64::MAX, f64::min))) " … "
                            (num(vals.iter().copied().fold(f64::MIN, f64::max)))
                            ", bounds [" (num(v.min)) ", " (num(v.max)) "]"
                        }
                    }
                }
            }
        }
    }
}

/// The objective's part: the learning curve of a tune from positions, else the games θ+ and θ−
/// played.
fn objective(d: &RunDetail) -> Markup {
    if !d.loss.is_empty() {
        return html! { h2 { "Loss" } (loss_chart(&d.loss)) };
    }
    let [w, dr, l] = d.wdl;
    let elo = model::elo(d.wdl)
        .map(crate::stats::format_elo)
        .unwrap_or_else(|| "-".into());
    let p = d.pentanomial;
    html! {
        h2 { "Games" }
        p { "θ+ against θ−: +" (w) " =" (dr) " −" (l) ", Elo " (elo) " (how far apart the perturbed pair plays, not the gain)" }
        table id="pentanomial" {
            tr { th { "pair points" } th { "0" } th { "½" } th { "1" } th { "1½" } th { "2" } }
            tr {
                td { "pairs" }
                @for n in p { td class="n" { (n) } }
            }
        }
    }
}

/// A shared run's workers: results, faults, when each was last heard from, its clock.
fn workers(d: &RunDetail) -> Markup {
    if d.workers.is_empty() && !d.summary.id.starts_with("db-") {
        return html! {};
    }
    html! {
        h2 { "Workers" }
        @if let Some(nps) = d.reference_nps {
            p id="clock-note" {
                "Each worker's clock is scaled by the run's reference speed, " (nps.round())
                " nodes/s, over its engine's speed on that machine (within ×0.25 to ×4); each game's PGN states it (TimeControlScale)."
            }
        }
        table id="workers" {
            tr {
                th { "worker" } th { "results" } th { "faults" } th { "last report" } th { "last seen" }
                th { "clock" } th { "note" }
            }
            @for w in &d.workers {
                tr {
                    td { (w.name) }
                    td class="n" { (w.results) }
                    td class="n" { (w.faults) }
                    td class="n" { (format_duration(w.last_report_seconds)) " ago" }
                    td class="n" { (last_activity(w.last_seen_seconds)) }
                    td class="n" {
                        @match (w.clock_scale, w.nps) {
                            (Some(scale), Some(nps)) => { (crate::db::status::clock_text(scale, nps)) }
                            _ => { "-" }
                        }
                    }
                    td { (w.note) }
                }
            }
        }
    }
}

/// What each worker checked before playing, and why it refused.
fn engines(d: &RunDetail) -> Markup {
    if d.engines.is_empty() {
        return html! {};
    }
    html! {
        h2 { "Engines" }
        p { "What each worker checked before playing: the engine it runs (fetched from the run, or its own build), the search signature it measured, and why it refused the run." }
        table id="engines" {
            tr { th { "worker" } th { "side" } th { "engine" } th { "signature" } th { "verdict" } }
            @for e in &d.engines {
                tr {
                    td { (e.worker) }
                    td { (e.side) }
                    td { (if e.own_build { "own build" } else { "fetched" }) " " (crate::db::engines::short(&e.sha256)) }
                    td { (e.signature) }
                    td style="white-space:pre-wrap" {
                        @match &e.refused {
                            None => { "plays" }
                            Some(why) => { "refused: " (why) }
                        }
                    }
                }
            }
        }
    }
}

/// The current values to paste: UCI lines and a variables file (or, for a run too wide for the
/// page, the command that prints them).
fn current_values(d: &RunDetail) -> Markup {
    let rows = d.vars.len().clamp(2, 12);
    html! {
        h2 { "Current values" }
        @if d.uci.is_empty() && d.var_page.total > d.vars.len() {
            p id="values-all" {
                (d.var_page.total) " variables: `spsa report LOG --format uci` (or csv, openbench, …) gives every value."
            }
        } @else {
            p { "For the engine (UCI):" }
            textarea id="uci" readonly rows=(rows) { (d.uci) }
            p { "As a variables file:" }
            textarea id="csv" readonly rows=(rows + 2) { (d.csv) }
        }
    }
}

/// A run with many variables: the search box, which of them the page shows, and the pages.
fn var_search(d: &RunDetail) -> Markup {
    let p = &d.var_page;
    if p.total <= model::PAGE_VARS && p.query.is_empty() {
        return html! {};
    }
    let first = p.page * model::PAGE_VARS;
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
    html! {
        form id="var-search" method="get" {
            input type="search" name="q" value=(p.query) placeholder={ "search " (p.total) " variables" };
            " "
            button { "search" }
        }
        p id="var-note" {
            "variables " ((first + 1).min(p.matched)) "–" (first + d.vars.len()) " of " (p.matched) " shown ("
            @if p.query.is_empty() {
                "the most moved in units of c_end first"
            } @else {
                (p.matched) " match “" (p.query) "”, most moved first"
            }
            "); their charts below"
        }
        p {
            @if p.page > 0 {
                a id="var-prev" href=(link(p.page - 1)) { "previous " (model::PAGE_VARS) }
                " "
            }
            @if p.page + 1 < p.pages {
                a id="var-next" href=(link(p.page + 1)) { "next " (model::PAGE_VARS) }
            }
        }
    }
}

/// The admin buttons of a shared run (only when serve was given a token file).
pub fn admin_panel(id: &str) -> Markup {
    html! {
        form class="admin" method="post" action={ "/runs/" (id) "/admin" } {
            b { "admin" } " token "
            input type="password" name="token" autocomplete="off";
            " " button name="action" value="pause" { "pause" }
            " " button name="action" value="resume" { "resume" }
            " " button name="action" value="stop" { "stop" }
            " priority "
            input type="number" name="priority" value="0" style="width:5em";
            " " button name="action" value="priority" { "set priority" }
            " throughput "
            input type="number" name="throughput" value="100" min="0" max="1000" step="any" style="width:6em";
            " " button name="action" value="throughput" { "set throughput" }
        }
    }
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
            verification: Vec::new(),
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
        let page = run_page(&all, "v").into_string();
        assert!(page.contains("id=\"var-search\"") && page.contains("search 1000 variables"));
        assert!(page.contains("variables 1–40 of 1000 shown"), "{page}");
        assert!(page.contains("href=\"?page=1\"") && !page.contains("var-prev"));
        assert_eq!(
            page.matches("<div class=\"cell\" data-var=").count(),
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
        let page = run_page(&found, "v").into_string();
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
            &html! {},
            None,
            "n0nce",
        );
        let live = live.into_string();
        // Only the page's own script; the names show as text.
        assert_eq!(html.matches("<script").count(), 1, "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains("<b>run</b>") && !html.contains("<x>"));
        let chart = live
            .split("class=\"var-chart\">")
            .nth(1)
            .and_then(|rest| rest.split("</svg>").next())
            .unwrap();
        assert_eq!(longest_polyline(chart).len(), 25);
        assert!(
            live.contains("25 rows;"),
            "no downsample note under the limit"
        );
    }

    /// The points of every polyline of an SVG chart.
    fn polylines(chart: &str) -> Vec<Vec<(i64, i64)>> {
        chart
            .split("<polyline ")
            .skip(1)
            .filter_map(|p| p.split("points=\"").nth(1)?.split('"').next())
            .map(|points| {
                points
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    /// The polyline of a chart with the most points: its data line (rules and dashes have two).
    fn longest_polyline(chart: &str) -> Vec<(i64, i64)> {
        polylines(chart)
            .into_iter()
            .max_by_key(Vec::len)
            .unwrap_or_default()
    }

    #[test]
    fn the_elo_chart_has_axes_the_points_and_the_gain_so_far() {
        let mut d = detail(25);
        let no_curve = run_page(&d, &d.version()).into_string();
        assert!(!no_curve.contains("elo-chart"));
        // Points every 10 iterations, 32 pairs each, θ scoring a little better each time.
        let point = |k: u64, against: &str, pentanomial: [u64; 5]| {
            model::TrackPoint::of(&crate::spsa::track::Point::measured(
                k,
                10 * k,
                crate::spsa::track::Against::parse(against).unwrap(),
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
        let live = run_page(&d, &version).into_string();
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
        let running = run_page(&d, &d.version()).into_string();
        assert!(running.contains("not enough samples yet"));
        d.summary.state = "finished".into();
        let done = run_page(&d, &d.version()).into_string();
        assert!(!done.contains("not enough samples yet"), "{done}");
        assert!(done.contains("the run is finished: no games are being played"));
    }

    #[test]
    fn the_moves_chart_draws_each_variable_in_units_of_its_c_end() {
        let d = detail(25);
        let live = run_page(&d, &d.version()).into_string();
        // The values table: c_end and the move in its units.
        assert!(
            live.contains("<th>c_end</th><th>moved/c_end</th>"),
            "{live}"
        );
        assert!(live.contains("<td class=\"n moved\">+4.00</td>"), "{live}");
        let part = live.split("id=\"moves-chart\">").nth(1).unwrap();
        let (chart, key) = part.split_once("</svg>").unwrap();
        assert!(
            key.contains("━ &lt;script&gt;alert(1)&lt;/script&gt;") && !key.contains("<script>"),
            "names escaped in the key: {key}"
        );
        let points = longest_polyline(chart);
        assert_eq!(points.len(), 25);
        // θ rises from 0.1 to 2.5 past its start 1: (θ − 1)/0.25 runs from −3.6 to +6, so the
        // line climbs (SVG's y grows downwards) and crosses the dashed zero line, whose dashes
        // are one path of moves and lines at one height.
        assert!(points.windows(2).all(|w| w[1].1 <= w[0].1), "{points:?}");
        let grey = chart
            .split("<path ")
            .find(|p| p.contains("stroke=\"#808080\""))
            .unwrap();
        let dashes = grey
            .split("d=\"M")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert!(dashes.matches('M').count() > 10, "a dashed line: {dashes}");
        let zero: i64 = dashes
            .split(['L', 'M'])
            .map(|p| p.split_once(',').unwrap().1.parse::<i64>().unwrap())
            .reduce(|a, b| {
                assert_eq!(a, b, "every dash at one height");
                a
            })
            .unwrap();
        assert!(
            points[0].1 > zero && points[24].1 < zero,
            "{points:?} vs {zero}"
        );
        // Axes a user can read: the axis names and round iteration ticks.
        assert!(chart.contains("(θ − start)/c_end") && chart.contains("iteration"));
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
        let page = run_page(&d, "v").into_string();
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
        let page = run_page(&d, "v").into_string();
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
        let list = runs_list(&runs, &[m], "v", "1 match(es)").into_string();
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

    /// Hostile text in every place a user or a worker writes it comes out as text: no element,
    /// and no attribute closed early by a quote.
    #[test]
    fn every_written_text_is_escaped_by_the_template() {
        let evil = "\"><script>alert('x')</script>&";
        let mut d = detail(5);
        d.summary.name = evil.into();
        d.summary.id = "db-1".into();
        d.source = evil.into();
        d.vars[0].name = evil.into();
        d.vars[0].engine_value = evil.into();
        d.workers = vec![model::WorkerView {
            name: evil.into(),
            results: 1,
            faults: 0,
            last_report_seconds: 1.0,
            last_seen_seconds: None,
            note: evil.into(),
            nps: None,
            clock_scale: None,
        }];
        d.var_page = model::VarPage {
            total: 100,
            matched: 1,
            query: evil.into(),
            ..Default::default()
        };
        let live = run_page(&d, "v");
        let html = page(evil, evil, &live, &html! {}, Some(&admin_panel(evil)), "n");
        assert_eq!(
            html.matches("<script").count(),
            1,
            "only the page's own: {html}"
        );
        assert!(
            !html.contains(evil) && !html.contains("<script>alert"),
            "{html}"
        );
        assert!(
            html.contains("&quot;&gt;&lt;script&gt;alert('x')&lt;/script&gt;&amp;"),
            "{html}"
        );
    }

    /// A run's recorded `[verify]` ladder on its page: each step's test, result and verdict
    /// (escaped), the steps not played and the outcome; the page's version changes with a step.
    #[test]
    fn the_page_shows_each_verification_step_and_the_ladders_outcome() {
        let mut d = detail(5);
        assert!(
            !run_page(&d, &d.version())
                .into_string()
                .contains("Verification")
        );
        let before = d.version();
        let text = crate::tuner::verification::block(
            1,
            3,
            "SPRT [0,2] at 10000+100 ms against the start",
            "verdict: tuned is better than start <b>\n",
            true,
        ) + &crate::tuner::verification::block(
            2,
            3,
            "SPRT [0.5,2.5] at 60000+600 ms against the start",
            "verdict: no gain of tuned over start shown\n",
            false,
        );
        d.verification = crate::tuner::verification::parse(&text);
        assert_ne!(d.version(), before);
        let page = run_page(&d, &d.version()).into_string();
        let table = page
            .split("<table id=\"verification\">")
            .nth(1)
            .and_then(|t| t.split("</table>").next())
            .unwrap();
        assert!(table.contains("SPRT [0.5,2.5] at 60000+600 ms"), "{table}");
        assert!(
            table.contains("<td class=\"result\">passed</td>"),
            "{table}"
        );
        assert!(
            table.contains("<td class=\"result\">failed</td>"),
            "{table}"
        );
        assert!(
            table.contains("tuned is better than start &lt;b&gt;"),
            "{table}"
        );
        assert!(
            page.contains("step 3 of 3 not played (the ladder stopped at step 2)"),
            "{page}"
        );
        assert!(page.contains("failed at step 2 of 3"), "{page}");
    }
}
