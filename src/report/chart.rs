//! One chart code for every chart a user sees: the plots of `spsa report --plot` (PNG or SVG
//! files) and the charts of `spsa serve`'s page (SVG inline). A [`Chart`] says what is drawn
//! (lines, dashed lines, shaded bands, error bars, points, horizontal rules) and how its axes are
//! named and labelled; [`Chart::svg`] and [`Chart::draw`] draw it with plotters, with axes, tick
//! labels, axis names and, when asked, a legend. The text in a chart (names, legends) is escaped
//! by plotters' SVG backend, so a variable's name cannot inject markup into the page.

use std::path::Path;
use std::sync::Once;

use anyhow::{Context, Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::progress::format_duration;
use crate::vars::format_value;

/// The font every chart writes with (DejaVu Sans, Bitstream Vera license, see
/// `font/LICENSE-DejaVu.txt`), compiled in: no system font or graphics library is needed.
static FONT: &[u8] = include_bytes!("font/DejaVuSans.ttf");
pub(crate) const FAMILY: &str = "sans-serif";

pub(crate) fn register_font() -> Result<()> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .map_err(|_| anyhow!("the embedded font does not load"));
    });
    result
}

/// Draw on a `.png` or `.svg` file of `size`, by its extension ([`plot_format`]): `$draw` is
/// called with the file's drawing area (expanded once per backend, since each is its own type).
macro_rules! draw_to_file {
    ($file:expr, $size:expr, $draw:expr) => {{
        let file: &std::path::Path = $file;
        match super::chart::plot_format(file) {
            Ok(super::chart::PlotFormat::Png) => super::chart::draw_png(file, $size, $draw),
            Ok(super::chart::PlotFormat::Svg) => {
                ($draw)(SVGBackend::new(file, $size).into_drawing_area())
            }
            Err(e) => Err(anyhow::Error::from(e)),
        }
    }};
}
pub(crate) use draw_to_file;

/// What a plot file is written as.
pub(crate) enum PlotFormat {
    Png,
    Svg,
}

/// What `file` is drawn as, by its extension; refused (the user's to fix, exit 2) when its
/// folder is not there, where the backends' own failure to create the file read as ours (exit
/// 1), or when it ends in neither `.png` nor `.svg`.
pub(crate) fn plot_format(file: &Path) -> Result<PlotFormat, super::ReportError> {
    let folder = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !folder.is_dir() {
        return Err(super::ReportError(format!(
            "{}: there is no folder {} to write the plot in",
            file.display(),
            folder.display()
        )));
    }
    match file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => Ok(PlotFormat::Png),
        Some("svg") => Ok(PlotFormat::Svg),
        _ => Err(super::ReportError(format!(
            "{}: the plot file must end in .png or .svg",
            file.display()
        ))),
    }
}

/// Draw on an RGB buffer of `size` and write it to `file` as a PNG with the `png` crate.
/// plotters' own PNG writer (its `bitmap_encoder` feature) brought the `image` crate and its
/// JPEG decoder to every build for this (13 CPU-s of a cold build's 600; docs/records/
/// development.md, "CI under 600 s, again").
pub(crate) fn draw_png<F>(file: &Path, (width, height): (u32, u32), draw: F) -> Result<()>
where
    F: for<'b> FnOnce(DrawingArea<BitMapBackend<'b>, Shift>) -> Result<()>,
{
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    draw(BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area())?;
    let out = std::io::BufWriter::new(std::fs::File::create(file)?);
    let mut encoder = png::Encoder::new(out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(())
}

/// A colour, with its opacity (1 opaque, 0 invisible).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Colour(pub u8, pub u8, pub u8, pub f64);

impl Colour {
    pub const BLUE: Colour = Colour(31, 119, 180, 1.0);
    pub const ORANGE: Colour = Colour(255, 127, 14, 1.0);
    pub const GREEN: Colour = Colour(51, 136, 51, 1.0);
    pub const RED: Colour = Colour(204, 51, 51, 1.0);
    pub const GREY: Colour = Colour(128, 128, 128, 1.0);
    pub const BLACK: Colour = Colour(0, 0, 0, 1.0);

    /// The colour of series `i` where several share a chart: ten, then again. The page's key
    /// writes the same colours ([`Colour::css`]).
    pub fn series(i: usize) -> Colour {
        const TEN: [(u8, u8, u8); 10] = [
            (31, 119, 180),
            (255, 127, 14),
            (44, 160, 44),
            (214, 39, 40),
            (148, 103, 189),
            (140, 86, 75),
            (227, 119, 194),
            (127, 127, 127),
            (188, 189, 34),
            (23, 190, 207),
        ];
        let (r, g, b) = TEN[i % TEN.len()];
        Colour(r, g, b, 1.0)
    }

    /// The same colour, with opacity `alpha`.
    pub fn alpha(self, alpha: f64) -> Colour {
        Colour(self.0, self.1, self.2, alpha)
    }

    /// As CSS (`#rrggbb`), for text beside a chart in the colour of its line.
    pub fn css(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    fn rgba(self) -> RGBAColor {
        RGBColor(self.0, self.1, self.2).mix(self.3)
    }
}

/// How an axis's ticks are written.
#[derive(Clone, Copy, Debug)]
pub enum Ticks {
    /// Whole numbers (iterations).
    Whole,
    /// Whole numbers with their sign (Elo).
    Signed,
    /// Values to at most 4 decimals, as the variables file writes them.
    Value,
    /// Values with this many decimals (a loss).
    Fixed(usize),
    /// Seconds before `end`, as a duration (`now`, `−5m 0s`): time that runs to the right.
    Ago { end: f64 },
}

impl Ticks {
    fn text(self, v: f64) -> String {
        match self {
            Ticks::Whole => format!("{v:.0}"),
            Ticks::Signed => format!("{v:+.0}"),
            Ticks::Value => format_value(v, 4),
            Ticks::Fixed(decimals) => format!("{v:.decimals$}"),
            Ticks::Ago { end } => {
                let s = end - v;
                if s < 0.5 {
                    "now".into()
                } else {
                    format!("−{}", format_duration(s))
                }
            }
        }
    }
}

/// An axis: its name (with its unit) and how its ticks read.
#[derive(Clone, Debug)]
pub struct Axis {
    pub name: String,
    pub ticks: Ticks,
}

impl Axis {
    pub fn new(name: &str, ticks: Ticks) -> Axis {
        Axis {
            name: name.into(),
            ticks,
        }
    }
}

/// One thing drawn on a chart.
#[derive(Clone, Debug)]
pub enum Mark {
    /// A line through the points, `width` pixels wide.
    Line { points: Vec<(f64, f64)>, width: u32 },
    /// The same, dashed.
    Dashed { points: Vec<(f64, f64)>, width: u32 },
    /// A dashed line across the chart at `y`; `in_frame` makes the frame hold it, otherwise it
    /// is drawn only when the other marks' frame does (a bound far from the values).
    Rule { y: f64, in_frame: bool },
    /// The area between two lines (`upper` and `lower` at the same x, in order).
    Band {
        upper: Vec<(f64, f64)>,
        lower: Vec<(f64, f64)>,
    },
    /// Vertical bars (x, low, high): intervals around points.
    Bars(Vec<(f64, f64, f64)>),
    /// Filled circles.
    Dots(Vec<(f64, f64)>),
}

/// One mark in its colour, with its legend text when it has one.
#[derive(Clone, Debug)]
pub struct Drawn {
    pub mark: Mark,
    pub colour: Colour,
    pub label: Option<String>,
}

/// Where the legend goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Legend {
    None,
    UpperRight,
    LowerRight,
    /// A strip of its own to the right of the chart, so that it never hides a line (the θ plot's
    /// many variables).
    Strip,
}

/// A chart: what to draw and how its axes read.
#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub marks: Vec<Drawn>,
    pub legend: Legend,
    /// The x range, when it is not that of the marks (a plot starts at iteration 0).
    pub x_range: Option<(f64, f64)>,
    /// The smallest span of y the frame shows (a flat curve still gets readable ticks).
    pub min_y_span: f64,
}

/// plotters writes every dash of a dashed line (and each tick and rule) as a polyline of two
/// points, about 94 bytes each: 3,181 of them were 298 kB of the 50-variable run page's 776 kB.
/// Consecutive ones with the same stroke become one `<path>` of moves and lines, drawn the same.
/// `points` with at most `n` of them: the first and the last, and from each of `n` − 2 equal
/// runs between them the point that makes the largest triangle with the point kept before it
/// and the mean of the next run (Steinarsson's largest-triangle-three-buckets), so peaks and
/// dips survive where an even spread would step over them.
fn thin(points: &[(f64, f64)], n: usize) -> Vec<(f64, f64)> {
    let len = points.len();
    if n < 3 || len <= n {
        return points.to_vec();
    }
    let buckets = n - 2;
    // Bucket b holds the middle points [start(b), start(b + 1)).
    let start = |b: usize| 1 + b * (len - 2) / buckets;
    let mut kept = Vec::with_capacity(n);
    kept.push(points[0]);
    let mut prev = points[0];
    for b in 0..buckets {
        let next = if b + 1 < buckets {
            &points[start(b + 1)..start(b + 2)]
        } else {
            &points[len - 1..]
        };
        let count = next.len() as f64;
        let (mx, my) = next
            .iter()
            .fold((0.0, 0.0), |(x, y), p| (x + p.0 / count, y + p.1 / count));
        let area = |p: &(f64, f64)| {
            ((prev.0 - mx) * (p.1 - prev.1) - (prev.0 - p.0) * (my - prev.1)).abs()
        };
        let best = points[start(b)..start(b + 1)].iter().copied().fold(
            None,
            |best: Option<(f64, f64)>, p| match best {
                Some(q) if area(&q) >= area(&p) => Some(q),
                _ => Some(p),
            },
        );
        if let Some(p) = best {
            kept.push(p);
            prev = p;
        }
    }
    kept.push(points[len - 1]);
    kept
}

fn merge_segments(svg: &str) -> String {
    /// The attributes and the two points of a two-point polyline on a line of its own.
    fn segment(line: &str) -> Option<(&str, &str, &str)> {
        let rest = line
            .trim_end()
            .strip_prefix("<polyline ")?
            .strip_suffix("\"/>")?;
        let (attributes, points) = rest.split_once(" points=\"")?;
        let mut p = points.split_whitespace();
        let (a, b) = (p.next()?, p.next()?);
        p.next().is_none().then_some((attributes, a, b))
    }
    let mut out = String::with_capacity(svg.len());
    let mut run: Option<(&str, String)> = None;
    let flush = |out: &mut String, run: &mut Option<(&str, String)>| {
        if let Some((attributes, d)) = run.take() {
            out.push_str(&format!("<path {attributes} d=\"{d}\"/>\n"));
        }
    };
    for line in svg.split_inclusive('\n') {
        if let Some((attributes, a, b)) = segment(line) {
            match &mut run {
                Some((same, d)) if *same == attributes => d.push_str(&format!("M{a}L{b}")),
                _ => {
                    flush(&mut out, &mut run);
                    run = Some((attributes, format!("M{a}L{b}")));
                }
            }
            continue;
        }
        flush(&mut out, &mut run);
        out.push_str(line);
    }
    flush(&mut out, &mut run);
    out
}

impl Chart {
    pub fn new(x: Axis, y: Axis) -> Chart {
        Chart {
            title: String::new(),
            x,
            y,
            marks: Vec::new(),
            legend: Legend::None,
            x_range: None,
            min_y_span: 0.0,
        }
    }

    /// Add a mark in `colour`, without a legend entry.
    pub fn mark(&mut self, mark: Mark, colour: Colour) -> &mut Chart {
        self.marks.push(Drawn {
            mark,
            colour,
            label: None,
        });
        self
    }

    /// Add a mark in `colour` with its legend text.
    pub fn labelled(&mut self, mark: Mark, colour: Colour, label: &str) -> &mut Chart {
        self.marks.push(Drawn {
            mark,
            colour,
            label: Some(label.into()),
        });
        self
    }

    /// The chart as an SVG document of `size` pixels (the page's charts).
    pub fn svg(&self, size: (u32, u32)) -> Result<String> {
        register_font()?;
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
            self.draw_on(&root)?;
            root.present()?;
        }
        Ok(merge_segments(&out))
    }

    /// Draw the chart to `file` (`.png` or `.svg`, by its extension).
    pub fn draw(&self, file: &Path, size: (u32, u32)) -> Result<()> {
        register_font()?;
        draw_to_file!(file, size, |root: DrawingArea<_, Shift>| {
            self.draw_on(&root)?;
            root.present()?;
            Ok(())
        })
        .with_context(|| format!("{}: cannot draw", file.display()))
    }

    /// The frame: the marks' x and y ranges, y padded, never empty.
    fn frame(&self) -> ((f64, f64), (f64, f64)) {
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        let mut see = |x: f64, y: f64| {
            if x.is_finite() {
                x0 = x0.min(x);
                x1 = x1.max(x);
            }
            if y.is_finite() {
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        };
        for d in &self.marks {
            match &d.mark {
                Mark::Line { points, .. } | Mark::Dashed { points, .. } | Mark::Dots(points) => {
                    points.iter().for_each(|&(x, y)| see(x, y))
                }
                Mark::Band { upper, lower } => {
                    upper.iter().chain(lower).for_each(|&(x, y)| see(x, y))
                }
                Mark::Bars(bars) => bars.iter().for_each(|&(x, lo, hi)| {
                    see(x, lo);
                    see(x, hi)
                }),
                Mark::Rule { y, in_frame: true } => see(f64::NAN, *y),
                Mark::Rule { .. } => {}
            }
        }
        let (x0, x1) = match self.x_range {
            Some(r) => r,
            None if x0 > x1 => (0.0, 1.0),
            None if x1 <= x0 => (x0, x0 + 1.0),
            None => (x0, x1),
        };
        if y0 > y1 {
            (y0, y1) = (0.0, 1.0);
        }
        let short = (self.min_y_span - (y1 - y0)).max(0.0) / 2.0;
        let (y0, y1) = (y0 - short, y1 + short);
        let pad = ((y1 - y0) * 0.06).max(1e-9 * y0.abs().max(1.0));
        ((x0, x1), (y0 - pad, y1 + pad))
    }

    /// Draw on `root`: the whole of a file, or a panel of one (the θ plot's two).
    pub(crate) fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let (width, _) = root.dim_in_pixel();
        // A small chart (a cell of the page) gets small type and narrow label areas.
        let small = width < 500;
        let (label, desc, x_area, y_area) = if small {
            (11, 12, 34, 46)
        } else {
            (14, 16, 45, 80)
        };
        let (plot_area, strip) = if self.legend == Legend::Strip {
            let (a, b) = root.split_horizontally(width.saturating_sub(STRIP_WIDTH));
            (a, Some(b))
        } else {
            (root.clone(), None)
        };
        let ((x0, x1), (y0, y1)) = self.frame();
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(&self.title, (FAMILY, if small { 14 } else { 20 }))
            .margin(if small { 6 } else { 14 })
            .margin_right(if small { 12 } else { 30 })
            .x_label_area_size(x_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let (xt, yt) = (self.x.ticks, self.y.ticks);
        let x_text = move |v: &f64| xt.text(*v);
        let y_text = move |v: &f64| yt.text(*v);
        chart
            .configure_mesh()
            .x_desc(self.x.name.as_str())
            .y_desc(self.y.name.as_str())
            .x_labels(if small { 4 } else { 10 })
            .y_labels(if small { 4 } else { 10 })
            .label_style((FAMILY, label))
            .axis_desc_style((FAMILY, desc))
            .x_label_formatter(&x_text)
            .y_label_formatter(&y_text)
            // No light lines between the labelled ones: at 4% they were hardly seen and made
            // most of the page's bytes (about 100 a chart, 50 θ charts a page).
            .max_light_lines(0)
            .draw()?;
        let dash = if small { 4 } else { 8 };
        // A line is drawn with at most one point per pixel column of the plot: more cannot be
        // seen, and on the page they were most of its bytes (400-row series in 260 pixels).
        let columns = chart.plotting_area().dim_in_pixel().0 as usize;
        for d in &self.marks {
            let colour = d.colour.rgba();
            let anno = match &d.mark {
                Mark::Line { points, width } => chart.draw_series(LineSeries::new(
                    thin(points, columns),
                    colour.stroke_width(*width),
                ))?,
                Mark::Dashed { points, width } => chart.draw_series(DashedLineSeries::new(
                    thin(points, columns),
                    dash,
                    dash / 2 + 1,
                    colour.stroke_width(*width),
                ))?,
                Mark::Rule { y, .. } if *y < y0 || *y > y1 => continue,
                Mark::Rule { y, .. } => chart.draw_series(DashedLineSeries::new(
                    [(x0, *y), (x1, *y)],
                    dash,
                    dash / 2 + 1,
                    colour.stroke_width(1),
                ))?,
                Mark::Band { upper, lower } => {
                    let outline: Vec<(f64, f64)> =
                        upper.iter().chain(lower.iter().rev()).copied().collect();
                    if outline.len() < 3 {
                        continue;
                    }
                    chart.draw_series(std::iter::once(Polygon::new(outline, colour)))?
                }
                Mark::Bars(bars) => chart.draw_series(bars.iter().map(|&(x, lo, hi)| {
                    PathElement::new(vec![(x, lo), (x, hi)], colour.stroke_width(1))
                }))?,
                Mark::Dots(points) => chart.draw_series(
                    points
                        .iter()
                        .map(|&p| Circle::new(p, if small { 2 } else { 3 }, colour.filled())),
                )?,
            };
            if let (Some(text), Legend::UpperRight | Legend::LowerRight) = (&d.label, self.legend) {
                let anno = anno.label(text.as_str());
                if matches!(d.mark, Mark::Dots(_)) {
                    anno.legend(move |(x, y)| Circle::new((x + 10, y), 3, colour.filled()));
                } else {
                    anno.legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
                    });
                }
            }
        }
        match self.legend {
            Legend::UpperRight | Legend::LowerRight => {
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.9))
                    .border_style(BLACK.mix(0.3))
                    .label_font((FAMILY, label))
                    .position(if self.legend == Legend::UpperRight {
                        SeriesLabelPosition::UpperRight
                    } else {
                        SeriesLabelPosition::LowerRight
                    })
                    .draw()?;
            }
            Legend::Strip => legend_strip(strip.as_ref().expect("split above"), &self.marks)?,
            Legend::None => {}
        }
        Ok(())
    }
}

const STRIP_WIDTH: u32 = 240;

/// The legend in its own strip to the right of the chart: each labelled mark's colour and name,
/// as many as fit, then how many more.
fn legend_strip<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, marks: &[Drawn]) -> Result<()>
where
    DB::ErrorType: 'static,
{
    const ROW: i32 = 20;
    let labelled: Vec<&Drawn> = marks.iter().filter(|d| d.label.is_some()).collect();
    let (_, height) = area.dim_in_pixel();
    let fits = ((height as i32 - 60) / ROW).max(1) as usize;
    let shown = if labelled.len() > fits {
        fits - 1
    } else {
        labelled.len()
    };
    let style = (FAMILY, 14)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, d) in labelled.iter().take(shown).enumerate() {
        let y = 45 + ROW * i as i32;
        area.draw(&PathElement::new(
            vec![(4, y), (26, y)],
            d.colour.rgba().stroke_width(3),
        ))?;
        let mut name = d.label.clone().unwrap_or_default();
        if name.chars().count() > 26 {
            name = name.chars().take(25).collect::<String>() + "…";
        }
        area.draw(&Text::new(name, (32, y), style.clone()))?;
    }
    if shown < labelled.len() {
        let y = 45 + ROW * shown as i32;
        area.draw(&Text::new(
            format!("… and {} more", labelled.len() - shown),
            (32, y),
            style,
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_thinned_to_its_columns_keeping_the_ends_and_a_spike() {
        let flat: Vec<(f64, f64)> = (0..1000)
            .map(|i| (i as f64, if i == 617 { 50.0 } else { (i % 3) as f64 }))
            .collect();
        let kept = thin(&flat, 100);
        assert_eq!(kept.len(), 100);
        assert_eq!((kept[0], kept[99]), (flat[0], flat[999]));
        assert!(kept.contains(&(617.0, 50.0)), "the spike is kept");
        assert!(
            kept.windows(2).all(|w| w[0].0 < w[1].0),
            "in order, none twice"
        );
        // Fewer points than columns, or too few columns to choose: drawn as they are.
        assert_eq!(thin(&flat[..80], 100), flat[..80].to_vec());
        assert_eq!(thin(&flat, 2), flat);
        // On the page: a 320-pixel chart of 400 rows draws one point per column of its plot.
        let mut chart = Chart::new(Axis::new("row", Ticks::Whole), Axis::new("θ", Ticks::Value));
        let line: Vec<(f64, f64)> = (0..400)
            .map(|i| (i as f64, ((i * 37) % 11) as f64))
            .collect();
        chart.mark(
            Mark::Line {
                points: line,
                width: 2,
            },
            Colour::series(0),
        );
        let svg = chart.svg((320, 200)).unwrap();
        let longest = svg
            .split("points=\"")
            .skip(1)
            .map(|p| p.split('"').next().unwrap().split_whitespace().count())
            .max()
            .unwrap();
        assert!((200..300).contains(&longest), "{longest} points");
    }

    #[test]
    fn runs_of_two_point_polylines_become_one_path_and_nothing_else_changes() {
        let dash = |x: u32, colour: &str| {
            format!(
                "<polyline fill=\"none\" stroke=\"{colour}\" points=\"{x},5 {},5 \"/>\n",
                x + 3
            )
        };
        let line = "<polyline fill=\"none\" stroke=\"#000000\" points=\"1,1 2,2 3,3 \"/>\n";
        let text = "<text x=\"1\">a</text>\n";
        let svg = [
            dash(0, "#808080"),
            dash(5, "#808080"),
            dash(10, "#808080"),
            dash(20, "#CC3333"),
            text.to_string(),
            dash(30, "#CC3333"),
            line.to_string(),
        ]
        .concat();
        assert_eq!(
            merge_segments(&svg),
            [
                "<path fill=\"none\" stroke=\"#808080\" d=\"M0,5L3,5M5,5L8,5M10,5L13,5\"/>\n",
                "<path fill=\"none\" stroke=\"#CC3333\" d=\"M20,5L23,5\"/>\n",
                text,
                "<path fill=\"none\" stroke=\"#CC3333\" d=\"M30,5L33,5\"/>\n",
                line,
            ]
            .concat()
        );
    }

    /// The text elements of an SVG document, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>'))
            .map(|(_, rest)| {
                rest.split("</text>")
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn a_chart_has_axes_ticks_marks_and_an_escaped_legend() {
        let mut c = Chart::new(
            Axis::new("iteration", Ticks::Whole),
            Axis::new("Elo", Ticks::Signed),
        );
        let line: Vec<(f64, f64)> = (0..=10)
            .map(|k| (k as f64 * 10.0, k as f64 * 5.0))
            .collect();
        c.labelled(
            Mark::Line {
                points: line,
                width: 2,
            },
            Colour::BLUE,
            "<script>x</script>",
        )
        .mark(
            Mark::Rule {
                y: -20.0,
                in_frame: true,
            },
            Colour::GREY,
        )
        .mark(
            Mark::Rule {
                y: 1e6,
                in_frame: false,
            },
            Colour::RED,
        );
        c.legend = Legend::LowerRight;
        let svg = c.svg((700, 400)).unwrap();
        let t = texts(&svg);
        assert!(
            t.contains(&"iteration".to_string()) && t.contains(&"Elo".to_string()),
            "{t:?}"
        );
        assert!(
            t.contains(&"+50".to_string()) && t.contains(&"-20".to_string()),
            "{t:?}"
        );
        assert!(t.contains(&"100".to_string()), "{t:?}");
        assert!(svg.contains("&lt;script&gt;x&lt;/script&gt;") && !svg.contains("<script>"));
        // The line keeps every point; the rule in frame is drawn, the one far outside is not.
        let longest = svg
            .split("points=\"")
            .skip(1)
            .map(|p| p.split('"').next().unwrap().split_whitespace().count())
            .max();
        assert_eq!(longest, Some(11));
        assert!(svg.contains(&format!("stroke=\"#{:02X}{:02X}{:02X}\"", 128, 128, 128)));
        assert!(!svg.contains(&format!("stroke=\"#{:02X}{:02X}{:02X}\"", 204, 51, 51)));
    }

    #[test]
    fn ticks_read_as_their_axis_says() {
        assert_eq!(Ticks::Whole.text(1234.4), "1234");
        assert_eq!(Ticks::Signed.text(12.0), "+12");
        assert_eq!(Ticks::Ago { end: 400.0 }.text(100.0), "−5m00s");
        assert_eq!(Ticks::Ago { end: 400.0 }.text(400.0), "now");
        assert_eq!(Colour::series(11).css(), "#ff7f0e");
    }

    #[test]
    fn an_empty_or_flat_chart_still_has_a_frame() {
        let c = Chart::new(Axis::new("x", Ticks::Whole), Axis::new("y", Ticks::Value));
        assert_eq!(c.frame().0, (0.0, 1.0));
        let mut flat = c.clone();
        flat.min_y_span = 2.0;
        flat.mark(Mark::Dots(vec![(5.0, 3.0)]), Colour::BLUE);
        let ((x0, x1), (y0, y1)) = flat.frame();
        assert_eq!((x0, x1), (5.0, 6.0));
        assert!(y0 < 2.0 && y1 > 4.0, "{y0} {y1}");
        let dir = tempfile::tempdir().unwrap();
        for name in ["f.png", "f.svg"] {
            flat.draw(&dir.path().join(name), (600, 300)).unwrap();
        }
        assert!(flat.draw(&dir.path().join("f.gif"), (600, 300)).is_err());
        // A folder that is not there: the user's error, naming the folder; nothing made.
        for name in ["f.png", "f.svg"] {
            let file = dir.path().join("no-such-folder").join(name);
            let e = flat.draw(&file, (600, 300)).unwrap_err();
            assert!(
                e.downcast_ref::<crate::report::ReportError>().is_some(),
                "{e:#}"
            );
            assert!(
                format!("{e:#}").contains("no-such-folder to write the plot in"),
                "{e:#}"
            );
        }
        assert!(!dir.path().join("no-such-folder").exists());
    }
}
